"""Snippets that were said: each claim's snippet is looked up in the turns the model
read, and the claim records who said it.

Matching is fuzzy, so a snippet with a corrected typo or folded spacing counts as
said. A snippet that retells one turn in other words (models paraphrase) is replaced
by the sentences of that turn it retells, with a note: what is stored as someone's
words is always what they said. A snippet found in no turn is dropped with a note. A snippet only
the assistant said is kept only where the user's next turn confirms it ("yes",
"exactly", "that's right"), and is marked so; otherwise it is dropped."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from pegasus.model import name_key
from pegasus.text import content_words, is_content, words
from pegasus.write.clean import Batch, Entity, Relation, is_placeholder
from pegasus.write.transcript import Turn

SAID_AT = 90  # rapidfuzz partial ratio: a few letters changed in a sentence
TYPO_AT = 85  # the same for a name or a value: one letter changed in eight
RETOLD_AT = 0.6  # share of a snippet's content words one turn holds, for a retelling
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*")
BRACKETED = re.compile(r"\([^()]*\)")
# Dates and how a value stands in time are the extractor's own work (the prompt asks
# for them): "shortly before 2026-09-14", "ongoing", "as of 2026-09".
DATES = re.compile(
    r"\b(?:(?:19|20)\d{2}(?:-\d{2}){0,2}|as of|shortly|before|after|since|until|ongoing|upcoming"
    r"|planned|about|around|early|late|mid|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct"
    r"|nov|dec)\b",
    re.IGNORECASE,
)
AMOUNT = re.compile(r"\d+(?:[.,]\d+)?[kKmMbB]?(?![\w])")
MULTIPLIERS = {"k": "thousand", "m": "million", "b": "billion"}
NUMBER_WORDS = {"1": ("a", "one"), "2": ("two",), "3": ("three",), "4": ("four",),
                "5": ("five",), "10": ("ten",), "100": ("a hundred", "one hundred")}  # fmt: skip
AMOUNTS = frozenset({"hundred", "thousand", "million", "billion", "dozen", "half"})
ENDING = re.compile(r"(?:ing|ed|(?<=ss)es|(?<!s)es|(?<!s)s|e)$")
GROUNDED_AT = 0.4  # share of a name's or value's content words said in the conversation
SAID_BY = "said_by"  # the relation property that records the speaker
CONFIRMS = re.compile(
    r"^\W*(yes|yeah|yep|yup|right|exactly|correct|true|indeed|sure|absolutely|"
    r"that'?s (right|correct|true|it))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Said:
    speaker: str  # the speaker's name, "user" or "assistant"
    turn: int  # index into the turns searched
    score: float
    words: str = ""  # what was said, when the snippet retold it in other words


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def said_where(snippet: str, turns: Sequence[Turn]) -> Said | None:
    """The turn ``snippet`` was copied from, preferring a speaker over the assistant
    when both said it; None when nobody said anything close to it. A snippet that
    joins passages with an ellipsis counts as said when every passage was."""
    parts = [part for part in ELLIPSIS.split(snippet) if part.strip()]
    if len(parts) > 1:
        found = [said_where(part, turns) for part in parts]
        return None if None in found else found[0]
    wanted = _folded(snippet)
    if not wanted:
        return None
    best: Said | None = None
    for index, turn in enumerate(turns):
        score = fuzz.partial_ratio(wanted, _folded(turn.content))
        if score < SAID_AT:
            continue
        found = Said(turn.speaker or turn.role, index, score)
        rank = (turn.role == "user", score)
        if best is None or rank > (turns[best.turn].role == "user", best.score):
            best = found
    return best or retold(snippet, turns)


def _stems(text: str) -> set[str]:
    return {word[:4] for word in content_words(text)}


def retold(snippet: str, turns: Sequence[Turn]) -> Said | None:
    """A snippet that says in other words what one turn said (most of its content
    words are that turn's): the passage of the turn it retells, to the sentence."""
    wanted = _stems(snippet)
    if not wanted:
        return None
    share, index = max(
        ((len(wanted & _stems(turn.content)) / len(wanted), i) for i, turn in enumerate(turns)
         if turn.role == "user" or turn.speaker),
        default=(0.0, -1),
    )  # fmt: skip
    if share < RETOLD_AT:
        return None
    sentences = [part for part in SENTENCE.split(turns[index].content) if part.strip()]
    windows = [
        " ".join(sentences[i : i + size])
        for size in (1, 2, 3)
        for i in range(len(sentences) - size + 1)
    ]

    def likeness(window: str) -> float:  # cosine of the two sets of word stems
        held = _stems(window)
        return len(wanted & held) / ((len(wanted) * len(held)) ** 0.5 or 1)

    return Said(turns[index].speaker or turns[index].role, index, share * 100,
                max(windows, key=likeness))  # fmt: skip


def confirmed(turns: Sequence[Turn], index: int) -> bool:
    """Whether the user's turn right after turn ``index`` agrees with it."""
    following = next((t for t in turns[index + 1 :] if t.role == "user"), None)
    return following is not None and bool(CONFIRMS.match(following.content))


def attribute(relations: list[Relation], turns: Sequence[Turn]) -> tuple[list[Relation], list[str]]:
    """The relations whose snippets were said, each with ``said_by``; and notes for
    those dropped."""
    kept: list[Relation] = []
    notes: list[str] = []
    for relation in relations:
        what = f"relation {relation.source} -{relation.relation}-> {relation.target}"
        said = said_where(relation.snippet, turns)
        if said is None:
            notes.append(f"{what}: dropped, its snippet was said in no turn")
            continue
        speaker = said.speaker
        if said.words:
            notes.append(
                f"{what}: its snippet retold turn {said.turn + 1}; the words said are kept"
            )
            relation.snippet = said.words
        if turns[said.turn].role == "assistant":
            if not confirmed(turns, said.turn):
                notes.append(f"{what}: dropped, only the assistant said it")
                continue
            speaker = "assistant, confirmed by the user"
        relation.properties = {**relation.properties, SAID_BY: speaker}
        kept.append(relation)
    return kept, notes


class Heard:
    """What the user and the other people said in some turns (the assistant's words
    are not evidence), to ask whether a name or a value rests on it. Dates and how a
    value stands in time are the extractor's own work and are not looked for."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.spoken = [_folded(t.content) for t in turns if t.role == "user" or t.speaker]
        self.names: set[str] = set()  # words of names taken as said (:meth:`take_as_said`)
        self.stems = set().union(*map(_telling, self.spoken))
        # A speaker's "my dog" names them: "Nate's dog", from Nate's turn.
        self.take_as_said({t.speaker for t in turns if t.speaker})

    def take_as_said(self, names: Iterable[str]) -> None:
        found = set().union(*map(_telling, names))
        self.names |= found
        self.stems |= found

    def phrase(self, words: str) -> bool:
        """Said as it is, as whole words, or with a typo in a longer word."""
        folded = _folded(words)
        whole = re.compile(rf"(?<!\w){re.escape(folded)}(?!\w)")
        if any(whole.search(text) for text in self.spoken):
            return True
        return len(folded) >= 6 and any(fuzz.partial_ratio(folded, t) >= TYPO_AT
                                        for t in self.spoken)  # fmt: skip

    def name(self, name: str, context: str = "") -> bool:
        """A name: said, or, for a name of several words, every word of it said (or in
        ``context``, the name an alias restates: "workplace autonomy" for "Agency
        (workplace autonomy)")."""
        if self.phrase(name) or _letters(name) == _letters(context):  # "NovaAI"
            return True
        wanted, restated = _telling(name), _telling(context)
        if wanted and wanted <= restated:
            return True
        return len(words(name)) > 1 and bool(wanted) and wanted <= self.stems | restated

    def value(self, value: str) -> bool:
        """A property's value: said, or with its names and numbers said and
        ``GROUNDED_AT`` of its other words, in the whole or in brackets (what was
        said, "Chief Financial Officer (CFO)", or a note, "(as of 2026-09)")."""
        parts = [BRACKETED.sub(" ", value), *BRACKETED.findall(value)]
        bare = [DATES.sub(" ", part.strip("()")).strip() for part in parts]
        if not any(bare):
            return True  # a date alone
        for said in filter(None, bare):
            if self.phrase(said):
                return True
            wanted = _telling(said)
            if not all(map(self._exact, [*said.split()[1:], *AMOUNT.findall(said)])):
                continue  # a name or a number nobody said
            if not wanted or len(wanted & self.stems) / len(wanted) >= GROUNDED_AT:
                return True  # only function words ("yes", "not yet"): nothing invented
        return False

    def _exact(self, word: str) -> bool:
        """A number or a capitalised word of a value (a name, not an acronym such as
        "USD") must be said as it is, or be one of :attr:`names`; any other word
        passes here."""
        if AMOUNT.fullmatch(word):  # "$2M" may have been said "two million dollars"
            digits, scale = word.rstrip("kKmMbB"), MULTIPLIERS.get(word[-1:].lower())
            forms = [rf"(?<![\d.,]){re.escape(digits)}(?!\d)"]
            if scale:
                forms += [rf"\b{said} {scale}" for said in NUMBER_WORDS.get(digits, ())]
            return any(re.search(form, text) for form in forms for text in self.spoken)
        word = word.strip(",.;:!?()").removesuffix("'s").removesuffix("’s")
        if not word[:1].isupper() or word.isupper():
            return True
        return self.phrase(word) or _telling(word) <= self.names


def _letters(text: str) -> str:
    return re.sub(r"\W", "", text).casefold()


def _telling(text: str) -> set[str]:
    """Rough stems of the words that say something, amounts in words included
    ("hundred"; numbers are checked as they are): "making" and "make" meet."""
    return {ENDING.sub("", word.removesuffix("'s"))[:5] for word in words(text)
            if word in AMOUNTS or is_content(word) and not AMOUNT.fullmatch(word)}  # fmt: skip


def ground(batch: Batch, turns: Sequence[Turn]) -> list[str]:
    """Keeps of ``batch``'s entities only what the conversation says: an entity that
    no kept relation uses and no turn names is dropped, and so is an alias nobody
    said or a property value that rests on nothing said; returns the notes. Run
    after :func:`attribute`, so that the relations are the kept ones."""
    ends = [name for r in batch.relations for name in (r.source, r.target)]
    heard, used = Heard(turns), {name_key(name) for name in ends}
    notes: list[str] = []
    kept: list[Entity] = []
    for entity in batch.entities:
        claimed = any(name_key(name) in used for name in entity.names)
        named = not entity.provisional and any(map(heard.name, entity.names))
        if claimed or named or is_placeholder(entity.name):
            kept.append(entity)
        else:
            notes.append(f"entity {entity.name!r}: dropped, no turn names it and no claim uses it")
    # The entities kept are names a value may use ("extended to Trevor").
    heard.take_as_said([*ends, *(entity.name for entity in kept)])
    for entity in kept:
        if is_placeholder(entity.name):
            continue
        unsaid = [alias for alias in entity.aliases if not heard.name(alias, entity.name)]
        if unsaid:
            entity.aliases = [alias for alias in entity.aliases if alias not in unsaid]
            notes.append(f"entity {entity.name!r}: aliases {unsaid} dropped, said in no turn")
        for key, value in list(entity.properties.items()):
            if not heard.value(value):
                del entity.properties[key]
                notes.append(f"entity {entity.name!r}: property {key}={value!r} dropped, "
                             "said in no turn")  # fmt: skip
    batch.entities = kept
    return notes

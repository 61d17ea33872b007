"""Words and names as both the write path and recall read them: a text's content
words and the phrases they form (so that "red tape" can meet "bureaucracy"), and the
other forms of a person's name."""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from nicknames import NickNamer
from stop_words import get_stop_words

from pegasus.model import name_key

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
MAX_PHRASE = 3


@cache
def stop_words() -> frozenset[str]:
    """Function words and the generic verbs and adverbs that carry no topic."""
    words = {w.replace("’", "'") for w in get_stop_words("en")}
    return frozenset(words)


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    return WORD.findall(text)


def is_content(word: str) -> bool:
    return len(word) > 1 and word not in stop_words() and not word.isdigit()


def content_words(text: str) -> list[str]:
    """Lower-case content words, first occurrence order, no duplicates."""
    return list(dict.fromkeys(w for w in words(text) if is_content(w)))


def phrases(text: str, longest: int = MAX_PHRASE) -> list[str]:
    """Runs of 2..``longest`` adjacent content words ("pay hike", "red tape")."""
    found: list[str] = []
    run: list[str] = []
    for word in [*words(text), ""]:
        if word and is_content(word):
            run.append(word)
            continue
        for size in range(2, longest + 1):
            for start in range(len(run) - size + 1):
                found.append(" ".join(run[start : start + size]))
        run = []
    return list(dict.fromkeys(found))


FIRST_PERSON_POSSESSIVES = frozenset({"my", "our"})


def possessive_phrases(text: str, owner: str) -> list[str]:
    """'my boss' -> "Trevor's boss": memories describe the user by name, while the
    user says "my". Each possessive is followed by its run of content words."""
    tokens = words(text)
    found: list[str] = []
    for index, token in enumerate(tokens):
        if token not in FIRST_PERSON_POSSESSIVES:
            continue
        run: list[str] = []
        for word in tokens[index + 1 : index + 1 + MAX_PHRASE]:
            if not is_content(word):
                break
            run.append(word)
        if run:
            found.append(f"{owner}'s {' '.join(run)}")
    return list(dict.fromkeys(found))


@cache
def _namer() -> NickNamer:
    return NickNamer()


def fold(name: str) -> str:
    return name_key(name)


def nickname_forms(name: str) -> set[str]:
    """Other forms of a person's name by its first word: 'Bill Smith' ->
    {'william smith', 'will smith', ...} (the maintained nicknames dataset)."""
    parts = fold(name).split(" ")
    first, rest = parts[0], parts[1:]
    namer = _namer()
    related = namer.nicknames_of(first) | namer.canonicals_of(first)
    for canonical in namer.canonicals_of(first):
        related |= namer.nicknames_of(canonical)
    related.discard(first)
    return {" ".join([form, *rest]) for form in related}


def formal_names(first_name: str) -> set[str]:
    """The formal names a nickname stands for ('bill' -> {'william'}); for a formal
    name, its usual nicknames ('william' -> {'bill', 'will', ...})."""
    namer = _namer()
    word = fold(first_name)
    return (namer.canonicals_of(word) or namer.nicknames_of(word)) - {word}

"""Cues beyond names: claims found by what they say.

Every claim has a key of its own (its line and snippet, see ``recall.keys``). A
message reaches a claim two ways: by meaning (the whole message embedded, compared
with the claim keys) and by words (full-text search over the claim keys for the
message's uncommon words). The two rankings are fused by reciprocal rank, and each
is gated so that a message about nothing in memory reaches nothing: a meaning match
must clear an absolute cosine, a word must be uncommon in everyday English."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from pegasus.model import CLAIM_KEY, EmbeddingKey
from pegasus.recall.presets import RecallSettings
from pegasus.stores import Store
from pegasus.text import content_words, formal_names
from pegasus.text import words as text_words

NAMES = re.compile(r"\b[A-Z][a-z]+\b")  # capitalised words: maybe someone's first name
RRF_K = 10  # a small constant: the first few places of each ranking count most
MEANING, WORDS = "meaning", "words"


@cache
def _zipf(word: str) -> float:
    import wordfreq

    return wordfreq.zipf_frequency(word, "en")


def telling_words(message: str, most_common: float) -> list[str]:
    """The message's content words that are not everyday words (Zipf frequency
    below ``most_common``): "hike", "Rockies", "pottery", not "good" or "time"."""
    return [w for w in content_words(message) if _zipf(w) < most_common]


def _stem(word: str) -> str:
    # Word forms share their first letters ("sails", "sailboat"; "hiking", "hike"):
    # near enough to say which words a claim shares with a message.
    return word[:4] if len(word) > 4 else word


def stems(text: str) -> set[str]:
    """The stems of a text's content words."""
    return {_stem(word) for word in content_words(text)}


@dataclass
class ClaimCue:
    """How a message reached one claim."""

    edge_id: str
    score: float = 0.0  # fused, 0..1: 1 is first place in both rankings
    meaning: float | None = None  # cosine of the message with the claim key
    words: list[str] = field(default_factory=list)  # telling words the claim holds
    ranks: dict[str, int] = field(default_factory=dict)  # place in each ranking, from 1

    @property
    def kinds(self) -> list[str]:
        return list(self.ranks)


def claims_meant(
    store: Store, user: str, vector: np.ndarray, message: str, settings: RecallSettings
) -> list[tuple[EmbeddingKey, float]]:
    """The claim keys the message (embedded whole as ``vector``) reaches by meaning,
    best first, with their cosine."""
    found = store.search_keys(user, vector.tolist(), settings.claim_candidates, (CLAIM_KEY,))
    said = stems(message)
    # A close match counts alone; a looser one with a word of the message in the
    # claim ("sails" and "sailboat"), or as the clear winner over every other claim.
    # General questions resemble many claims a little and none clearly.
    clear = len(found) > 1 and found[0][1] - found[1][1] >= settings.claim_margin
    return [
        (key, score)
        for place, (key, score) in enumerate(found)
        if score >= settings.claim_sure
        or (score >= settings.claim_threshold
            and (said & stems(key.text) or (place == 0 and clear)))
    ]  # fmt: skip


def claims_worded(
    store: Store, user: str, message: str, settings: RecallSettings
) -> list[tuple[EmbeddingKey, list[str]]]:
    """The claim keys the message reaches by its telling words, best first, with the
    words each holds."""
    words = telling_words(message, settings.common_word_zipf)
    # A person named by a nickname is found under the formal name, and back.
    words += [form for name in NAMES.findall(message) for form in sorted(formal_names(name))]
    if not words:
        return []
    worded = []
    for key, _ in store.search_words(user, words, settings.claim_candidates):
        held = {_stem(word) for word in text_words(key.text)}
        matched = [w for w in words if _stem(w) in held]
        # One middling word ("offered") is no cue; a rare one, or several, are.
        if sum(settings.common_word_zipf - _zipf(w) for w in matched) >= settings.words_gate:
            worded.append((key, matched))
    return worded


def fused(
    meant: list[tuple[EmbeddingKey, float]], worded: list[tuple[EmbeddingKey, list[str]]]
) -> dict[str, ClaimCue]:
    """Edge id -> cue: the two rankings fused by reciprocal rank."""
    cues: dict[str, ClaimCue] = {}
    for place, (key, score) in enumerate(meant, start=1):
        entry = cues.setdefault(key.ref, ClaimCue(key.ref))
        entry.meaning, entry.ranks[MEANING] = round(score, 4), place
    for place, (key, matched) in enumerate(worded, start=1):
        entry = cues.setdefault(key.ref, ClaimCue(key.ref))
        entry.words, entry.ranks[WORDS] = matched, place
    for entry in cues.values():
        score = sum(1.0 / (RRF_K + place) for place in entry.ranks.values())
        entry.score = round(score * (RRF_K + 1) / 2, 4)
    return cues

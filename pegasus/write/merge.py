"""Merge rules: is a proposed entity a new sighting of a stored node? (SPEC 3.3)

Deterministic and cautious. Only nodes of the same kind are compared; a sure match
merges, several sure matches or a mere resemblance go to review, nothing at all
means new. Merging two different people destroys both, so resemblance alone never
merges."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from rapidfuzz.distance import Levenshtein

from pegasus.model import Kind, Node
from pegasus.text import fold, nickname_forms, words

EDIT_SIMILARITY = 0.80  # one minus normalised edit distance, above which names resemble
WORD_SHARE = 0.5  # share of each name's words in common, at or above which they resemble


class Action(StrEnum):
    MERGE = "merge"
    REVIEW = "review"
    NEW = "new"


@dataclass(frozen=True)
class Decision:
    action: Action
    rule: str  # exact, alias, nickname, resemblance, hint, none
    target: str | None = None  # the node to merge into
    candidates: tuple[str, ...] = field(default=())  # nodes for review


def edit_similarity(a: str, b: str) -> float:
    return Levenshtein.normalized_similarity(fold(a), fold(b))


def words_overlap(a: str, b: str) -> bool:
    """One name's words contain the other's, or they share half the words of each."""
    wa, wb = set(words(a)), set(words(b))
    if not wa or not wb:
        return False
    shared = len(wa & wb)
    return (
        wa <= wb or wb <= wa or (shared >= WORD_SHARE * len(wa) and shared >= WORD_SHARE * len(wb))
    )


def _sure(ids: list[str], rule: str) -> Decision | None:
    ids = list(dict.fromkeys(ids))
    if len(ids) == 1:
        return Decision(Action.MERGE, rule, target=ids[0])
    if ids:
        return Decision(Action.REVIEW, rule, candidates=tuple(ids))
    return None


def decide(name: str, kind: Kind, stored: Iterable[Node], hints: Sequence[str] = ()) -> Decision:
    """The rule that fires first for ``name`` among the ``stored`` nodes (any kind is
    passed in; only ``kind`` counts). ``hints`` are names the extractor guessed this
    might be: they can send an entity to review, never merge it."""
    pool = [node for node in stored if node.kind == kind]
    key = fold(name)
    decision = _sure([n.id for n in pool if fold(n.name) == key], "exact") or _sure(
        [n.id for n in pool if key in {fold(a) for a in n.aliases}], "alias"
    )
    if decision is None and kind == Kind.PERSON:
        forms = nickname_forms(name)
        decision = _sure([n.id for n in pool if forms & {fold(x) for x in n.names}], "nickname")
    if decision is not None:
        return decision
    alike = [
        n.id
        for n in pool
        if any(
            edit_similarity(name, x) > EDIT_SIMILARITY or words_overlap(name, x) for x in n.names
        )
    ]
    hinted = {fold(h) for h in hints if h}
    alike += [n.id for n in pool if hinted & {fold(x) for x in n.names}]
    if alike:
        return Decision(Action.REVIEW, "resemblance", candidates=tuple(dict.fromkeys(alike)))
    return Decision(Action.NEW, "none")

"""From query units to seed nodes.

Each unit (a content word, or with phrases a run of them) is embedded and compared
with the stored keys after subtracting the owner's key mean (embedding spaces are
anisotropic: unrelated pairs already score well above zero). With an
ordinariness weight, scores follow CSLS: ``2·cos − r_query − r_key`` where ``r`` is
a text's mean similarity to its nearest everyday words, so keys and query words
that resemble everything must resemble each other more than that to count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pegasus.model import EmbeddingKey
from pegasus.recall.presets import RecallSettings


@dataclass(frozen=True)
class Hit:
    unit: str
    key: EmbeddingKey
    score: float


@dataclass(frozen=True)
class Seeds:
    nodes: dict[str, float]  # node id -> seed activation
    relations: dict[str, float]  # relation label -> best score
    hits: list[Hit]  # every accepted match, best first


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def centred_scores(query: np.ndarray, keys: np.ndarray, mean: np.ndarray | None) -> np.ndarray:
    """Cosine of each key row with the query after subtracting ``mean`` from both."""
    if mean is not None:
        query, keys = query - mean, keys - mean
    return unit_rows(np.atleast_2d(keys)) @ unit_rows(query[None, :])[0]


def csls(cos: np.ndarray, r_query: float, r_keys: np.ndarray, weight: float) -> np.ndarray:
    """Cross-domain similarity local scaling, blended in by ``weight`` (0 = plain cos)."""
    return cos + weight * (cos - r_query - r_keys) if weight else cos


def accept(scored: Sequence[tuple[EmbeddingKey, float]], settings: RecallSettings) -> list:
    """The hits a unit seeds: every one at or above the threshold, or else a clear
    winner that beats its runner-up by the margin."""
    ranked = sorted(scored, key=lambda pair: -pair[1])
    if not ranked:
        return []
    above = [pair for pair in ranked if pair[1] >= settings.seed_threshold]
    if above:
        # One word is one cue: it may name a few things, not every key like it.
        return above[: settings.hits_per_unit] if settings.hits_per_unit else above
    top = ranked[0][1]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    if top >= settings.clear_winner_floor and top - runner_up >= settings.clear_winner_margin:
        return ranked[:1]
    return []


def seed_activation(score: float, settings: RecallSettings) -> float:
    """Full activation for the baseline; with graded seeds, a threshold match starts
    at 0.5 and a match one threshold above it at full strength."""
    if not settings.graded_seeds:
        return 1.0
    return float(np.clip(0.5 + 0.5 * (score - settings.seed_threshold) / 0.25, 0.5, 1.0))


def collect(hits: list[Hit], settings: RecallSettings) -> Seeds:
    nodes: dict[str, float] = {}
    relations: dict[str, float] = {}
    for hit in hits:
        if hit.key.kind == "node":
            value = seed_activation(hit.score, settings)
            nodes[hit.key.ref] = max(nodes.get(hit.key.ref, 0.0), value)
        else:
            relations[hit.key.ref] = max(relations.get(hit.key.ref, 0.0), hit.score)
    return Seeds(nodes, relations, sorted(hits, key=lambda h: -h.score))

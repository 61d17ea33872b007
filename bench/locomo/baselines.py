"""Retrieval over the raw transcript, the yardstick recall must beat: BM25 and dense
retrieval (the same embedder as Pegasus) over turns, their reciprocal-rank fusion,
and BM25 over the graph's own claims (line and snippet, no spreading). Each fills
the same token budget as Pegasus's block for the question."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from pegasus.embed import Embedder
from pegasus.recall.inject import tokens
from pegasus.text import words

RRF_K = 60  # the usual constant of reciprocal-rank fusion


def bm25_terms(text: str) -> list[str]:
    return words(text)


class Ranker:
    """BM25 and dense rankings over a fixed list of texts."""

    def __init__(self, texts: Sequence[str], embedder: Embedder) -> None:
        self.texts = list(texts)
        self.costs = [tokens(text) + 1 for text in self.texts]
        self.bm25 = BM25Okapi([bm25_terms(text) or ["_"] for text in self.texts])
        self.embedder = embedder
        vectors = embedder.embed_batch(self.texts)
        self.vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def by_words(self, query: str) -> list[int]:
        scores = self.bm25.get_scores(bm25_terms(query))
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    def by_meaning(self, query: str) -> list[int]:
        vector = self.embedder.embed(query)
        scores = self.vectors @ (vector / np.linalg.norm(vector))
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    def fused(self, query: str) -> list[int]:
        score: dict[int, float] = {}
        for ranking in (self.by_words(query), self.by_meaning(query)):
            for rank, index in enumerate(ranking):
                score[index] = score.get(index, 0.0) + 1.0 / (RRF_K + rank + 1)
        return sorted(score, key=lambda i: -score[i])

    def within(self, ranking: list[int], budget: int) -> list[int]:
        """The best-ranked texts that fit in ``budget`` tokens (one too long is skipped)."""
        taken, spent = [], 0
        for index in ranking:
            if spent + self.costs[index] <= budget:
                taken.append(index)
                spent += self.costs[index]
            if spent >= budget:
                break
        return taken

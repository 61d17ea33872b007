"""The embedding cache: each text embedded once, batches larger than the cache."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pegasus.embed import CachedEmbedder, Embedder


class Counting(Embedder):
    """One-hot rows by text length; counts the texts it was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.asked += texts
        return np.vstack([np.eye(8, dtype=np.float32)[len(t) % 8] for t in texts])


def test_a_batch_larger_than_the_cache_comes_back_whole() -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, size=3)
    texts = ["a", "bb", "ccc", "dddd", "eeeee", "bb"]
    rows = cached.embed_batch(texts)
    assert rows.shape == (6, 8)
    assert [int(r.argmax()) for r in rows] == [len(t) for t in texts]
    assert inner.asked == ["a", "bb", "ccc", "dddd", "eeeee"]  # the repeat embedded once


def test_cached_texts_are_not_embedded_again() -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, size=3)
    cached.embed_batch(["x", "yy"])
    rows = cached.embed_batch(["yy", "zzz", "x"])
    assert [int(r.argmax()) for r in rows] == [2, 3, 1]
    assert inner.asked == ["x", "yy", "zzz"]

"""Embedders: text in, unit-length vectors out. One required method, ``embed_batch``."""

from __future__ import annotations

from functools import cache

from pegasus.embed.base import (
    CACHE_SIZE,
    DEFAULT_MODEL,
    MODEL_PACKAGE,
    CachedEmbedder,
    Embedder,
    SentenceTransformerEmbedder,
    bundled_path,
)

__all__ = [
    "CACHE_SIZE",
    "DEFAULT_MODEL",
    "MODEL_PACKAGE",
    "CachedEmbedder",
    "Embedder",
    "SentenceTransformerEmbedder",
    "bundled_path",
    "default_embedder",
    "make_embedder",
]


def make_embedder(model: str = DEFAULT_MODEL, runtime: str = "onnx") -> Embedder:
    """The model run by ONNX Runtime (the default: same vectors, faster) or by torch."""
    if runtime == "torch":
        return SentenceTransformerEmbedder(model)
    from pegasus.embed.onnx import OnnxEmbedder

    return OnnxEmbedder(model)


@cache
def default_embedder(model: str | None = None, runtime: str = "onnx") -> Embedder:
    """One cached embedder per model, runtime and process: the weights load once."""
    return CachedEmbedder(make_embedder(model or DEFAULT_MODEL, runtime))

"""How fast this machine runs a recall's two heaviest steps at the moment.

Service figures move with the machine: one client's recalls per second at 1k
edges on SQLite ranged from 59 to 106 from run to run over two days. A run records
this pace beside its figures, at its start and at its end, so that runs on
machines of different speed can be told apart."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from bench.overrides import median_ms
from pegasus.embed import DEFAULT_MODEL
from pegasus.embed.onnx import OnnxEmbedder

SENTENCE = "I talked with my sister about the sailing trip we planned for next summer."
KEYS = 100_000  # claim keys of a 100k-edge memory
DIMENSIONS = 384


def pace(runs: int = 50) -> dict[str, float]:
    """p50 ms of the model on one sentence (uncached, its default threads) and of one
    query multiplied with 100k keys in float32 on one thread, as the service does."""
    model = OnnxEmbedder(DEFAULT_MODEL)
    keys = np.random.default_rng(0).standard_normal((DIMENSIONS, KEYS)).astype(np.float32)
    query = keys[:, :1].T.copy()
    model.embed_batch([SENTENCE])  # loads the model
    with threadpool_limits(1, user_api="blas"):
        product = median_ms(lambda: query @ keys, runs)
    return {
        "model_ms": median_ms(lambda: model.embed_batch([SENTENCE]), runs),
        "product_ms": product,
    }

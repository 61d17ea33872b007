"""How fast this machine runs a recall's two heaviest steps at the moment.

Service figures move with the machine: on the same code, one client's recalls per
second at 1k edges on SQLite ranged from 59 to 106 over three days. A run records
this pace beside its figures, at its start and at its end, so that runs on
machines of different speed can be told apart."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from pegasus.embed import DEFAULT_MODEL
from pegasus.embed.onnx import OnnxEmbedder

SENTENCE = "I talked with my sister about the sailing trip we planned for next summer."
KEYS = 100_000  # claim keys of a 100k-edge memory
DIMENSIONS = 384


def _p50_ms(work: Callable[[], object], runs: int) -> float:
    work()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def pace(runs: int = 50) -> dict[str, float]:
    """p50 ms of the model on one sentence (uncached, its default threads) and of one
    query multiplied with 100k keys in float32 on one thread, as the service does."""
    model = OnnxEmbedder(DEFAULT_MODEL)
    keys = np.random.default_rng(0).standard_normal((DIMENSIONS, KEYS)).astype(np.float32)
    query = keys[:, :1].T.copy()
    with threadpool_limits(1, user_api="blas"):
        product = _p50_ms(lambda: query @ keys, runs)
    return {"model_ms": _p50_ms(lambda: model.embed_batch([SENTENCE]), runs), "product_ms": product}

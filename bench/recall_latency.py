"""Warm recall latency, query embedding included: a fixed mix of messages that name
stored entities and messages that name nothing, timed one by one."""

from __future__ import annotations

import random
import statistics
import time

from pegasus.interchange import Graph
from pegasus.memory import Memory
from pegasus.recall.presets import DEFAULT, RecallSettings

WARM_UP = 50
GENERIC = [
    "Can you recommend a good pasta recipe?",
    "What's the weather like today?",
    "How do I fix a flat bicycle tyre?",
    "Tell me a joke about penguins.",
]


def messages(graph: Graph, count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    names = [node.name for node in graph.nodes[1:]]
    out = []
    for i in range(count):
        if i % 4 == 3:
            out.append(rng.choice(GENERIC))
        else:
            out.append(f"I talked with {rng.choice(names)} about {rng.choice(names)} yesterday.")
    return out


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def latency(
    memory: Memory, graph: Graph, queries: int, settings: RecallSettings = DEFAULT
) -> dict[str, float]:
    # Warm the model, the store's caches and (on Neo4j) the server's compiled
    # queries with other messages, so the timed ones are not already embedded.
    for message in messages(graph, WARM_UP, seed=5):
        memory.recall(message, settings=settings)
    probe = messages(graph, queries)
    timings, fired = [], []
    for message in probe:
        t = time.perf_counter()
        result = memory.recall(message, settings=settings)
        timings.append((time.perf_counter() - t) * 1000)
        fired.append(len(result.fired))
    return {
        "p50_ms": round(statistics.median(timings), 1),
        "p95_ms": round(percentile(timings, 0.95), 1),
        "mean_fired": round(statistics.mean(fired), 2),
    }

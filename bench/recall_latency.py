"""Warm recall latency (query embedding included) on synthetic graphs, both stores.

    python bench/recall_latency.py --sizes 1000 10000 100000 [--queries 200]

For each size: build the graph of bench/import_edges.py, import it, embed its keys
(not timed), then time ``Memory.recall`` for a fixed mix of messages that name
stored entities and messages that name nothing. Results go to
bench/results/recall_latency.json and a markdown table on standard output.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from bench.import_edges import RESULTS, synthetic_graph
from bench.stores import add_store_options, bench_store
from pegasus.embed import default_embedder
from pegasus.memory import Memory
from pegasus.stores import Store

GENERIC = [
    "Can you recommend a good pasta recipe?",
    "What's the weather like today?",
    "How do I fix a flat bicycle tyre?",
    "Tell me a joke about penguins.",
]


def messages(graph, count: int, seed: int = 11) -> list[str]:
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


def measure(store: Store, user: str, edges: int, queries: int) -> dict[str, float]:
    graph = synthetic_graph(edges)
    store.import_graph(user, graph)
    memory = Memory(store, user=user, embedder=default_embedder())
    t0 = time.perf_counter()
    memory.sync_keys()
    index_s = time.perf_counter() - t0
    probe = messages(graph, queries)
    for message in probe[:10]:  # warm: model, caches, page cache
        memory.recall(message)
    timings, fired = [], []
    for message in probe:
        t = time.perf_counter()
        result = memory.recall(message)
        timings.append((time.perf_counter() - t) * 1000)
        fired.append(len(result.fired))
    return {
        "edges": edges,
        "keys": store.stats(user).keys,
        "index_s": round(index_s, 1),
        "p50_ms": round(statistics.median(timings), 1),
        "p95_ms": round(percentile(timings, 0.95), 1),
        "mean_fired": round(statistics.mean(fired), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=200)
    add_store_options(parser)
    args = parser.parse_args()
    rows = []
    for size in args.sizes:
        for kind in args.stores:
            with bench_store(kind, args.neo4j) as (store, user):
                rows.append({"store": kind, **measure(store, user, size, args.queries)})
            print(json.dumps(rows[-1]), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "recall_latency.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("\n| store | edges | keys | p50 ms | p95 ms | mean fired |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['store']} | {r['edges']} | {r['keys']} | {r['p50_ms']} | {r['p95_ms']} | "
              f"{r['mean_fired']} |")  # fmt: skip


if __name__ == "__main__":
    main()

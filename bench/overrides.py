"""A store's own versions of the composed methods against the compositions of
``pegasus.stores.base`` on the same graph: whether each override earns its place.

    python -m bench.overrides --edges 10000 [--stores sqlite neo4j]

Prints one table (median ms of 5 runs) and writes bench/results/overrides.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.generator import generate
from bench.stores import add_store_options, bench_store
from pegasus.model import EmbeddingKey
from pegasus.stores import Changes, Store

RESULTS = Path(__file__).parent / "results"


def median_ms(call: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def measure(store: Store, user: str, edges: int) -> dict[str, tuple[float, float]]:
    data = generate(edges)
    graph = data.graph
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(len(graph.nodes), 384))
    keys = [
        EmbeddingKey(id=f"k{i}", text=n.name, ref=n.id, kind="node", vector=vectors[i].tolist())
        for i, n in enumerate(graph.nodes)
    ]
    store.apply(user, Changes.of_graph(graph, keys))
    hub = graph.nodes[0].id
    claims = [(e.source, e.relation, e.target) for e in graph.edges if e.source == hub][:50]
    relations = sorted({e.relation for e in graph.edges})[:3]
    calls = {
        "edges_meeting (50 claims at the user)": lambda cls: cls.edges_meeting(store, user, claims),
        "edges_with_relation (3)": lambda cls: cls.edges_with_relation(store, user, relations),
        "ranked_edges": lambda cls: cls.ranked_edges(store, user, True),
        "stats": lambda cls: cls.stats(store, user),
        "key_mean": lambda cls: cls.key_mean(store, user),
        "list_conversations": lambda cls: cls.list_conversations(store, user),
    }
    results = {}
    for name, call in calls.items():
        results[name] = (
            median_ms(lambda c=call: c(type(store))),
            median_ms(lambda c=call: c(Store)),
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", type=int, default=10_000)
    add_store_options(parser)
    args = parser.parse_args()
    results: dict[str, dict[str, tuple[float, float]]] = {}
    for kind in args.stores:
        with bench_store(kind, args.neo4j) as (store, user, _):
            results[kind] = measure(store, user, args.edges)
    print(f"| {args.edges} edges, ms (store's own / composition) | " + " | ".join(results) + " |")
    print("| --- |" + " --- |" * len(results))
    for name in next(iter(results.values())):
        cells = [f"{r[name][0]} / {r[name][1]}" for r in results.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "overrides.json").write_text(json.dumps({"edges": args.edges, **results}, indent=1))


if __name__ == "__main__":
    main()

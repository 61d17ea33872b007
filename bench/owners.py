"""A small owner's recall on Neo4j, alone and beside a large owner.

    python -m bench.owners [--small-edges 300] [--large-keys 400000]

The small owner is bench/generator.py's memory at --small-edges edges with its keys
embedded; its recall p50/p95 over bench/recall_latency.py's messages is timed both
ways the store can search it: in memory (what Pegasus does; --rounds rounds
--pause seconds apart, this machine's noise being large) and through the vector
indexes every owner shares (what it did before). Then a large owner's --large-keys
keys are written to the same database, the server is left --settle seconds to
finish its index merges, and both are timed again. The large owner's keys are real
embeddings of another generated memory's names and claims, each repeated with a
little noise so that they crowd the small owner's neighbourhoods as a real memory
of that size would. Last, with the large owner deleted and the server settled, the
small owner is timed in memory once more: the drift over the run. Growth compares
the median p50 of the rounds beside the large owner with that of the rounds alone.
Results go to bench/results/owners.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Iterator
from unittest import mock

import numpy as np

from bench.generator import generate
from bench.import_edges import RESULTS
from bench.recall_latency import latency
from bench.stores import add_settle_option, bench_store, settle
from pegasus.embed import default_embedder
from pegasus.memory import Memory
from pegasus.model import EmbeddingKey
from pegasus.recall.keys import expected_keys
from pegasus.stores import Changes

BASE_TEXTS = 20_000  # distinct texts embedded for the large owner
NOISE = 0.02  # per dimension: a copy keeps a cosine of about 0.93 with its text
WRITE_BATCH = 5_000


def in_memory(memory: Memory, queries: int, rounds: int, pause: float) -> list[dict]:
    """Recall latency in memory, several rounds apart (this machine's noise is large)."""
    graph, out = memory.export(), []
    for round_ in range(rounds):
        if round_:
            time.sleep(pause)
        out.append(latency(memory, graph, queries))
    return out


def through_index(memory: Memory, queries: int) -> dict:
    """Recall latency with no copy held: the shared indexes."""
    with mock.patch.object(memory.store, "_holding", False):
        return latency(memory, memory.export(), queries)


def median_p50(rounds: list[dict]) -> float:
    return statistics.median(r["p50_ms"] for r in rounds)


def large_keys(count: int, embedder, seed: int = 3) -> Iterator[list[EmbeddingKey]]:
    """The large owner's keys, a batch at a time (all at once would not fit in memory)."""
    other = generate(100_000, seed=seed).graph
    relations = {edge.relation for edge in other.edges}
    texts = list(expected_keys(other.nodes, relations, other.edges).values())
    rng = np.random.default_rng(seed)
    picked = [texts[i] for i in rng.choice(len(texts), min(BASE_TEXTS, len(texts)), replace=False)]
    base = embedder.embed_batch([text for text, _, _ in picked])
    for start in range(0, count, WRITE_BATCH):
        rows = np.arange(start, min(count, start + WRITE_BATCH))
        vectors = base[rows % len(picked)] + rng.normal(0, NOISE, (len(rows), base.shape[1]))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        yield [
            EmbeddingKey.model_construct(
                id=f"large|{i}", text=picked[i % len(picked)][0], ref=picked[i % len(picked)][1],
                kind=picked[i % len(picked)][2], vector=vector.tolist(),
            )
            for i, vector in zip(rows.tolist(), vectors, strict=True)
        ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small-edges", type=int, default=300)
    parser.add_argument("--large-keys", type=int, default=400_000)
    parser.add_argument("--queries", type=int, default=200)
    # Through the shared index beside a large owner a recall takes about a second.
    parser.add_argument("--index-queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pause", type=float, default=30, help="seconds between rounds")
    add_settle_option(parser)
    parser.add_argument("--neo4j", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    args = parser.parse_args()
    embedder = default_embedder(runtime="onnx")
    row: dict[str, object] = {"small_edges": args.small_edges, "large_keys": args.large_keys}
    with bench_store("neo4j", args.neo4j) as (store, small, _):
        store.apply(small, Changes.of_graph(generate(args.small_edges).graph))
        memory = Memory.open(store, user=small, embedder=embedder)
        memory.sync_keys()
        row["small_keys"] = store.stats(small).keys
        in_memory(memory, args.queries, 1, 0)  # warms the caches
        row["alone"] = in_memory(memory, args.queries, args.rounds, args.pause)
        row["alone, shared index"] = through_index(memory, args.queries)
        print(json.dumps(row), flush=True)
        with bench_store("neo4j", args.neo4j) as (_, large, _):
            started = time.perf_counter()
            for batch in large_keys(args.large_keys, embedder):
                store.apply(large, Changes(keys=batch))
            store._query("CALL db.awaitIndexes(3600)")
            row["large_write_s"] = round(time.perf_counter() - started, 1)
            # Measured: 39 s of the server's CPU in the first minute, under 1 s a minute
            # after. What is timed is the database as it then stays.
            settle("neo4j", args.settle)
            row["beside"] = in_memory(memory, args.queries, args.rounds, args.pause)
            row["beside, shared index"] = through_index(memory, args.index_queries)
            print(json.dumps(row), flush=True)
        # Alone again, the large owner deleted and the server settled: the drift.
        settle("neo4j", args.settle)
        row["alone_again"] = in_memory(memory, args.queries, args.rounds, args.pause)
    alone = median_p50(row["alone"] + row["alone_again"])
    row["in memory growth p50"] = round(median_p50(row["beside"]) / alone, 2)
    row["shared index growth p50"] = round(
        row["beside, shared index"]["p50_ms"] / row["alone, shared index"]["p50_ms"], 2
    )
    print(json.dumps(row), flush=True)
    (RESULTS / "owners.json").write_text(json.dumps(row, indent=2) + "\n")


if __name__ == "__main__":
    main()

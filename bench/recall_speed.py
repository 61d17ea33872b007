"""Warm recall latency by preset and embedding runtime, on the same graph.

    python -m bench.recall_speed --sizes 10000 100000 [--stores sqlite neo4j]

Each (store, size) runs in a fresh process: bench/generator.py's memory is imported
and its keys embedded once (both runtimes give the same vectors), then
bench/recall_latency.py's messages are timed three ways: the default preset without
claim cues or history, run by torch (recall as it was before claim cues), the
default preset run by torch, and the default preset run by ONNX Runtime (what
Pegasus runs now).
Results go to bench/results/recall_speed.json.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context

from bench.generator import generate
from bench.import_edges import RESULTS
from bench.recall_latency import latency
from bench.stores import add_store_options, bench_store
from pegasus.embed import default_embedder
from pegasus.memory import Memory
from pegasus.recall.presets import DEFAULT
from pegasus.stores import Changes

NAMES_ONLY = replace(DEFAULT, name="names-only", claim_cues=False, show_history=False)
RUNS = (
    ("names-only", NAMES_ONLY, "torch"),
    ("default", DEFAULT, "torch"),
    ("default", DEFAULT, "onnx"),
)


def measure(kind: str, edges: int, neo4j: str, queries: int) -> dict:
    data = generate(edges)
    out: dict[str, object] = {"store": kind, "edges": edges}
    with bench_store(kind, neo4j) as (store, user, _):
        store.apply(user, Changes.of_graph(data.graph))
        Memory.open(store, user=user, embedder=default_embedder(runtime="onnx")).sync_keys()
        out["keys"] = store.stats(user).keys
        for preset, settings, runtime in RUNS:
            memory = Memory.open(store, user=user, embedder=default_embedder(runtime=runtime))
            memory.embedder.embed("load the model before timing")
            out[f"{preset}/{runtime}"] = latency(memory, data.graph, queries, settings)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    add_store_options(parser)
    args = parser.parse_args()
    rows = []
    for edges in args.sizes:
        for kind in args.stores:
            with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
                row = pool.submit(measure, kind, edges, args.neo4j, args.queries).result()
            print(json.dumps(row), flush=True)
            rows.append(row)
            (RESULTS / "recall_speed.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

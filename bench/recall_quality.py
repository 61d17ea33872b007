"""Recall quality at scale: planted facts recalled, share of injected lines that are
relevant, negatives kept quiet, tokens per block, for the writeup's baseline and
the project's default, on both stores, on the graphs of bench/generator.py.

    python -m bench.recall_quality --sizes 1000 10000 [--stores sqlite neo4j]

Results go to bench/results/recall_quality.json and a markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
from datetime import UTC, datetime

from bench.generator import generate
from bench.import_edges import RESULTS
from bench.stores import add_store_options, bench_store
from pegasus.embed import default_embedder
from pegasus.memory import Memory
from pegasus.recall.presets import PRESETS
from pegasus.stores import Store

NOW = datetime(2026, 9, 1, tzinfo=UTC)


def measure(store: Store, user: str, edges: int) -> list[dict[str, object]]:
    data = generate(edges)
    store.import_graph(user, data.graph)
    memory = Memory(store, user=user, embedder=default_embedder())
    memory.sync_keys()
    names = {node.id: node.name for node in data.graph.nodes}
    rows = []
    for preset_name, preset in PRESETS.items():
        found: dict[str, list[bool]] = {}
        relevant, tokens, quiet = [], [], []
        for probe in data.probes:
            result = memory.recall(probe.message, now=NOW, settings=preset)
            fired = {f.id for f in result.fired}
            if probe.expected is None:
                quiet.append(not fired)
                continue
            found.setdefault(probe.how, []).append(probe.expected in fired)
            lines = result.memory + result.context
            if lines:
                name = names[probe.expected]
                relevant.append(sum(name in line for line in lines) / len(lines))
            tokens.append(len(result.text) // 4)
        rows.append({
            "edges": edges, "preset": preset_name,
            **{f"found_{how}": round(statistics.mean(hits), 3) for how, hits in found.items()},
            "relevant_lines": round(statistics.mean(relevant), 3) if relevant else 0.0,
            "negatives_quiet": round(statistics.mean(quiet), 3),
            "tokens_per_block": round(statistics.mean(tokens), 1),
        })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    add_store_options(parser)
    args = parser.parse_args()
    rows = []
    for size in args.sizes:
        for kind in args.stores:
            with bench_store(kind, args.neo4j) as (store, user):
                rows += [{"store": kind, **row} for row in measure(store, user, size)]
            for row in rows[-len(PRESETS) :]:
                print(json.dumps(row), flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "recall_quality.json").write_text(json.dumps(rows, indent=1) + "\n")
    columns = ["store", "edges", "preset", "found_name", "found_alias", "found_paraphrase",
               "relevant_lines", "negatives_quiet", "tokens_per_block"]  # fmt: skip
    print("\n| " + " | ".join(columns) + " |\n" + "|---" * len(columns) + "|")
    for row in rows:
        print("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")


if __name__ == "__main__":
    main()

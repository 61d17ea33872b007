"""How many of the true nearest keys Neo4j's vector indexes return, by how wide
they are asked to search.

    python -m bench.index_beam --sizes 10000 100000

Neo4j's HNSW search keeps as many candidates as it is asked for, so asking for
exactly the neighbours recall needs gives it a narrow search. For each size, the
generated memory goes to a Neo4j owner and to a SQLite file (whose search is exact,
over the same vectors); then every probe and latency message searches the claim
keys (whole message) and the name keys (each content word) at several widths.
Figures: the share of the exact nearest found, and ms per search.
Results go to bench/results/index_beam.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from unittest import mock

from bench.generator import generate
from bench.import_edges import RESULTS
from bench.recall_latency import messages
from bench.stores import add_store_options, bench_store
from pegasus.embed import default_embedder
from pegasus.memory import Memory
from pegasus.model import CLAIM_KEY, NAME_KEYS
from pegasus.recall.presets import DEFAULT
from pegasus.stores.base import Store
from pegasus.stores.neo4j import store as neo4j_store
from pegasus.text import content_words

BEAMS = (0, 50, 100, 200)  # 0: exactly the neighbours asked for (before)


def searched(store: Store, user: str, vectors: list, limit: int, kinds) -> list[list[str]]:
    return [[k.id for k, _ in row] for row in store.search_keys_many(user, vectors, limit, kinds)]


def found_share(exact: list[list[str]], approximate: list[list[str]]) -> float:
    shares = [len(set(a) & set(e)) / len(e) for e, a in zip(exact, approximate, strict=True) if e]
    return round(statistics.mean(shares), 4)


def measure(edges: int, neo4j: str) -> dict:
    data = generate(edges)
    embedder = default_embedder()
    texts = [p.message for p in data.probes] + messages(data.graph, 100)
    claim_queries = embedder.embed_batch(texts).tolist()
    words = sorted({w for text in texts for w in content_words(text)})
    name_queries = embedder.embed_batch(words).tolist()
    searches = (
        ("claims", claim_queries, DEFAULT.claim_candidates, (CLAIM_KEY,)),
        ("names", name_queries, DEFAULT.candidates, NAME_KEYS),
    )
    out: dict = {"edges": edges, "messages": len(texts), "words": len(words)}
    exact = {}
    with bench_store("sqlite", neo4j) as (store, user, _):
        Memory.open(store, user=user, embedder=embedder).import_graph(data.graph)
        for name, queries, limit, kinds in searches:
            exact[name] = searched(store, user, queries, limit, kinds)
    with bench_store("neo4j", neo4j) as (store, user, _):
        Memory.open(store, user=user, embedder=embedder).import_graph(data.graph)
        out["keys"] = store.stats(user).keys
        for name, queries, limit, kinds in searches:
            for beam in BEAMS:
                with (
                    mock.patch.object(neo4j_store, "INDEX_BEAM", beam),
                    mock.patch.object(store, "_holding", False),  # the index, not a copy
                ):
                    searched(store, user, queries, limit, kinds)  # warm this width's plan
                    start = time.perf_counter()
                    found = searched(store, user, queries, limit, kinds)
                    ms = (time.perf_counter() - start) * 1000 / len(queries)
                out[f"{name}/beam {beam}"] = {
                    "found": found_share(exact[name], found),
                    "ms_per_search": round(ms, 2),
                }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    add_store_options(parser)
    args = parser.parse_args()
    rows = []
    for edges in args.sizes:
        rows.append(measure(edges, args.neo4j))
        print(json.dumps(rows[-1]), flush=True)
    (RESULTS / "index_beam.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()

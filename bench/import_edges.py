"""How long importing a large interchange graph takes on each store.

    python bench/import_edges.py --edges 100000 [--neo4j bolt://127.0.0.1:7687]

A synthetic personal graph (one self node, people, places, things, a relation
vocabulary, snippets) is built deterministically from --seed, checked through the
interchange parser like a file would be, and written with ``import_graph`` (one
transaction). Results go to bench/results/import.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pegasus.interchange import Graph, dump_graph, parse_graph
from pegasus.model import Edge, Kind, Node, edge_id, node_id
from pegasus.stores import Changes, Store, open_store

RELATIONS = [
    "KNOWS", "WORKS_AT", "LIVES_IN", "LIKES", "VISITED", "OWNS", "PLANS", "STUDIES",
    "MANAGES", "PREFERS", "ATTENDS", "MET_AT", "READS", "PLAYS", "WORRIES_ABOUT",
]  # fmt: skip
STABILITIES = ["immutable", "stable", "mutable", "time_bound", "ephemeral"]
RESULTS = Path(__file__).parent / "results"


def synthetic_graph(edges: int, seed: int = 7) -> Graph:
    rng = random.Random(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    kinds = list(Kind)
    nodes = [Node(id="PERSON::me", name="Me", kind="PERSON")]
    for i in range(max(2, edges // 5)):
        kind = rng.choice(kinds)
        name = f"{kind.value.title()} {i}"
        nodes.append(Node(id=node_id(kind, name), name=name, kind=kind, aliases=[f"n{i}"]))
    out: dict[str, Edge] = {}
    while len(out) < edges:
        # A quarter of the claims hang off the self node, as in a real memory.
        source = nodes[0] if rng.random() < 0.25 else rng.choice(nodes)
        target = rng.choice(nodes)
        if source.id == target.id:
            continue
        relation = rng.choice(RELATIONS)
        eid = edge_id(source.id, relation, target.id)
        touched = start + timedelta(minutes=rng.randrange(60 * 24 * 600))
        out[eid] = Edge(
            id=eid, source=source.id, target=target.id, relation=relation,
            strength0=rng.uniform(20, 100), touched_at=touched,
            stability=rng.choice(STABILITIES), confidence=rng.uniform(0.5, 1),
            snippet=f"I said something about {target.name} on {touched:%B %d}.",
        )  # fmt: skip
    return Graph(nodes=nodes, edges=list(out.values()), self_id="PERSON::me")


def measure(store: Store, text: str, user: str) -> dict[str, float]:
    t0 = time.perf_counter()
    graph = parse_graph(text)
    t1 = time.perf_counter()
    store.apply(user, Changes.of_graph(graph))
    t2 = time.perf_counter()
    stats = store.stats(user)
    assert stats.edges == len(graph.edges), (stats.edges, len(graph.edges))
    return {"parse_s": round(t1 - t0, 2), "write_s": round(t2 - t1, 2),
            "total_s": round(t2 - t0, 2), "edges": stats.edges, "nodes": stats.nodes}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--neo4j", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    args = parser.parse_args()

    text = dump_graph(synthetic_graph(args.edges, args.seed))
    results: dict[str, object] = {"edges": args.edges, "file_mb": round(len(text) / 1e6, 1)}
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/bench.db")
        results["sqlite"] = measure(store, text, "bench")
        store.close()
    user = f"bench-{uuid.uuid4().hex[:8]}"
    try:
        store = open_store(args.neo4j)
    except Exception as exc:  # report, don't hide: the table says why it is missing
        results["neo4j"] = {"error": str(exc)}
    else:
        try:
            results["neo4j"] = measure(store, text, user)
        finally:
            store.apply(user, Changes(delete_nodes=[n.id for n in store.export(user).nodes]))
            store.close()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "import.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

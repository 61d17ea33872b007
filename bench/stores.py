"""The stores a benchmark measures on: a throwaway SQLite file, or a fresh owner on
the Neo4j at ``NEO4J_URI`` whose data is removed afterwards."""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from pegasus.stores import Changes, Store, open_store

KINDS = ("sqlite", "neo4j")
CLEAN_UP_BATCH = 5_000
SETTLE_SECONDS = 120.0


def add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--neo4j", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    parser.add_argument("--stores", nargs="+", choices=KINDS, default=list(KINDS))


def add_settle_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--settle", type=float, default=SETTLE_SECONDS,
                        help="seconds Neo4j is left after many keys are written")  # fmt: skip


def settle(kind: str, seconds: float) -> None:
    """Leave Neo4j alone a while: after many key writes it merges its vector index's
    segments for a minute or two, and every query meanwhile is 2-3 times slower."""
    if kind == "neo4j":
        time.sleep(seconds)


@contextmanager
def bench_store(kind: str, neo4j_url: str) -> Iterator[tuple[Store, str, str]]:
    """``(store, user, url)`` for one measurement; everything it wrote is gone after."""
    user = f"bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db" if kind == "sqlite" else neo4j_url
        store = open_store(url)
        try:
            yield store, user, url
        finally:
            if kind == "neo4j":
                # In parts: 100k edges in one transaction exceed Neo4j's default
                # transaction memory.
                graph = store.export(user)
                keys = [k.id for k in store.list_keys(user)]
                nodes = [n.id for n in graph.nodes]
                for start in range(0, max(len(keys), len(nodes)), CLEAN_UP_BATCH):
                    part = slice(start, start + CLEAN_UP_BATCH)
                    store.apply(user, Changes(delete_keys=keys[part], delete_nodes=nodes[part]))
                store.apply(user, Changes(delete_conversations=[c.id for c in graph.conversations]))
            store.close()

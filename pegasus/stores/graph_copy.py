"""Owners' graphs held in memory, to answer a recall's reads without asking the store.

A store that serves recalls (one that was warmed: the service) holds the graphs of
the owners it recalls for, as it holds their keys (docs/stores.md, "The owner's
graph in memory"). A copy is used while the owner's graph version is the one it was
read at, and never otherwise; it answers as the store's own reads do
(``tests/stores/test_graph_copy.py`` compares them).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from cachetools import LRUCache

from pegasus.errors import StoreError
from pegasus.interchange import Graph
from pegasus.model import Edge, Node, check_relation, name_key
from pegasus.stores.base import walk

log = logging.getLogger(__name__)

# Bytes one held record takes, about (the model object, its fields, the indexes).
NODE_BYTES = 1_500
EDGE_BYTES = 2_500
ROOM_MB = 1_024  # copies held at once, least recently used dropped first
# After a write a graph is read again in the background, at most once in this many
# times the last reading took: an owner written to all the time is read from the store.
REREAD_GAP = 4


@dataclass(frozen=True)
class GraphCopy:
    nodes: dict[str, Node]
    edges: dict[str, Edge]
    around: dict[str, list[Edge]]  # node id -> the edges at it, either direction
    named: dict[str, list[str]]  # folded name or alias -> node ids, by id
    version: Any  # of the owner's graph when read, as the store tells it

    @classmethod
    def of(cls, graph: Graph, version: Any) -> GraphCopy:
        around: dict[str, list[Edge]] = {}
        for edge in graph.edges:
            around.setdefault(edge.source, []).append(edge)
            if edge.target != edge.source:
                around.setdefault(edge.target, []).append(edge)
        named: dict[str, list[str]] = {}
        for node in sorted(graph.nodes, key=lambda n: n.id):
            for name in dict.fromkeys(name_key(name) for name in node.names):
                named.setdefault(name, []).append(node.id)
        return cls({n.id: n for n in graph.nodes}, {e.id: e for e in graph.edges}, around,
                   named, version)  # fmt: skip

    @property
    def size(self) -> int:
        """Bytes it takes, about."""
        return len(self.nodes) * NODE_BYTES + len(self.edges) * EDGE_BYTES

    def get_nodes(self, ids: Iterable[str]) -> list[Node]:
        return [self.nodes[i] for i in dict.fromkeys(ids) if i in self.nodes]

    def get_edges(self, ids: Iterable[str]) -> list[Edge]:
        return [self.edges[i] for i in dict.fromkeys(ids) if i in self.edges]

    def find_nodes_named(self, names: Iterable[str]) -> list[Node]:
        found = {i for name in names for i in self.named.get(name_key(name), ())}
        return [self.nodes[i] for i in sorted(found)]

    def edges_with_relation(self, relations: Iterable[str]) -> list[Edge]:
        wanted = {check_relation(label) for label in relations}
        return [edge for edge in self.edges.values() if edge.relation in wanted and edge.live]

    def subgraph(
        self,
        seed_ids: Iterable[str],
        hops: int = 2,
        live_only: bool = True,
        stop_at: Iterable[str] = (),
        with_nodes: bool = True,
    ) -> Graph:
        def edges_at(frontier: list[str]) -> Iterable[Edge]:
            at = (edge for node_id in frontier for edge in self.around.get(node_id, ()))
            return [edge for edge in at if edge.live or not live_only]

        reached, edges = walk(seed_ids, hops, stop_at, edges_at)
        return Graph(nodes=self.get_nodes(reached) if with_nodes else [], edges=edges)


class HeldGraphs:
    """The copies a store holds, one per owner. ``read(user)`` reads an owner's graph
    labelled with its version as of before the reading (or of the same snapshot): a
    write landing meanwhile leaves the copy newer than its label, and then the
    owner's version has moved past the label, so that copy is never used."""

    def __init__(self, read: Callable[[str], GraphCopy], room_mb: float = ROOM_MB) -> None:
        self._read = read
        self._copies: LRUCache[str, GraphCopy] = LRUCache(
            maxsize=max(1, int(room_mb * 2**20)), getsizeof=lambda copy: copy.size
        )
        self._lock = threading.Lock()
        self._last: dict[str, tuple[float, float]] = {}  # owner -> last reading's (end, seconds)
        self._reading: set[str] = set()
        self._too_large: set[str] = set()
        # One thread reads in the background, always the same: a store may keep a
        # connection for each thread that reads.
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="pegasus-graphs")
        self.serving = False  # copies are read and used once the store is warmed

    def serve(self, user: str) -> None:
        """From now on, hold copies; the owner's is read now (the store's ``warm``)."""
        self.serving = True
        self.read(user)

    def current(self, user: str, version: Any) -> GraphCopy | None:
        """The owner's copy if it is at ``version``; else None, and a copy is read in
        the background unless the last reading was too recent."""
        if not self.serving:
            return None
        with self._lock:
            copy = self._copies.get(user)
            if copy is not None and copy.version == version:
                return copy
            end, seconds = self._last.get(user, (0.0, 0.0))
            if (user in self._reading or user in self._too_large
                    or time.monotonic() - end < REREAD_GAP * seconds):  # fmt: skip
                return None
            self._reading.add(user)
        self._worker.submit(self.read, user, True)
        return None

    def read(self, user: str, background: bool = False) -> None:
        """Read the owner's copy now (in ``background``, a failure waits for the next try)."""
        start = time.monotonic()
        try:
            copy = self._read(user)
            with self._lock:
                try:
                    self._copies[user] = copy
                except ValueError:  # larger than all the room there is
                    self._copies.pop(user, None)
                    self._too_large.add(user)
        except StoreError as exc:
            if not background:
                raise
            log.info("could not read %s's graph into memory: %s", user, exc)
        finally:
            with self._lock:
                self._last[user] = (time.monotonic(), time.monotonic() - start)
                self._reading.discard(user)

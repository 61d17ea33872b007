"""The store interface: a small core every store implements, and everything else
built once on top of it.

A store holds and fetches; merging, activation, scoring and the decay arithmetic
live above it. Every method takes the memory owner (``user``) first and sees
nothing of any other owner's data.

The core is one transactional write, :meth:`Store.apply`, which takes every change
of one logical operation (an ingest commit, a close, a forget, an import) and
commits all of it or none; a handful of reads; and the decay pass. The other
methods here are compositions of the core. A store overrides one only where it
is measurably faster, and ``tests/stores/test_contract.py`` checks that the
override answers as the composition does.
"""

from __future__ import annotations

import math
import re
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from pegasus.config import Settings
from pegasus.errors import ValidationError
from pegasus.interchange import Graph
from pegasus.model import (
    CLAIM_KEY,
    Cardinality,
    Conversation,
    Edge,
    EmbeddingKey,
    Kind,
    Node,
    Stability,
    Usage,
    check_relation,
)
from pegasus.time.decay import DecayReport, DecayRule

# Records were validated on the way in: the stores read them back without validation
# (it dominated recall's reads), but still build the proper types, enum members by
# plain dict lookup, faster than calling the enum classes.
KINDS = {kind.value: kind for kind in Kind}
STABILITIES = {stability.value: stability for stability in Stability}
CARDINALITIES = {cardinality.value: cardinality for cardinality in Cardinality}

MAX_HOPS = 2
# A word held by more claims than this singles out none of them, and ranking every
# claim that holds it is most of a word search's cost: stores may leave it out.
COMMON_IN_CLAIMS = 2_000


# When the work of this context stops waiting on the store (``time.monotonic()``), for
# a service's request; None: each store's own patience (an ingest job, a command).
_DEADLINE: ContextVar[float | None] = ContextVar("store_deadline", default=None)


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Store calls made in this context (and the threads it hands work to) stop
    waiting for a busy or absent store ``seconds`` from now, all of them together,
    with a StoreError."""
    token = _DEADLINE.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline() -> float | None:
    """The seconds left in this context (:func:`within`), to hand to another process."""
    ends = _DEADLINE.get()
    return None if ends is None else max(0.0, ends - time.monotonic())


def patience(own: float) -> float:
    """How long a store call may wait now: its own patience, or what is left of the
    context's (:func:`within`)."""
    left = deadline()
    return own if left is None else min(own, left)


@dataclass
class Changes:
    """Every write of one logical operation, for :meth:`Store.apply`.

    Applied in this order, in one transaction: deletes (keys, edges, nodes with
    their edges and keys, conversation records), then upserts (nodes, edges,
    conversation records, keys, the self node), then the merges (journal lines,
    used edges, closing times, strengths).

    A conversation upsert replaces every field of the record except
    ``used_edges``, which it adds to: only ``used_done`` removes a used edge, so
    recall's notes are never lost to a concurrent writer of the same record.
    """

    nodes: Sequence[Node] = ()
    edges: Sequence[Edge] = ()
    conversations: Sequence[Conversation] = ()
    keys: Sequence[EmbeddingKey] = ()
    self_id: str | None = None
    delete_nodes: Sequence[str] = ()
    delete_edges: Sequence[str] = ()
    delete_conversations: Sequence[str] = ()
    delete_keys: Sequence[str] = ()
    # conversation id -> lines appended to its extraction journal
    journal: dict[str, list[str]] = field(default_factory=dict)
    # conversation id -> edge ids recall injected (added; the record is created if new)
    used: dict[str, list[str]] = field(default_factory=dict)
    # conversation id -> edge ids a close reinforced (removed from used_edges)
    used_done: dict[str, list[str]] = field(default_factory=dict)
    # conversation id -> when it was closed (the rest of the record is left alone)
    closed: dict[str, datetime] = field(default_factory=dict)
    # stored edges of which only strength, strength0, touched_at, dormant and expired
    # are written: a close's reinforcement never overwrites what a concurrent ingest
    # added to the same claims
    strengths: Sequence[Edge] = ()

    @classmethod
    def of_graph(cls, graph: Graph, keys: Sequence[EmbeddingKey] = ()) -> Changes:
        """Upserts of a whole graph (and, say, its names' keys): an import."""
        return cls(nodes=graph.nodes, edges=graph.edges, conversations=graph.conversations,
                   keys=keys, self_id=graph.self_id)  # fmt: skip

    def __bool__(self) -> bool:
        return any(getattr(self, part.name) for part in fields(self))


OK, WARNING, PROBLEM = "ok", "warning", "problem"


@dataclass
class Diagnosis:
    """How a store stands, for ``pegasus doctor``: ok, warning or problem, with what
    to do about it."""

    status: str
    message: str
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def one_line(exc: BaseException) -> str:
    """An error's message on one line (drivers' messages run over several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


class Stats(BaseModel):
    nodes: int = 0
    edges: int = 0
    conversations: int = 0
    keys: int = 0
    nodes_by_kind: dict[str, int] = Field(default_factory=dict)
    edges_by_relation: dict[str, int] = Field(default_factory=dict)
    dormant: int = 0
    superseded: int = 0
    expired: int = 0
    cost: Usage = Field(default_factory=Usage)  # what learning the conversations cost


def walk(
    seed_ids: Iterable[str],
    hops: int,
    stop_at: Iterable[str],
    edges_at: Callable[[list[str]], Iterable[Edge]],
) -> tuple[set[str], list[Edge]]:
    """The nodes reached from the seeds and the edges crossed, ``hops`` edges out,
    ``edges_at(frontier)`` giving the edges at each hop's nodes; nodes in ``stop_at``
    are reached but not walked from (a seed is always walked from)."""
    check_hops(hops)
    reached = set(seed_ids)
    frontier, stops = set(reached), set(stop_at)
    crossed: dict[str, Edge] = {}
    for hop in range(hops):
        if hop > 0:
            frontier -= stops
        if not frontier:
            break
        ends: set[str] = set()
        for edge in edges_at(sorted(frontier)):
            crossed[edge.id] = edge
            ends.update((edge.source, edge.target))
        frontier = ends - reached
        reached |= ends
    return reached, list(crossed.values())


def check_hops(hops: int) -> int:
    if not 1 <= hops <= MAX_HOPS:
        raise ValidationError(f"hops must be 1 or {MAX_HOPS}, not {hops!r}")
    return hops


def checked(changes: Changes) -> Changes:
    """What every store does before it writes anything: refuse keys of invalid
    relation labels and merges without a conversation id, and keep one record per id
    (the last), so that no store can write one id twice."""
    for key in changes.keys:
        if key.kind == "relation":
            check_relation(key.ref)
    for mapping in (changes.journal, changes.used, changes.used_done, changes.closed):
        if any(not conversation for conversation in mapping):
            raise ValidationError("a conversation id must not be empty")

    def last(records: Sequence) -> list:
        return list({record.id: record for record in records}.values())

    return replace(
        changes,
        nodes=last(changes.nodes),
        edges=last(changes.edges),
        conversations=last(changes.conversations),
        keys=last(changes.keys),
        strengths=last(changes.strengths),
        used={c: list(dict.fromkeys(ids)) for c, ids in changes.used.items()},
    )


class Store(ABC):
    """A memory store. Use as a context manager or call :meth:`close`."""

    # --- lifecycle -------------------------------------------------------------
    @classmethod
    @abstractmethod
    def from_url(cls, url: str, settings: Settings) -> Store:
        """The store a URL of its scheme names, with what it needs from the settings."""

    @abstractmethod
    def close(self) -> None: ...

    @classmethod
    def diagnose(cls, url: str, settings: Settings) -> Diagnosis:
        """How the store at ``url`` stands. Opening it may bring its schema up to date,
        as any command does; nothing it holds changes."""
        cls.from_url(url, settings).close()
        return Diagnosis(OK, f"{url} opens")

    def warm(self, user: str) -> None:
        """Read now what the owner's searches keep in memory (seconds for a large
        owner), so that its next search is as fast as the rest. Long-lived processes
        call it (the service, for its owner at start); a store may then prepare other
        owners ahead of their searches too."""
        return None  # a store that keeps nothing in memory has nothing to read

    @contextmanager
    def reading(self, user: str, joined: object = None) -> Iterator[object]:
        """The reads of one answer (a recall) on this thread: a store may look at the
        owner's state (its self node, its keys' version) once for all of them, so that
        a write landing meanwhile may be seen only by the next answer. It yields what
        it looked at; another thread reading for the same answer passes that as
        ``joined`` and looks no more (once the first thread has looked)."""
        yield None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the core: one write -------------------------------------------------------
    @abstractmethod
    def apply(self, user: str, changes: Changes) -> None:
        """Commit every change of one operation, or none of them (see :class:`Changes`).
        An edge whose ends are not nodes after the deletes and upserts is refused."""

    # --- the core: reads -----------------------------------------------------------
    @abstractmethod
    def get_nodes(self, user: str, ids: Iterable[str]) -> list[Node]:
        """The nodes that exist among ``ids``, in no particular order."""

    @abstractmethod
    def get_edges(self, user: str, ids: Iterable[str]) -> list[Edge]: ...

    @abstractmethod
    def get_conversation(self, user: str, conversation_id: str) -> Conversation | None: ...

    @abstractmethod
    def get_self(self, user: str) -> str | None: ...

    @abstractmethod
    def find_nodes_named(self, user: str, names: Iterable[str]) -> list[Node]:
        """Nodes whose name or an alias equals any of ``names`` ignoring case, by id."""

    @abstractmethod
    def subgraph(
        self,
        user: str,
        seed_ids: Iterable[str],
        hops: int = 2,
        live_only: bool = True,
        stop_at: Iterable[str] = (),
        with_nodes: bool = True,
    ) -> Graph:
        """The neighbourhood of the seeds up to ``hops`` (1 or 2) edges away, either
        direction, in one pull: the nodes reached and the edges crossed (only the edges
        without ``with_nodes``). Nodes in ``stop_at`` are reached but not expanded
        further (the user's own node touches everything)."""

    @abstractmethod
    def export(self, user: str) -> Graph:
        """Everything the owner has: nodes, edges, conversations (by id) and the self node."""

    @abstractmethod
    def list_keys(self, user: str, with_vectors: bool = False) -> list[EmbeddingKey]:
        """The owner's embedding keys, by id."""

    @abstractmethod
    def search_keys_many(
        self,
        user: str,
        vectors: Sequence[Sequence[float]],
        limit: int = 10,
        kinds: Collection[str] | None = None,
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        """For each query vector, the ``limit`` keys of ``kinds`` (every kind when
        None) nearest by cosine similarity, best first, each with its (unit-length)
        vector. One round trip for all queries."""

    # --- the core: time ------------------------------------------------------------
    @abstractmethod
    def decay(
        self, now: datetime, rule: DecayRule, user: str | None = None, batch_size: int = 10_000
    ) -> DecayReport:
        """Store every edge's strength and state as of ``now`` under ``rule`` (the same
        :func:`pegasus.time.decay.edge_state`, run inside the store). All owners
        when ``user`` is None. Bounded transactions; rerunning it changes nothing."""

    # --- built on the core ---------------------------------------------------------
    def find_nodes(self, user: str, name: str, kind: str | None = None) -> list[Node]:
        """Nodes whose name or an alias equals ``name`` ignoring case."""
        found = self.find_nodes_named(user, [name])
        return [node for node in found if kind is None or node.kind == kind]

    def list_conversations(self, user: str) -> list[Conversation]:
        """Every conversation record of the owner, by id."""
        return self.export(user).conversations

    def edges_touching(self, user: str, node_ids: Iterable[str]) -> list[Edge]:
        """Every edge (live or not) with an end among ``node_ids``."""
        return self.subgraph(user, node_ids, hops=1, live_only=False, with_nodes=False).edges

    def edges_meeting(self, user: str, claims: Iterable[tuple[str, str, str]]) -> list[Edge]:
        """What each new claim (source, relation, target) meets: the stored edge that
        is the same claim (live or not), and the not superseded one_to_one edges of the
        same source and relation. What reinforcement and supersession look at."""
        claims = list(dict.fromkeys((s, check_relation(r), t) for s, r, t in claims))
        around = self.edges_touching(user, {source for source, _, _ in claims})
        found = {
            edge.id: edge
            for source, relation, target in claims
            for edge in around
            if edge.source == source
            and edge.relation == relation
            and (
                edge.target == target
                or (edge.cardinality.value == "one_to_one" and edge.superseded_by is None)
            )
        }
        return list(found.values())

    def edges_with_relation(self, user: str, relations: Iterable[str]) -> list[Edge]:
        """Every live edge whose relation is one of ``relations``."""
        wanted = {check_relation(label) for label in relations}
        return [e for e in self.export(user).edges if e.relation in wanted and e.live]

    def ranked_edges(self, user: str, strongest: bool, limit: int = 5) -> list[Edge]:
        """The live edges of highest (or lowest) stored strength, as of the last pass."""
        live = [edge for edge in self.export(user).edges if edge.live]
        live.sort(key=lambda e: ((-e.strength if strongest else e.strength), e.id))
        return live[:limit]

    def stats(self, user: str) -> Stats:
        graph = self.export(user)
        stats = Stats(
            nodes=len(graph.nodes),
            edges=len(graph.edges),
            conversations=len(graph.conversations),
            keys=len(self.list_keys(user)),
            dormant=sum(e.dormant for e in graph.edges),
            superseded=sum(e.superseded_by is not None for e in graph.edges),
            expired=sum(e.expired for e in graph.edges),
        )
        for node in graph.nodes:
            stats.nodes_by_kind[node.kind.value] = stats.nodes_by_kind.get(node.kind.value, 0) + 1
        for edge in graph.edges:
            count = stats.edges_by_relation.get(edge.relation, 0)
            stats.edges_by_relation[edge.relation] = count + 1
        return stats

    def key_mean(self, user: str) -> list[float] | None:
        """The mean of the owner's unit-length key vectors (None without keys)."""
        keys = self.list_keys(user, with_vectors=True)
        if not keys:
            return None
        matrix = np.asarray([key.vector for key in keys], np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.where(norms == 0, 1, norms)).mean(axis=0).tolist()

    def search_keys(
        self,
        user: str,
        vector: Sequence[float],
        limit: int = 10,
        kinds: Collection[str] | None = None,
    ) -> list[tuple[EmbeddingKey, float]]:
        return self.search_keys_many(user, [vector], limit, kinds)[0]

    def search_words(
        self, user: str, words: Sequence[str], limit: int = 20
    ) -> list[tuple[EmbeddingKey, float]]:
        """Claim keys whose text holds any of ``words``, best first by BM25 (each word
        weighs more the fewer claims hold it). Stores with a full-text index answer
        from it, and may match word forms ("hiking" for "hike")."""
        claims = [key for key in self.list_keys(user) if key.kind == CLAIM_KEY]
        held = [Counter(re.findall(r"\w+", key.text.casefold())) for key in claims]
        if not claims or limit <= 0:
            return []
        mean_length = sum(map(sum, (h.values() for h in held))) / len(held)
        scores: list[float] = [0.0] * len(claims)
        for word in dict.fromkeys(w.casefold() for w in words):
            having = sum(1 for h in held if word in h)
            if not having:
                continue
            idf = math.log(1 + (len(claims) - having + 0.5) / (having + 0.5))
            for i, h in enumerate(held):
                tf, length = h.get(word, 0), sum(h.values())
                if tf:
                    scores[i] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / mean_length))
        ranked = sorted((i for i, v in enumerate(scores) if v > 0), key=lambda i: -scores[i])
        return [(claims[i], scores[i]) for i in ranked[:limit]]

"""The store interface: what the write path, recall, decay and export need, and
nothing more. Stores hold and fetch; merging, activation and scoring live above.

Every method takes the memory owner (``user``) first and sees nothing of any
other owner's data. Writes of a batch are all-or-nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pegasus.interchange import Graph
from pegasus.model import Conversation, Edge, EmbeddingKey, Node


@dataclass
class Stats:
    nodes: int = 0
    edges: int = 0
    conversations: int = 0
    keys: int = 0
    nodes_by_kind: dict[str, int] = field(default_factory=dict)
    edges_by_relation: dict[str, int] = field(default_factory=dict)
    dormant: int = 0
    superseded: int = 0
    expired: int = 0


@dataclass
class DecayReport:
    edges: int = 0  # edges whose stored strength or state was recomputed
    dormant: int = 0  # edges dormant after the pass
    expired: int = 0  # edges expired after the pass


class Store(ABC):
    """A memory store. Use as a context manager or call :meth:`close`."""

    # --- lifecycle -------------------------------------------------------
    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writes -------------------------------------------------------------
    @abstractmethod
    def upsert_nodes(self, user: str, nodes: Sequence[Node]) -> None:
        """Insert or fully replace nodes by id."""

    @abstractmethod
    def upsert_edges(self, user: str, edges: Sequence[Edge]) -> None:
        """Insert or fully replace edges by id; both ends must already exist."""

    @abstractmethod
    def upsert_conversation(self, user: str, conversation: Conversation) -> None: ...

    @abstractmethod
    def set_self(self, user: str, node_id: str) -> None:
        """Mark the node that stands for the memory owner."""

    @abstractmethod
    def import_graph(self, user: str, graph: Graph) -> None:
        """Write a whole checked graph in one transaction (upserting by id)."""

    @abstractmethod
    def delete_nodes(self, user: str, ids: Iterable[str]) -> None:
        """Delete nodes with their edges and embedding keys."""

    @abstractmethod
    def delete_edges(self, user: str, ids: Iterable[str]) -> None: ...

    @abstractmethod
    def delete_conversation(self, user: str, conversation_id: str) -> None: ...

    # --- reads -------------------------------------------------------------
    @abstractmethod
    def get_nodes(self, user: str, ids: Iterable[str]) -> list[Node]:
        """The nodes that exist among ``ids``, in no particular order."""

    @abstractmethod
    def get_edges(self, user: str, ids: Iterable[str]) -> list[Edge]: ...

    @abstractmethod
    def get_conversation(self, user: str, conversation_id: str) -> Conversation | None: ...

    @abstractmethod
    def list_conversations(self, user: str) -> list[Conversation]:
        """Every conversation record of the owner, by id."""

    @abstractmethod
    def get_self(self, user: str) -> str | None: ...

    @abstractmethod
    def find_nodes_named(self, user: str, names: Iterable[str]) -> list[Node]:
        """Nodes whose name or an alias equals any of ``names`` ignoring case."""

    def find_nodes(self, user: str, name: str, kind: str | None = None) -> list[Node]:
        """Nodes whose name or an alias equals ``name`` ignoring case."""
        found = self.find_nodes_named(user, [name])
        return [node for node in found if kind is None or node.kind == kind]

    @abstractmethod
    def edges_touching(self, user: str, node_ids: Iterable[str]) -> list[Edge]:
        """Every edge (live or not) with an end among ``node_ids``."""

    @abstractmethod
    def edges_meeting(self, user: str, claims: Iterable[tuple[str, str, str]]) -> list[Edge]:
        """What each new claim (source, relation, target) meets: the stored edge that
        is the same claim (live or not), and the live one_to_one edges of the same
        source and relation. What reinforcement and supersession look at."""

    @abstractmethod
    def edges_with_relation(self, user: str, relations: Iterable[str]) -> list[Edge]:
        """Every live edge whose relation is one of ``relations``."""

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
        """The neighbourhood of the seeds up to ``hops`` edges away, either direction,
        in one pull: the nodes reached and the edges crossed (only the edges without
        ``with_nodes``). Nodes in ``stop_at`` are reached but not expanded further (the
        user's own node touches everything)."""

    @abstractmethod
    def export(self, user: str) -> Graph:
        """Everything the owner has: nodes, edges, conversations and the self node."""

    @abstractmethod
    def stats(self, user: str) -> Stats: ...

    @abstractmethod
    def ranked_edges(self, user: str, strongest: bool, limit: int = 5) -> list[Edge]:
        """The live edges of highest (or lowest) stored strength, as of the last pass."""

    # --- embedding keys ----------------------------------------------------
    @abstractmethod
    def upsert_keys(self, user: str, keys: Sequence[EmbeddingKey]) -> None: ...

    @abstractmethod
    def delete_keys(self, user: str, ids: Iterable[str]) -> None: ...

    @abstractmethod
    def list_keys(self, user: str, with_vectors: bool = False) -> list[EmbeddingKey]: ...

    @abstractmethod
    def search_keys_many(
        self, user: str, vectors: Sequence[Sequence[float]], limit: int = 10
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        """For each query vector, the ``limit`` keys nearest by cosine similarity, best
        first, each with its (unit-length) vector. One round trip for all queries."""

    def search_keys(
        self, user: str, vector: Sequence[float], limit: int = 10
    ) -> list[tuple[EmbeddingKey, float]]:
        return self.search_keys_many(user, [vector], limit)[0]

    @abstractmethod
    def key_mean(self, user: str) -> list[float] | None:
        """The mean of the owner's key vectors, kept up to date as keys change
        (None without keys)."""

    # --- time ---------------------------------------------------------------
    @abstractmethod
    def decay(
        self,
        now: datetime,
        rates: Mapping[str, float],
        dormant_below: float,
        user: str | None = None,
        batch_size: int = 10_000,
    ) -> DecayReport:
        """Recompute every edge's strength from ``strength0`` and ``touched_at`` as of
        ``now``; set dormant and expired flags. All owners when ``user`` is None."""

    @abstractmethod
    def reinforce(
        self,
        user: str,
        edge_ids: Iterable[str],
        now: datetime,
        rates: Mapping[str, float],
        amount: float,
    ) -> int:
        """Add ``amount`` (capped at 100) to each edge's strength as of ``now``, make
        that the new ``strength0``, touch it and clear dormancy. Returns the count."""

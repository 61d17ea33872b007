"""``Memory``: the Python API, one object with the same verbs as the CLI."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from pegasus.config import Settings, load_settings
from pegasus.embed import Embedder, default_embedder
from pegasus.errors import NotFoundError, PegasusError, ValidationError
from pegasus.interchange import Graph, dump_graph, parse_graph
from pegasus.llm import LLM, LLMConfig
from pegasus.model import Conversation, Edge, Node, utcnow
from pegasus.recall.engine import Recaller, RecallResult
from pegasus.recall.keys import sync_keys
from pegasus.recall.presets import DEFAULT, RecallSettings
from pegasus.stores import DecayReport, Stats, Store, open_store
from pegasus.time.decay import DECAY_RATES, DORMANT_BELOW, REINFORCE_BY
from pegasus.write.context import WRITE_CONTEXT
from pegasus.write.forget import Forgetting, forget_conversation, forget_edge, forget_node
from pegasus.write.pipeline import Ingestor, IngestReport
from pegasus.write.transcript import Transcript, read_transcript


class Memory:
    """One memory owner's view of a store.

    >>> with Memory("sqlite:///memory.db", user="trevor") as memory:
    ...     memory.import_file("graph.json")
    """

    def __init__(
        self,
        store: str | Store | None = None,
        user: str | None = None,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self._embedder = embedder
        self._recallers: dict[str, Recaller] = {}
        self.settings = settings or load_settings(
            store=store if isinstance(store, str) else None, user=user
        )
        self.user = user or self.settings.user
        if isinstance(store, Store):
            self.store = store
        else:
            auth = None
            if self.settings.neo4j_user and self.settings.neo4j_password:
                auth = (self.settings.neo4j_user, self.settings.neo4j_password)
            self.store = open_store(self.settings.store_url(), neo4j_auth=auth)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- interchange ------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        if self._embedder is None:
            self._embedder = default_embedder(self.settings.embed_model)
        return self._embedder

    def import_graph(self, graph: Graph, index: bool = True) -> Graph:
        """Write a checked graph; with ``index``, embed its names for recall."""
        self.store.import_graph(self.user, graph)
        if index:
            self.sync_keys()
        return graph

    def import_file(self, path: str | Path, index: bool = True) -> Graph:
        """Check a whole interchange file, then write it in one transaction."""
        try:
            text = Path(path).read_bytes()
        except OSError as exc:
            raise PegasusError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            graph = parse_graph(text)
        except ValidationError as exc:
            raise ValidationError(f"{path}: {exc}") from exc
        return self.import_graph(graph, index=index)

    def export(self) -> Graph:
        return self.store.export(self.user)

    def export_json(self) -> str:
        return dump_graph(self.export())

    def stats(self) -> Stats:
        return self.store.stats(self.user)

    def flagged_merges(self) -> list[str]:
        """Merges review made with middling confidence, oldest conversation first."""
        records = sorted(
            self.store.list_conversations(self.user),
            key=lambda c: (c.started_at is None, c.started_at, c.id),
        )
        return [line for record in records for line in record.flagged_merges]

    # --- recall and time ----------------------------------------------------------
    def sync_keys(self) -> tuple[int, int]:
        """Bring the embedding keys in line with the graph: (added, removed)."""
        return sync_keys(self.store, self.user, self.embedder)

    def recaller(self, settings: RecallSettings = DEFAULT) -> Recaller:
        if settings.name not in self._recallers:
            self._recallers[settings.name] = Recaller(self.store, self.embedder, settings)
        return self._recallers[settings.name]

    def recall(
        self,
        message: str,
        conversation_id: str | None = None,
        now: datetime | None = None,
        settings: RecallSettings = DEFAULT,
    ) -> RecallResult:
        """What to inject for ``message``. Never changes the graph: with a
        conversation id, the edges it injected are noted on that conversation's
        record and reinforced once when it closes."""
        result = self.recaller(settings).recall(self.user, message, now)
        if conversation_id and result.used_edges:
            record = self.store.get_conversation(self.user, conversation_id)
            record = record or Conversation(id=conversation_id, started_at=now or utcnow())
            used = list(dict.fromkeys([*record.used_edges, *result.used_edges]))
            self.store.upsert_conversation(self.user, record.evolve(used_edges=used))
        return result

    def close_conversation(self, conversation_id: str, now: datetime | None = None) -> int:
        """Reinforce the edges recall used in this conversation, once. Returns how many."""
        now = now or utcnow()
        record = self.store.get_conversation(self.user, conversation_id)
        if record is None:
            raise NotFoundError(f"no conversation {conversation_id!r} for user {self.user!r}")
        count = self.store.reinforce(self.user, record.used_edges, now, DECAY_RATES, REINFORCE_BY)
        self.store.upsert_conversation(self.user, record.evolve(used_edges=[], closed_at=now))
        return count

    # --- write path ------------------------------------------------------------------
    def ingest(
        self,
        transcript: Transcript | str | Path,
        conversation_id: str | None = None,
        now: datetime | None = None,
        llm: LLM | None = None,
        progress: Callable[[str], None] = lambda _: None,
    ) -> IngestReport:
        """A finished conversation through the write path. Safe to repeat: what is
        already in the graph is skipped, and an interrupted run resumes. Ends by
        reinforcing what recall used in that conversation."""
        if not isinstance(transcript, Transcript):
            transcript = read_transcript(transcript, conversation_id)
        if llm is None and self.settings.llm_base_url:
            llm = LLM(LLMConfig.from_settings(self.settings))
        ingestor = Ingestor(
            self.store,
            self.user,
            self.embedder,
            self.recaller(WRITE_CONTEXT),
            llm,
            use_tools=self.settings.llm_tools,
            progress=progress,
        )
        report = ingestor.ingest(transcript, now)
        record = self.store.get_conversation(self.user, transcript.id)
        if record is not None and record.used_edges:
            report.reinforced += record.used_edges
            self.close_conversation(transcript.id, now)
        return report

    # --- inspection and forgetting -----------------------------------------------------
    def find(self, name_or_id: str) -> list[Node]:
        """Entities by name, alias or id."""
        found = self.store.find_nodes(self.user, name_or_id)
        return found or self.store.get_nodes(self.user, [name_or_id])

    def describe(self, name_or_id: str) -> list[tuple[Node, list[Edge]]]:
        """Each entity by that name with every claim at it, history included."""
        nodes = self.find(name_or_id)
        if not nodes:
            raise NotFoundError(f"no entity named {name_or_id!r} for user {self.user!r}")
        return [(node, self.store.edges_touching(self.user, [node.id])) for node in nodes]

    def plan_forget(
        self,
        node: str | None = None,
        edge: str | None = None,
        conversation: str | None = None,
    ) -> Forgetting:
        """What forgetting one node (name or id), one edge or one conversation removes."""
        if node is not None:
            found = self.find(node)
            if len(found) != 1:
                raise NotFoundError(
                    f"{len(found)} entities match {node!r}; give one id"
                    + (f": {', '.join(n.id for n in found)}" if found else "")
                )
            target = found[0]
            own = self.store.edges_touching(self.user, [target.id])
            ends = {e.source for e in own} | {e.target for e in own}
            around = self.store.edges_touching(self.user, ends | {target.id})
            by_node = {
                n: [e for e in around if n in (e.source, e.target)] for n in ends | {target.id}
            }
            nodes = {n.id: n for n in self.store.get_nodes(self.user, ends)}
            return forget_node(target, by_node, nodes)
        if edge is not None:
            found_edges = self.store.get_edges(self.user, [edge])
            if not found_edges:
                raise NotFoundError(f"no edge {edge!r} for user {self.user!r}")
            around = self.store.edges_touching(self.user, [found_edges[0].source])
            return forget_edge(found_edges[0], around)
        if conversation is not None:
            if self.store.get_conversation(self.user, conversation) is None:
                raise NotFoundError(f"no conversation {conversation!r} for user {self.user!r}")
            graph = self.export()
            return forget_conversation(conversation, graph.nodes, graph.edges)
        raise ValidationError("say what to forget: a node, an edge or a conversation")

    def forget(self, plan: Forgetting) -> None:
        """Apply a plan of :meth:`plan_forget` (mended claims first, then removals)."""
        if plan.nodes_changed:
            self.store.upsert_nodes(self.user, plan.nodes_changed)
        if plan.edges_changed:
            self.store.upsert_edges(self.user, plan.edges_changed)
        if plan.edges:
            self.store.delete_edges(self.user, plan.edges)
        if plan.nodes:
            self.store.delete_nodes(self.user, plan.nodes)
        if plan.conversation:
            self.store.delete_conversation(self.user, plan.conversation)

    def decay(self, now: datetime | None = None, all_users: bool = False) -> DecayReport:
        """The daily pass: strengths as of ``now``, dormancy and expiry."""
        return self.store.decay(
            now or utcnow(), DECAY_RATES, DORMANT_BELOW, user=None if all_users else self.user
        )

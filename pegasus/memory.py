"""The Python API. :class:`Pegasus` is the process-wide core (one store connection,
one embedding model, one recall reference, shared by threads); :class:`Memory` is
one owner's view of it, with the same verbs as the CLI. Every verb that changes
memory is one :meth:`Store.apply`; every result is a pydantic model.

>>> with Pegasus("sqlite:///memory.db") as pegasus:
...     trevor = pegasus.for_user("trevor")
...     trevor.import_file("graph.json")
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from pegasus.config import Settings, load_settings
from pegasus.embed import Embedder, default_embedder
from pegasus.errors import NotFoundError, PegasusError, TooLargeError, ValidationError
from pegasus.interchange import Graph, Vectors, dump_graph, parse_graph
from pegasus.llm import LLM, LLMConfig
from pegasus.model import (
    CONTROL,
    LONE_SURROGATE,
    MAX_ID_CHARS,
    EmbeddingKey,
    Node,
    no_lone_surrogates,
    utcnow,
)
from pegasus.recall.engine import Recaller, RecallResult
from pegasus.recall.keys import claim_key_id, missing_keys, sync_keys
from pegasus.recall.ordinary import Ordinariness
from pegasus.recall.presets import DEFAULT, RecallSettings
from pegasus.results import Claim, Description
from pegasus.stores import Changes, DecayReport, Stats, Store, open_store
from pegasus.time.decay import RULE, DecayRule, reinforced_edge
from pegasus.write.context import WRITE_CONTEXT
from pegasus.write.forget import Forgetting, forget_conversation, forget_edge, forget_node
from pegasus.write.imports import ImportReport, merge_import
from pegasus.write.pipeline import Ingestor, IngestReport
from pegasus.write.transcript import Transcript, read_transcript, within_limit
from pegasus.write.used import UsedNotes

MAX_OWNER_CHARS = 200


def owner_name(user: str) -> str:
    """A memory owner's name as stored: NFC (two spellings of one visible name are one
    owner), trimmed; empty names, control characters, lone surrogates and very long names are
    refused.
    Names are compared exactly otherwise: "Alice" and "alice" are two owners."""
    name = unicodedata.normalize("NFC", user).strip() if isinstance(user, str) else ""
    if not name:
        raise ValidationError("a memory owner (user) must be named")
    if len(name) > MAX_OWNER_CHARS:
        raise ValidationError(f"a user name has at most {MAX_OWNER_CHARS} characters")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in name):
        raise ValidationError(
            f"user {user!r}: a user name has no control characters or lone surrogates"
        )
    return name


class Pegasus:
    """What a process holds once, whoever's memory it serves. Safe to share between
    threads; use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        store: str | Store | None = None,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        rule: DecayRule = RULE,
    ) -> None:
        self.settings = settings or load_settings(store=store if isinstance(store, str) else None)
        if isinstance(store, Store):
            self.store = store
        else:
            self.store = open_store(self.settings.store_url(), self.settings)
        self.rule = rule
        self.used = UsedNotes(self.store)  # written after the recalls that noted them
        self._embedder = embedder
        self._ordinariness: Ordinariness | None = None
        self._recallers: dict[RecallSettings, Recaller] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self.used.close()
        self.store.close()

    def __enter__(self) -> Pegasus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        with self._lock:
            if self._embedder is None:
                self._embedder = default_embedder(
                    self.settings.embed_model, self.settings.embed_runtime
                )
            return self._embedder

    def recaller(self, settings: RecallSettings = DEFAULT) -> Recaller:
        """A recaller for these settings; all share the one recall reference."""
        embedder = self.embedder
        with self._lock:
            if self._ordinariness is None:
                self._ordinariness = Ordinariness(embedder)
            if settings not in self._recallers:
                self._recallers[settings] = Recaller(
                    self.store, embedder, settings, self._ordinariness, self.rule
                )
            return self._recallers[settings]

    def for_user(self, user: str) -> Memory:
        return Memory(self, user)

    def warm(self, user: str | None = None) -> None:
        """Loads the embedding model, the recall reference and the owner's keys and
        graph (the default owner's) now (seconds, at 100k edges), so that the first
        recall of a process that lives on is as fast as the rest. Recall changes
        nothing in the graph."""
        user = self.settings.user if user is None else user
        recaller = self.recaller()
        self.store.warm(user)
        recaller.ordinariness.of(self.embedder.embed_batch(["warm up"]))
        recaller.recall(user, "warm up")

    def decay(self, now: datetime | None = None) -> DecayReport:
        """The daily pass over every owner: strengths as of ``now``, dormancy, expiry."""
        return self.store.decay(now or utcnow(), self.rule)


class Memory:
    """One memory owner's view of a :class:`Pegasus` core."""

    def __init__(self, core: Pegasus, user: str) -> None:
        self.core, self.user = core, owner_name(user)
        self._owns_core = False

    @classmethod
    def open(
        cls,
        store: str | Store | None = None,
        user: str | None = None,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
    ) -> Memory:
        """A memory with a core of its own, closed with it (scripts and tests)."""
        core = Pegasus(store, settings, embedder)
        try:
            memory = cls(core, core.settings.user if user is None else user)
        except ValidationError:
            core.close()
            raise
        memory._owns_core = True
        return memory

    def close(self) -> None:
        if self._owns_core:
            self.core.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def store(self) -> Store:
        return self.core.store

    @property
    def settings(self) -> Settings:
        return self.core.settings

    @property
    def rule(self) -> DecayRule:
        return self.core.rule

    @property
    def embedder(self) -> Embedder:
        return self.core.embedder

    # --- interchange ------------------------------------------------------------
    def import_graph(self, graph: Graph, index: bool = True) -> ImportReport:
        """Write a checked graph in one transaction, merged into what the memory
        already holds under the same ids; with ``index``, its names' embedding keys
        go in the same transaction."""
        nodes = {n.id: n for n in self.store.get_nodes(self.user, [n.id for n in graph.nodes])}
        edges = {e.id: e for e in self.store.get_edges(self.user, [e.id for e in graph.edges])}
        conversations = {
            c.id: stored
            for c in graph.conversations
            if (stored := self.store.get_conversation(self.user, c.id)) is not None
        }
        merged, report = merge_import(
            graph, nodes, edges, conversations, self.store.get_self(self.user)
        )
        keys: list[EmbeddingKey] = []
        if index:
            known = graph.vectors.by_text if graph.vectors else None
            if graph.vectors and not self.same_model(graph.vectors):
                report.vectors_of, known = graph.vectors.described(), None
            keys = missing_keys(self.store, self.user, self.embedder, merged, known)[0]
            report.keys_carried = sum(key.text in known for key in keys) if known else 0
        report.keys = len(keys)
        self.store.apply(self.user, Changes.of_graph(merged, keys))
        return report

    def import_file(self, path: str | Path, index: bool = True) -> ImportReport:
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

    def same_model(self, vectors: Vectors) -> bool:
        """Whether ``vectors`` were made by this memory's embedding model."""
        if vectors.model != self.embedder.name:
            return False
        return not vectors.by_text or vectors.dimensions == len(self.embedder.embed("size"))

    def export(self, vectors: bool = False) -> Graph:
        """The whole memory; with ``vectors``, its keys' vectors too (for an import
        that embeds nothing again), refused while some keys are of another size than
        this memory's model makes (a model changed without ``pegasus reindex``)."""
        self.core.used.flush()
        graph = self.store.export(self.user)
        if vectors:
            keys = self.store.list_keys(self.user, with_vectors=True)
            graph.vectors = Vectors(self.embedder.name, {key.text: key.vector for key in keys})
            if keys and not self.same_model(graph.vectors):
                raise ValidationError(f"the stored keys are not all {self.embedder.name}'s: run "
                                      "pegasus reindex, then export again")  # fmt: skip
        return graph

    def export_json(self, vectors: bool = False) -> str:
        return dump_graph(self.export(vectors))

    def stats(self) -> Stats:
        return self.store.stats(self.user)

    def ranked(self, strongest: bool = True, limit: int = 5, now: datetime | None = None
               ) -> list[Claim]:  # fmt: skip
        """The strongest (or faintest) live memories, as of the last daily pass."""
        return self.claims(self.store.ranked_edges(self.user, strongest, limit), now)

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
        return self.core.recaller(settings)

    def recall(
        self,
        message: str,
        conversation_id: str | None = None,
        now: datetime | None = None,
        settings: RecallSettings = DEFAULT,
    ) -> RecallResult:
        """What to inject for ``message``. Never changes the graph: with a
        conversation id, the edges it injected are noted on that conversation's
        record, after the answer (:mod:`pegasus.write.used`), and reinforced once
        when it closes. A message over ``PEGASUS_MAX_MESSAGE_CHARS`` is refused."""
        result = self.recaller(settings).recall(self.user, self.check_message(message), now)
        self.note_used(conversation_id, result.used_edges)
        return result

    def check_message(self, message: str) -> str:
        """``message``, if recall can take it: text, within PEGASUS_MAX_MESSAGE_CHARS."""
        limit = self.settings.max_message_chars
        if len(message) > limit:
            raise TooLargeError(f"the message has {len(message):,} characters, over the "
                                f"limit of {limit:,} (PEGASUS_MAX_MESSAGE_CHARS)")  # fmt: skip
        return no_lone_surrogates(message)

    def note_used(self, conversation_id: str | None, edge_ids: list[str]) -> None:
        """Edges a recall put before the model in this conversation (queued). An id
        no store would take is refused now, not when the note is written."""
        if conversation_id is None:
            return
        odd = CONTROL.search(conversation_id) or LONE_SURROGATE.search(conversation_id)
        if odd or not conversation_id or conversation_id != conversation_id.strip():
            raise ValidationError(f"conversation id {conversation_id!r}: no surrounding "
                                  "spaces, control characters or lone surrogates")  # fmt: skip
        if len(conversation_id) > MAX_ID_CHARS:
            raise ValidationError(f"a conversation id has at most {MAX_ID_CHARS} characters")
        if edge_ids:
            self.core.used.note(self.user, conversation_id, edge_ids)

    def close_conversation(self, conversation_id: str, now: datetime | None = None) -> int:
        """Reinforce the edges recall used in this conversation, once, in the same
        transaction that takes them off the record. Returns how many."""
        now = now or utcnow()
        self.core.used.flush()
        record = self.store.get_conversation(self.user, conversation_id)
        if record is None:
            raise NotFoundError(f"no conversation {conversation_id!r} for user {self.user!r}")
        edges = self.store.get_edges(self.user, record.used_edges)
        self.store.apply(
            self.user,
            Changes(
                strengths=[reinforced_edge(edge, now, self.rule) for edge in edges],
                closed={conversation_id: now},
                used_done={conversation_id: record.used_edges},
            ),
        )
        return len(edges)

    def decay(self, now: datetime | None = None) -> DecayReport:
        """The daily pass over this owner's memories (``Pegasus.decay`` for all)."""
        return self.store.decay(now or utcnow(), self.rule, user=self.user)

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
        reinforcing what recall used in that conversation. A transcript over
        ``PEGASUS_MAX_TRANSCRIPT_CHARS`` is refused."""
        limit = self.settings.max_transcript_chars
        if isinstance(transcript, Transcript):
            within_limit(transcript, limit)
        else:
            transcript = read_transcript(transcript, conversation_id, limit)
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
            rule=self.rule,
        )
        report = ingestor.ingest(transcript, now)
        self.core.used.flush()
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

    def claims(self, edges: Iterable, now: datetime | None = None) -> list[Claim]:
        """Edges as claims between named ends, with their state as of ``now``."""
        edges = list(edges)
        ends = {e.source for e in edges} | {e.target for e in edges}
        names = {n.id: n.name for n in self.store.get_nodes(self.user, ends)}
        now = now or utcnow()
        return [Claim.of(edge, names, now, self.rule) for edge in edges]

    def claims_by_id(self, edge_ids: Iterable[str], now: datetime | None = None) -> list[Claim]:
        return self.claims(self.store.get_edges(self.user, edge_ids), now)

    def describe(self, name_or_id: str, now: datetime | None = None) -> list[Description]:
        """Each entity by that name with every claim at it, history included."""
        nodes = self.find(name_or_id)
        if not nodes:
            raise NotFoundError(f"no entity named {name_or_id!r} for user {self.user!r}")
        return [
            Description(
                node=node, claims=self.claims(self.store.edges_touching(self.user, [node.id]), now)
            )
            for node in nodes
        ]

    def plan_forget(
        self,
        node: str | None = None,
        edge: str | None = None,
        conversation: str | None = None,
    ) -> Forgetting:
        """What forgetting one node (name or id), one edge or one conversation removes."""
        self.core.used.flush()  # a conversation noted but not written yet is one too
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
        """Apply a plan of :meth:`plan_forget` in one transaction."""
        # A deleted node takes its claims with it, and their keys must go too.
        gone = set(plan.edges)
        self.core.used.flush()  # a note after the forget would bring the record back
        if plan.nodes:
            gone |= {edge.id for edge in self.store.edges_touching(self.user, plan.nodes)}
        self.store.apply(
            self.user,
            Changes(
                nodes=plan.nodes_changed,
                edges=plan.edges_changed,
                delete_nodes=plan.nodes,
                delete_edges=plan.edges,
                delete_keys=[claim_key_id(edge_id) for edge_id in sorted(gone)],
                delete_conversations=[plan.conversation] if plan.conversation else [],
            ),
        )

"""Ingest: a transcript through extraction, cleaning, merge, review and commit.

Idempotent and resumable. The conversation record says how many turns are already
in the graph (and the hash of that prefix); the turns after them are cut into
bounded segments, each extracted into the journal and then committed in one
transaction together with the record's progress. A second run of the same
transcript finds nothing new; a grown one is ingested for its new turns; a killed
run resumes from the journal."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from pegasus.embed import Embedder
from pegasus.errors import ConfigError, LLMError, ValidationError
from pegasus.interchange import Graph
from pegasus.llm import LLM
from pegasus.model import Conversation, Kind, Node, node_id, utcnow
from pegasus.recall.engine import Recaller
from pegasus.recall.keys import key_changes
from pegasus.stores import Store
from pegasus.write.clean import Batch, Entity, clean_batch, is_placeholder
from pegasus.write.commit import Plan, plan_commit
from pegasus.write.context import graph_context
from pegasus.write.extract import Extraction, Extractor, Journal
from pegasus.write.merge import Action, decide, fold, nickname_forms
from pegasus.write.review import Verdict, parse_answer, review_messages
from pegasus.write.transcript import Transcript

MAX_SEGMENT_CHARS = 24_000  # of user text per extraction
ASSISTANT_CHARS = 300  # each assistant turn is shown abridged, as context only
NEAREST_NAMES = 10  # stored names fetched per entity by embedding, for the merge rules
USER_PLACEHOLDER = "User"


@dataclass
class IngestReport:
    conversation_id: str
    turns: int = 0
    new_turns: int = 0
    created: list[str] = field(default_factory=list)  # node ids
    merged: list[tuple[str, str]] = field(default_factory=list)  # (surface form, node id)
    relations_added: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # notes
    summary: str = ""

    @property
    def unchanged(self) -> bool:
        return self.new_turns == 0


def segments(transcript: Transcript, start: int) -> int:
    """Where the segment beginning at turn ``start`` ends: as many turns as fit in
    ``MAX_SEGMENT_CHARS`` of user text (at least one)."""
    size, end = 0, start
    for turn in transcript.turns[start:]:
        cost = len(turn.content) if turn.role == "user" else 0
        if end > start and size + cost > MAX_SEGMENT_CHARS:
            break
        size, end = size + cost, end + 1
    return end


def render_turns(transcript: Transcript, start: int, end: int) -> str:
    lines = []
    for turn in transcript.turns[start:end]:
        if turn.role == "user":
            lines.append(f"[user]\n{turn.content[:MAX_SEGMENT_CHARS]}")
        else:
            text = turn.content[:ASSISTANT_CHARS]
            lines.append(
                f"[assistant, abridged]\n{text}{'…' if len(turn.content) > ASSISTANT_CHARS else ''}"
            )
    return "\n\n".join(lines)


class Ingestor:
    def __init__(
        self,
        store: Store,
        user: str,
        embedder: Embedder,
        context_recaller: Recaller,
        llm: LLM | None,
        use_tools: bool = True,
        progress: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.store, self.user, self.embedder = store, user, embedder
        self.context_recaller, self.llm = context_recaller, llm
        self.use_tools, self.progress = use_tools, progress

    # --- the whole run --------------------------------------------------------------
    def ingest(self, transcript: Transcript, now: datetime | None = None) -> IngestReport:
        now = now or utcnow()
        report = IngestReport(transcript.id, turns=len(transcript.turns))
        record = self.store.get_conversation(self.user, transcript.id) or Conversation(
            id=transcript.id
        )
        done = record.turns_ingested
        if done > len(transcript.turns) or (
            done and transcript.prefix_hash(done) != record.content_hash
        ):
            raise ValidationError(
                f"conversation {transcript.id!r}: its first {done} turns are not the ones "
                "ingested before; ingest it under another --conversation-id"
            )
        record = record.evolve(
            started_at=transcript.started_at or record.started_at,
            ended_at=transcript.ended_at or record.ended_at,
        )
        at = transcript.dated_at or record.started_at or now
        while record.turns_ingested < len(transcript.turns):
            journal = self._journal(record, transcript)
            segment = journal.of("segment")[0]
            report.new_turns += segment["end"] - segment["start"]
            extraction = self._extract(journal, transcript, segment["start"], segment["end"])
            record = self._commit(journal, extraction, transcript, segment["end"], at, report)
        return report

    def _journal(self, record: Conversation, transcript: Transcript) -> Journal:
        """The journal of the segment under way, or a fresh one for the next segment.
        A journal written for different text is discarded."""
        journal = Journal(self.store, self.user, record)
        started = journal.of("segment")
        if started:
            end = started[0]["end"]
            if end <= len(transcript.turns) and transcript.prefix_hash(end) == started[0]["hash"]:
                return journal
            journal.record = journal.record.evolve(journal=[])
            journal.entries = []
        start = record.turns_ingested
        end = segments(transcript, start)
        journal.append(
            {"t": "segment", "start": start, "end": end, "hash": transcript.prefix_hash(end)}
        )
        return journal

    # --- extraction -----------------------------------------------------------------
    def _extract(
        self, journal: Journal, transcript: Transcript, start: int, end: int
    ) -> Extraction:
        turns = transcript.turns[start:end]
        if not any(turn.role == "user" for turn in turns):
            return Extraction()
        if self.llm is None:
            raise ConfigError(
                "no language model configured: set PEGASUS_LLM_BASE_URL and PEGASUS_LLM_MODEL"
            )
        user_text = "\n".join(turn.content for turn in turns if turn.role == "user")
        self_node = self._self_node()
        context = graph_context(self.context_recaller, self.user, user_text, self_node)
        when = transcript.dated_at.date().isoformat() if transcript.dated_at else "undated"
        earlier = f" (turns 1-{start} were recorded before)" if start else ""
        message = (
            f"Known memory:\n{context}\n\n"
            f"Conversation of {when}, turns {start + 1}-{end}{earlier}:\n\n"
            f"{render_turns(transcript, start, end)}"
        )
        extractor = Extractor(
            self.llm, journal, self._known, progress=self.progress, use_tools=self.use_tools
        )
        return extractor.run(message)

    def _known(self, name: str) -> list[Node]:
        return self.store.find_nodes(self.user, name)

    def _self_node(self) -> Node | None:
        self_id = self.store.get_self(self.user)
        found = self.store.get_nodes(self.user, [self_id]) if self_id else []
        return found[0] if found else None

    # --- merge and commit ---------------------------------------------------------------
    def _commit(
        self,
        journal: Journal,
        extraction: Extraction,
        transcript: Transcript,
        end: int,
        at: datetime,
        report: IngestReport,
    ) -> Conversation:
        self.progress("merging")
        ends = {name for r in extraction.relations for name in (r.source, r.target)}
        known = {
            fold(n) for node in self.store.find_nodes_named(self.user, ends) for n in node.names
        }
        batch = clean_batch(extraction.entities, extraction.relations, lambda n: fold(n) in known)
        notes = [*extraction.notes, *batch.notes]
        pool = self._merge_pool(batch.entities)
        self_id, pairs = self._self_node_for(batch, pool)
        ids, flagged, review_notes = self._resolve(journal, batch, pool, transcript)
        notes += review_notes
        by_name = self._names_to_ids(batch, ids, pool)

        def resolve(name: str) -> str | None:
            if is_placeholder(name):
                return self_id
            return by_name.get(fold(name))

        if self_id is None and batch.relations:
            self_id = resolve(batch.relations[0].source)
        pairs += [
            (entity, self_id if is_placeholder(entity.name) else ids[index])
            for index, entity in enumerate(batch.entities)
            if self_id or not is_placeholder(entity.name)
        ]
        claims = [(resolve(r.source), r.relation, resolve(r.target)) for r in batch.relations]
        stored_edges = self.store.edges_meeting(self.user, [c for c in claims if c[0] and c[2]])
        plan = plan_commit(pairs, batch.relations, resolve, pool, stored_edges, transcript.id, at)
        notes += plan.notes
        finish = extraction.finish
        record = journal.record.evolve(
            turns_ingested=end,
            content_hash=transcript.prefix_hash(end),
            journal=[],
            notes=[*journal.record.notes, *notes],
            flagged_merges=[*journal.record.flagged_merges, *flagged],
            summary=(finish.summary if finish and finish.summary else journal.record.summary),
            importance=finish.importance if finish else journal.record.importance,
            tags=[*journal.record.tags, *(finish.tags if finish else [])],
        )
        self._write(plan, pool, record, self_id)
        report.created += plan.created_nodes
        report.merged += plan.merged
        report.relations_added += plan.created_edges
        report.reinforced += plan.reinforced
        report.superseded += plan.superseded
        report.flagged += flagged
        report.dropped += notes
        report.summary = record.summary
        return record

    def _self_node_for(
        self, batch: Batch, pool: dict[str, Node]
    ) -> tuple[str | None, list[tuple[Entity, str]]]:
        """The self node's id, if it is known yet, and a placeholder "User" entity to
        create when the first write's first relation starts from a placeholder."""
        self_node = self._self_node()
        if self_node:
            pool.setdefault(self_node.id, self_node)
            return self_node.id, []
        first = batch.relations[0].source if batch.relations else None
        placeholder_first = (
            is_placeholder(first) if first else any(is_placeholder(e.name) for e in batch.entities)
        )
        if not placeholder_first:
            return None, []  # fixed below, from the first relation's source
        self_id = node_id(Kind.PERSON, USER_PLACEHOLDER)
        pool |= {n.id: n for n in self.store.get_nodes(self.user, [self_id])}
        return self_id, [(Entity(USER_PLACEHOLDER, Kind.PERSON, confidence=1.0), self_id)]

    def _merge_pool(self, entities: list[Entity]) -> dict[str, Node]:
        """The stored nodes the merge rules compare against: those with an entity's
        name, alias or nickname form, and those whose names embed nearest to it."""
        names = {name for e in entities for name in e.names}
        names |= {
            form for e in entities if e.kind == Kind.PERSON for form in nickname_forms(e.name)
        }
        pool = (
            {node.id: node for node in self.store.find_nodes_named(self.user, names)}
            if names
            else {}
        )
        if entities:
            vectors = self.embedder.embed_batch([e.name for e in entities])
            nearest = self.store.search_keys_many(self.user, vectors.tolist(), NEAREST_NAMES)
            refs = {key.ref for found in nearest for key, _ in found if key.kind == "node"}
            missing = refs - pool.keys()
            pool |= {node.id: node for node in self.store.get_nodes(self.user, missing)}
        return pool

    def _resolve(
        self, journal: Journal, batch: Batch, pool: dict[str, Node], transcript: Transcript
    ) -> tuple[list[str], list[str], list[str]]:
        """The node id each batch entity lands on, the flagged-merge lines, and notes."""
        ids: list[str] = []
        flagged: list[str] = []
        notes: list[str] = []
        taken: dict[str, str] = {}  # new node id -> folded name that claimed it
        for entity in batch.entities:
            if is_placeholder(entity.name):
                ids.append("")
                continue
            decision = decide(entity.name, entity.kind, pool.values(), hints=[entity.same_as or ""])
            target = decision.target
            if decision.action == Action.REVIEW:
                verdict = self._review(journal, entity, decision.candidates, pool, transcript)
                target = verdict.target
                if target is None and verdict.reason:
                    notes.append(verdict.reason)
                if verdict.flagged and target:
                    flagged.append(
                        f"{entity.name!r} ({entity.kind.value}) merged into {target} "
                        f"{pool[target].name!r} at {verdict.confidence:.2f} in "
                        f"{transcript.id}: {verdict.reason}".rstrip(": ")
                    )
            if target is None:
                target = self._fresh_id(entity, pool, taken)
                taken[target] = fold(entity.name)
            ids.append(target)
        return ids, flagged, notes

    def _fresh_id(self, entity: Entity, pool: dict[str, Node], taken: dict[str, str]) -> str:
        """The readable id for a new node, numbered when another node holds it."""
        base = node_id(entity.kind, entity.name)
        for number in itertools.count(1):
            candidate = base if number == 1 else f"{base}_{number}"
            if taken.get(candidate) == fold(entity.name):
                return candidate  # the same name said twice in this batch
            if candidate in taken or candidate in pool:
                continue
            if not self.store.get_nodes(self.user, [candidate]):
                return candidate
        raise AssertionError("unreachable")

    def _review(
        self,
        journal: Journal,
        entity: Entity,
        candidates: Iterable[str],
        pool: dict[str, Node],
        transcript: Transcript,
    ) -> Verdict:
        candidates = [c for c in candidates if c in pool]
        key = f"{entity.kind.value}|{fold(entity.name)}"
        recorded = [e for e in journal.of("review") if e["entity"] == key]
        if recorded:
            answer = recorded[0]["answer"]
        elif self.llm is None:
            return Verdict(None, reason=f"{entity.name!r} kept separate: no model to review it")
        else:
            self.progress(f"reviewing {entity.name!r}")
            excerpt = "\n".join(
                t.content
                for t in transcript.turns
                if t.role == "user" and fold(entity.name) in fold(t.content)
            ) or "\n".join(t.content for t in transcript.turns if t.role == "user")
            neighbourhoods = self.store.edges_touching(self.user, candidates)
            around = {
                c: [e for e in neighbourhoods if c in (e.source, e.target)] for c in candidates
            }
            ends = {e.source for e in neighbourhoods} | {e.target for e in neighbourhoods}
            names = {n.id: n.name for n in self.store.get_nodes(self.user, ends)}
            messages = review_messages(
                entity, excerpt, [pool[c] for c in candidates], around, names
            )
            try:
                answer = self.llm.chat(messages, json_mode=True).content
            except LLMError as exc:
                answer = f"(no answer: {exc})"
            journal.append({"t": "review", "entity": key, "answer": answer})
        verdict = parse_answer(answer, candidates)
        if verdict is None:
            return Verdict(
                None, reason=f"review of {entity.name!r}: unusable answer, kept separate"
            )
        return verdict

    def _names_to_ids(self, batch: Batch, ids: list[str], pool: dict[str, Node]) -> dict[str, str]:
        """How relation ends find their nodes: the batch's own names first, then any
        stored node by that name."""
        by_name: dict[str, str] = {}
        for node in pool.values():
            for name in node.names:
                by_name.setdefault(fold(name), node.id)
        ends = {fold(n) for r in batch.relations for n in (r.source, r.target)} - by_name.keys()
        for node in self.store.find_nodes_named(self.user, ends) if ends else []:
            for name in node.names:
                by_name.setdefault(fold(name), node.id)
        for entity, target in zip(batch.entities, ids, strict=True):
            if target:
                for name in entity.names:
                    by_name[fold(name)] = target
        return by_name

    def _write(
        self, plan: Plan, stored: dict[str, Node], record: Conversation, self_id: str | None
    ) -> None:
        """Keys first (harmless if the commit never lands: a rerun writes the same
        ones), then the graph and the record's progress in one transaction."""
        keys = key_changes(
            [stored.get(node.id) for node in plan.nodes.values()],
            list(plan.nodes.values()),
            {edge.relation for edge in plan.edges.values()},
        )
        if keys:
            self.progress(f"embedding {len(keys)} names")
            vectors = self.embedder.embed_batch([key.text for key in keys])
            self.store.upsert_keys(
                self.user,
                [
                    key.model_copy(update={"vector": v.tolist()})
                    for key, v in zip(keys, vectors, strict=True)
                ],
            )
        self.progress("writing")
        self.store.import_graph(
            self.user,
            Graph(
                nodes=list(plan.nodes.values()),
                edges=list(plan.edges.values()),
                conversations=[record],
                self_id=self_id if self_id and self.store.get_self(self.user) is None else None,
            ),
        )

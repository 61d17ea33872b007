"""Ingest: a transcript through extraction, cleaning, merge, review and commit.

Idempotent and resumable. The conversation record says how many turns are already
in the graph (and the hash of that prefix); the turns after them are cut into
bounded segments, each extracted into the journal and then committed in one
transaction together with the record's progress. A second run of the same
transcript finds nothing new; a grown one is ingested for its new turns; a killed
run resumes from the journal."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, Field

from pegasus.embed import Embedder
from pegasus.errors import ConfigError, ValidationError
from pegasus.llm import LLM, Usage
from pegasus.model import Conversation, Node, utcnow
from pegasus.recall.engine import Recaller
from pegasus.recall.keys import key_changes
from pegasus.stores import Changes, Store
from pegasus.text import fold
from pegasus.time.decay import RULE, DecayRule
from pegasus.write.clean import clean_batch
from pegasus.write.commit import Plan, plan_commit
from pegasus.write.context import graph_context
from pegasus.write.extract import Extraction, Extractor, Journal
from pegasus.write.provenance import attribute, ground
from pegasus.write.resolve import Resolver, stored_self
from pegasus.write.transcript import MAX_TURN_CHARS, Transcript

MAX_SEGMENT_CHARS = MAX_TURN_CHARS  # of user text per extraction (a longer turn was split)
ASSISTANT_CHARS = 300  # each assistant turn is shown abridged, as context only


class IngestReport(BaseModel):
    conversation_id: str
    turns: int = 0
    new_turns: int = 0
    created: list[str] = Field(default_factory=list)  # node ids
    merged: list[tuple[str, str]] = Field(default_factory=list)  # (surface form, node id)
    relations_added: list[str] = Field(default_factory=list)
    reinforced: list[str] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    flagged: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)  # notes
    summary: str = ""
    cost: Usage = Field(default_factory=Usage)  # this run's model calls

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
            lines.append(f"[{turn.speaker or 'user'}]\n{turn.content}")
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
        rule: DecayRule = RULE,
    ) -> None:
        self.store, self.user, self.embedder, self.rule = store, user, embedder, rule
        self.context_recaller, self.llm = context_recaller, llm
        self.use_tools, self.progress = use_tools, progress
        self._counted = Usage()  # the model's usage at the last commit

    # --- the whole run --------------------------------------------------------------
    def ingest(self, transcript: Transcript, now: datetime | None = None) -> IngestReport:
        now = now or utcnow()
        report = IngestReport(conversation_id=transcript.id, turns=len(transcript.turns))
        self._counted = self.llm.usage if self.llm else Usage()
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
        rest = transcript.turns[record.turns_ingested :]
        if self.llm is None and any(turn.role == "user" for turn in rest):
            raise ConfigError(
                "no language model configured: set PEGASUS_LLM_BASE_URL and PEGASUS_LLM_MODEL"
            )
        arrival_notes = list(transcript.notes)  # kept with the first commit of this run
        while record.turns_ingested < len(transcript.turns):
            journal = self._journal(record, transcript)
            segment = journal.of("segment")[0]
            report.new_turns += segment["end"] - segment["start"]
            extraction = self._extract(journal, transcript, segment["start"], segment["end"])
            record = self._commit(
                journal, extraction, transcript, segment["end"], at, report, arrival_notes
            )
            arrival_notes = []
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
        start = record.turns_ingested
        end = segments(transcript, start)
        segment = {"t": "segment", "start": start, "end": end, "hash": transcript.prefix_hash(end)}
        if started:
            journal.restart(segment)
        else:
            journal.append(segment)
        return journal

    # --- extraction -----------------------------------------------------------------
    def _extract(
        self, journal: Journal, transcript: Transcript, start: int, end: int
    ) -> Extraction:
        turns = transcript.turns[start:end]
        if not any(turn.role == "user" for turn in turns):
            return Extraction()
        assert self.llm is not None  # checked before anything was journaled
        user_text = "\n".join(turn.content for turn in turns if turn.role == "user")
        self_node = stored_self(self.store, self.user)
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

    # --- merge and commit ---------------------------------------------------------------
    def _commit(
        self,
        journal: Journal,
        extraction: Extraction,
        transcript: Transcript,
        end: int,
        at: datetime,
        report: IngestReport,
        arrival_notes: list[str],
    ) -> Conversation:
        self.progress("merging")
        ends = {name for r in extraction.relations for name in (r.source, r.target)}
        known = {
            fold(n) for node in self.store.find_nodes_named(self.user, ends) for n in node.names
        }
        batch = clean_batch(extraction.entities, extraction.relations, lambda n: fold(n) in known)
        said = transcript.turns[journal.of("segment")[0]["start"] : end]
        batch.relations, unsaid = attribute(batch.relations, said)
        unsaid += ground(batch, said)
        notes = [*arrival_notes, *extraction.notes, *batch.notes, *unsaid]
        resolver = Resolver(self.store, self.user, self.embedder, self.llm, self.progress)
        resolution = resolver.resolve(journal, batch, transcript)
        notes += resolution.notes
        resolve = resolution.node_for
        claims = [(resolve(r.source), r.relation, resolve(r.target)) for r in batch.relations]
        stored_edges = self.store.edges_meeting(self.user, [c for c in claims if c[0] and c[2]])
        pool = resolution.pool
        plan = plan_commit(
            resolution.pairs,
            batch.relations,
            resolve,
            pool,
            stored_edges,
            transcript.id,
            at,
            self.rule,
        )
        notes += plan.notes
        finish = extraction.finish
        spent = (self.llm.usage if self.llm else Usage()) - self._counted
        self._counted += spent
        report.cost += spent
        was = journal.record
        record = was.evolve(
            model_calls=was.model_calls + spent.calls,
            prompt_tokens=was.prompt_tokens + spent.prompt_tokens,
            completion_tokens=was.completion_tokens + spent.completion_tokens,
            model_seconds=was.model_seconds + spent.seconds,
            turns_ingested=end,
            content_hash=transcript.prefix_hash(end),
            journal=[],
            notes=[*journal.record.notes, *notes],
            flagged_merges=[*journal.record.flagged_merges, *resolution.flagged],
            summary=(finish.summary if finish and finish.summary else journal.record.summary),
            importance=finish.importance if finish else journal.record.importance,
            tags=[*journal.record.tags, *(finish.tags if finish else [])],
        )
        self._write(plan, pool, record, resolution.self_id)
        report.created += plan.created_nodes
        report.merged += plan.merged
        report.relations_added += plan.created_edges
        report.reinforced += plan.reinforced
        report.superseded += plan.superseded
        report.flagged += resolution.flagged
        report.dropped += notes
        report.summary = record.summary
        return record

    def _write(
        self, plan: Plan, stored: dict[str, Node], record: Conversation, self_id: str | None
    ) -> None:
        """The graph, the names' embedding keys and the record's progress, in one
        transaction: a commit that never lands leaves no trace to repair."""
        ends = {end for edge in plan.edges.values() for end in (edge.source, edge.target)}
        outside = ends - plan.nodes.keys() - stored.keys()
        keys = key_changes(
            [stored.get(node.id) for node in plan.nodes.values()],
            list(plan.nodes.values()),
            {edge.relation for edge in plan.edges.values()},
            plan.edges.values(),
            [*stored.values(), *(self.store.get_nodes(self.user, outside) if outside else [])],
        )
        if keys:
            self.progress(f"embedding {len(keys)} names and claims")
            vectors = self.embedder.embed_batch([key.text for key in keys])
            keys = [
                key.model_copy(update={"vector": v.tolist()})
                for key, v in zip(keys, vectors, strict=True)
            ]
        self.progress("writing")
        first_self = self_id if self_id and self.store.get_self(self.user) is None else None
        self.store.apply(
            self.user,
            Changes(
                nodes=list(plan.nodes.values()),
                edges=list(plan.edges.values()),
                conversations=[record],
                keys=keys,
                self_id=first_self,
            ),
        )

"""An import over a memory that already holds some of the file's ids: the file's
records are merged into the stored ones, never written over them, so that nothing
the memory learned (the conversations a claim came from, aliases, ingestion
progress) is lost. Pure: the caller fetches the stored records and writes."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from pegasus.interchange import Graph
from pegasus.model import Conversation, Edge, Node


class ImportReport(BaseModel):
    nodes: int = 0
    edges: int = 0
    conversations: int = 0
    merged_nodes: int = 0  # ids the memory already held: merged, not replaced
    merged_edges: int = 0
    keys: int = 0  # keys added for recall (names, relations, claims)
    keys_carried: int = 0  # of them, with the vector the file carried (not embedded)
    vectors_of: str | None = None  # the model of vectors the file carried but that went unused
    self_kept: str | None = None  # the memory's own self node, kept over the file's


def merged_node(stored: Node, incoming: Node) -> Node:
    """The file's node, keeping every name, property and conversation the memory had."""
    names = [*incoming.aliases, stored.name, *stored.aliases]
    return incoming.evolve(
        aliases=[name for name in names if name.casefold() != incoming.name.casefold()],
        properties={**stored.properties, **incoming.properties},
        conversations=[*stored.conversations, *incoming.conversations],
        confidence=max(stored.confidence, incoming.confidence),
        provisional=stored.provisional and incoming.provisional,
        created_at=min(stored.created_at, incoming.created_at),
        updated_at=max(stored.updated_at, incoming.updated_at),
    )


def merged_edge(stored: Edge, incoming: Edge) -> Edge:
    """The file's claim (its strength and state are what the file says), keeping the
    conversations the memory had it from, so forgetting one still finds it."""
    return incoming.evolve(
        properties={**stored.properties, **incoming.properties},
        conversations=[*stored.conversations, *incoming.conversations],
        created_at=min(stored.created_at, incoming.created_at),
    )


def merged_conversation(stored: Conversation, incoming: Conversation) -> Conversation:
    """The file's record over the stored one: what the file leaves empty (a summary,
    dates, ingestion progress and its journal) stays as stored, and lists are joined."""

    def joined(*lists: list[str]) -> list[str]:
        return list(dict.fromkeys(item for items in lists for item in items))

    progress = incoming if incoming.turns_ingested or incoming.journal else stored
    closed = [at for at in (stored.closed_at, incoming.closed_at) if at is not None]
    return incoming.evolve(
        started_at=incoming.started_at or stored.started_at,
        ended_at=incoming.ended_at or stored.ended_at,
        summary=incoming.summary or stored.summary,
        tags=joined(stored.tags, incoming.tags),
        notes=joined(stored.notes, incoming.notes),
        flagged_merges=joined(stored.flagged_merges, incoming.flagged_merges),
        turns_ingested=progress.turns_ingested,
        content_hash=progress.content_hash,
        pending_until=progress.pending_until,
        journal=progress.journal,
        closed_at=max(closed) if closed else None,
    )


def merge_import(
    graph: Graph,
    nodes: Mapping[str, Node],
    edges: Mapping[str, Edge],
    conversations: Mapping[str, Conversation],
    self_id: str | None,
) -> tuple[Graph, ImportReport]:
    """``graph`` with each record the memory already holds (by id) merged into the
    stored one; the memory's self node wins over the file's."""
    report = ImportReport(
        nodes=len(graph.nodes),
        edges=len(graph.edges),
        conversations=len(graph.conversations),
        merged_nodes=sum(node.id in nodes for node in graph.nodes),
        merged_edges=sum(edge.id in edges for edge in graph.edges),
    )
    if self_id is not None and graph.self_id not in (None, self_id):
        report.self_kept = self_id
    merged = Graph(
        nodes=[merged_node(nodes[n.id], n) if n.id in nodes else n for n in graph.nodes],
        edges=[merged_edge(edges[e.id], e) if e.id in edges else e for e in graph.edges],
        conversations=[
            merged_conversation(conversations[c.id], c) if c.id in conversations else c
            for c in graph.conversations
        ],
        self_id=graph.self_id if self_id is None else None,
    )
    return merged, report

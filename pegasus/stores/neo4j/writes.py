"""The one write of the Neo4j store: every change of one operation inside one
managed transaction, and the owner's key statistics kept exact in it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import neo4j
import numpy as np

from pegasus.errors import ValidationError
from pegasus.model import CLAIM_KEY, Conversation, Edge, EmbeddingKey, Node, check_relation, edge_id
from pegasus.stores.base import Changes
from pegasus.stores.neo4j.queries import cypher
from pegasus.stores.neo4j.records import (
    EDGE_TIMES,
    NODE_TIMES,
    batches,
    conversation_props,
    edge_props,
    node_props,
    possible_ends,
    times,
)


def _changes_graph(changes: Changes) -> bool:
    """Whether ``changes`` write what a copy of the graph holds: a recall's notes of
    used edges, journal lines and conversation records do not."""
    return bool(changes.nodes or changes.edges or changes.strengths or changes.delete_nodes
                or changes.delete_edges or changes.self_id is not None)  # fmt: skip


def write(tx: neo4j.ManagedTransaction, user: str, changes: Changes) -> None:
    """Every change of one operation inside ``tx``: the owner's versions first, then
    deletes, upserts and merges (:class:`pegasus.stores.base.Changes`)."""
    removing = bool(changes.delete_keys or changes.delete_nodes)
    if changes.keys or removing:
        record = tx.run(cypher("owner_keys_changed"), user=user, removing=removing).single()
        version = record["version"]
    if _changes_graph(changes):
        tx.run(cypher("owner_graph_changed"), user=user).consume()
    if removing:
        removed = _tx_key_vectors(tx, user, changes.delete_keys, changes.delete_nodes)
        _shift_key_stats(tx, user, removed=removed)
        tx.run(cypher("key_delete"), user=user, ids=list(changes.delete_keys)).consume()
    if changes.delete_edges:
        refs = list(_locate_edges(tx, user, changes.delete_edges).values())
        tx.run(cypher("edge_delete"), user=user, refs=refs).consume()
    if changes.delete_nodes:
        tx.run(cypher("node_delete"), user=user, ids=list(changes.delete_nodes)).consume()
    if changes.delete_conversations:
        ids = list(changes.delete_conversations)
        tx.run(cypher("conversation_delete"), user=user, ids=ids).consume()
    _tx_nodes(tx, user, changes.nodes)
    if changes.edges:
        _tx_edges(tx, user, changes.edges)
    _tx_conversations(tx, user, changes.conversations)
    if changes.keys:
        _tx_keys(tx, user, changes.keys, version)
    if changes.self_id is not None:
        tx.run(cypher("self_set"), user=user, node_id=changes.self_id).consume()
    _merge_conversations(tx, user, changes)


def _merge_conversations(tx: neo4j.ManagedTransaction, user: str, changes: Changes) -> None:
    for statement, mapping, field in (
        ("journal_append", changes.journal, "lines"),
        ("used_add", changes.used, "ids"),
        ("used_remove", changes.used_done, "ids"),
    ):
        rows = [{"id": key, field: list(values)} for key, values in mapping.items()]
        if rows:
            tx.run(cypher(statement), user=user, rows=rows).consume()
    if changes.closed:
        rows = [{"id": key, "at": at.isoformat()} for key, at in changes.closed.items()]
        tx.run(cypher("conversation_closed"), user=user, rows=rows).consume()
    if changes.strengths:
        where = _locate_edges(tx, user, [e.id for e in changes.strengths])
        rows = [
            {"ref": where[e.id], "strength": e.strength, "strength0": e.strength0,
             "touched_at": e.touched_at.isoformat(), "dormant": e.dormant,
             "expired": e.expired}
            for e in changes.strengths if e.id in where
        ]  # fmt: skip
        tx.run(cypher("edge_strengths"), user=user, rows=rows).consume()


def _tx_nodes(tx: neo4j.ManagedTransaction, user: str, nodes: Sequence[Node]) -> None:
    rows = [
        {"id": n.id, "kind": n.kind.value, "props": node_props(user, n),
         "times": times(n, NODE_TIMES)}
        for n in nodes
    ]  # fmt: skip
    for batch in batches(rows):
        tx.run(cypher("node_upsert"), user=user, rows=batch).consume()


def _tx_edges(tx: neo4j.ManagedTransaction, user: str, edges: Sequence[Edge]) -> None:
    ends = sorted({e.source for e in edges} | {e.target for e in edges})
    missing = {r["id"] for r in tx.run(cypher("nodes_missing"), user=user, ids=ends)}
    for edge in edges:
        for end in (edge.source, edge.target):
            if end in missing:
                raise ValidationError(f"edge {edge.id!r} points to {end!r}, which is not a node")
    # edge_clear finds stored versions between the new ends. An id that does not
    # name its ends (an imported file's own) may have had other ends: found by id.
    free = [e.id for e in edges if e.id != edge_id(e.source, e.relation, e.target)]
    if free:
        refs = [r["ref"] for r in tx.run(cypher("edges_locate"), user=user, ids=free)]
        tx.run(cypher("edge_delete"), user=user, refs=refs).consume()
    rows = [
        {
            "id": e.id,
            "source": e.source,
            "target": e.target,
            "relation": check_relation(e.relation),
            "props": edge_props(user, e),
            "times": times(e, EDGE_TIMES),
        }
        for e in edges
    ]
    for statement in ("edge_clear", "edge_create"):
        for batch in batches(rows):
            tx.run(cypher(statement), user=user, rows=batch).consume()


def _tx_conversations(
    tx: neo4j.ManagedTransaction, user: str, conversations: Sequence[Conversation]
) -> None:
    rows = [
        {
            "id": c.id,
            "props": {"user": user, **conversation_props(c)},
            "used": list(dict.fromkeys(c.used_edges)),
        }
        for c in conversations
    ]
    for batch in batches(rows):
        tx.run(cypher("conversation_upsert"), user=user, rows=batch).consume()


def _tx_keys(
    tx: neo4j.ManagedTransaction, user: str, keys: Sequence[EmbeddingKey], version: int
) -> None:
    removed = _tx_key_vectors(tx, user, ids=[k.id for k in keys])
    rows = [k.model_dump() for k in keys]
    for batch in batches(rows):
        tx.run(cypher("key_upsert"), user=user, rows=batch, version=version).consume()
    named = [k.vector for k in keys if k.kind != CLAIM_KEY]
    _shift_key_stats(tx, user, removed=removed, added=named)


def _locate_edges(tx: neo4j.ManagedTransaction, user: str, ids: Iterable[str]) -> dict[str, str]:
    """Edge id -> element id, inside ``tx``. Relationship properties have no index
    across types, so edges are found between the ends their ids name, and only
    ids that name no ends walk the owner's relationships."""
    ids = list(dict.fromkeys(ids))
    ends = [end for edge in ids for end in possible_ends(edge)]
    records = tx.run(cypher("edges_between"), user=user, ends=ends)
    found = {r["id"]: r["ref"] for r in records}
    rest = [edge for edge in ids if edge not in found]
    if rest:
        records = tx.run(cypher("edges_locate"), user=user, ids=rest)
        found.update({r["id"]: r["ref"] for r in records})
    return found


def _tx_key_vectors(
    tx: neo4j.ManagedTransaction, user: str, ids: Sequence[str] = (), refs: Sequence[str] = ()
) -> list[list[float]]:
    """Stored vectors of keys about to be replaced or deleted (by key id, or by
    the node they name), so the owner's key sum can be kept exact."""
    records = tx.run(cypher("key_vectors"), user=user, ids=list(ids), refs=list(refs))
    return [r["vector"] for r in records if r["vector"] is not None]


def _shift_key_stats(
    tx: neo4j.ManagedTransaction,
    user: str,
    removed: Sequence[Sequence[float]] = (),
    added: Sequence[Sequence[float]] = (),
) -> None:
    """Keep the owner's running key sum exact within the writing transaction."""
    if not removed and not added:
        return
    record = tx.run(cypher("key_stats_get"), user=user).single()
    dims = len((list(added) or list(removed))[0])
    total = np.zeros(dims) if record is None or record["sum"] is None else np.array(record["sum"])
    count = 0 if record is None or record["count"] is None else int(record["count"])
    if len(total) != dims:  # a new embedding model: start the sum again
        total, count = np.zeros(dims), 0
    if removed:
        total -= np.asarray(removed, dtype=float).sum(axis=0)
    if added:
        total += np.asarray(added, dtype=float).sum(axis=0)
    count = max(0, count - len(removed) + len(added))
    tx.run(cypher("key_stats_set"), user=user, sum=total.tolist(), count=count).consume()

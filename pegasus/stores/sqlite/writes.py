"""The one write of the SQLite store: every change of one operation inside the
caller's transaction, in the order :class:`pegasus.stores.base.Changes` gives."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from pegasus.errors import ValidationError
from pegasus.model import Conversation, Edge, EmbeddingKey, Node, name_key
from pegasus.stores.base import Changes
from pegasus.stores.sqlite.rows import (
    APART,
    EDGE_COLUMNS,
    NODE_COLUMNS,
    chunks,
    edge_row,
    marks,
    node_row,
    ts,
)


def write(db: sqlite3.Connection, user: str, changes: Changes) -> None:
    """Deletes, then upserts, then the merges; an edge left without its ends raises
    (and so rolls the transaction back)."""
    _delete(db, user, changes)
    _write_nodes(db, user, changes.nodes)
    _write_edges(db, user, changes.edges)
    _write_conversations(db, user, changes.conversations)
    _write_keys(db, user, changes.keys)
    if changes.self_id is not None:
        db.execute("INSERT OR REPLACE INTO owners VALUES (?, ?)", (user, changes.self_id))
    _check_ends(db, user, changes.edges)
    _merge_conversations(db, user, changes)


def _delete(db: sqlite3.Connection, user: str, changes: Changes) -> None:
    for table, column, ids in (
        ("keys", "id", changes.delete_keys),
        ("edges", "id", changes.delete_edges),
        ("edges", "source", changes.delete_nodes),
        ("edges", "target", changes.delete_nodes),
        ("nodes", "id", changes.delete_nodes),
        ("node_names", "node_id", changes.delete_nodes),
        ("owners", "self_id", changes.delete_nodes),
        ("conversations", "id", changes.delete_conversations),
        ("journal_lines", "conversation", changes.delete_conversations),
        ("used_edges", "conversation", changes.delete_conversations),
    ):
        for chunk in chunks(ids):
            db.execute(
                f"DELETE FROM {table} WHERE user = ? AND {column} IN ({marks(chunk)})",
                [user, *chunk],
            )
    for chunk in chunks(changes.delete_nodes):
        db.execute(
            f"DELETE FROM keys WHERE user = ? AND kind = 'node' AND ref IN ({marks(chunk)})",
            [user, *chunk],
        )


def _write_nodes(db: sqlite3.Connection, user: str, nodes: Sequence[Node]) -> None:
    db.executemany(
        f"INSERT OR REPLACE INTO nodes ({NODE_COLUMNS}) VALUES ({marks(range(11))})",
        [node_row(user, n) for n in nodes],
    )
    for chunk in chunks(n.id for n in nodes):
        db.execute(
            f"DELETE FROM node_names WHERE user = ? AND node_id IN ({marks(chunk)})",
            [user, *chunk],
        )
    db.executemany(
        "INSERT OR IGNORE INTO node_names VALUES (?, ?, ?)",
        [(user, n.id, name_key(name)) for n in nodes for name in n.names],
    )


def _write_edges(db: sqlite3.Connection, user: str, edges: Sequence[Edge]) -> None:
    db.executemany(
        f"INSERT OR REPLACE INTO edges ({EDGE_COLUMNS}) VALUES ({marks(range(20))})",
        [edge_row(user, e) for e in edges],
    )


def _check_ends(db: sqlite3.Connection, user: str, edges: Sequence[Edge]) -> None:
    """Refuse (and so roll back) edges whose ends are not nodes once all is written."""
    ends = {e.source for e in edges} | {e.target for e in edges}
    found: set[str] = set()
    for chunk in chunks(ends):
        found.update(
            r[0]
            for r in db.execute(
                f"SELECT id FROM nodes WHERE user = ? AND id IN ({marks(chunk)})",
                [user, *chunk],
            )
        )
    for edge in edges:
        for end in (edge.source, edge.target):
            if end not in found:
                raise ValidationError(f"edge {edge.id!r} points to {end!r}, which is not a node")


def _write_conversations(
    db: sqlite3.Connection, user: str, conversations: Sequence[Conversation]
) -> None:
    for record in conversations:
        db.execute(
            "INSERT OR REPLACE INTO conversations VALUES (?, ?, ?)",
            (user, record.id, record.model_dump_json(exclude=APART)),
        )
        db.execute(
            "DELETE FROM journal_lines WHERE user = ? AND conversation = ?", (user, record.id)
        )
        _append_journal(db, user, record.id, record.journal)
        _add_used(db, user, record.id, record.used_edges)


def _merge_conversations(db: sqlite3.Connection, user: str, changes: Changes) -> None:
    for conversation in {*changes.journal, *changes.used}:
        db.execute(
            "INSERT OR IGNORE INTO conversations VALUES (?, ?, ?)",
            (user, conversation, Conversation(id=conversation).model_dump_json(exclude=APART)),
        )
    for conversation, lines in changes.journal.items():
        _append_journal(db, user, conversation, lines)
    for conversation, edge_ids in changes.used.items():
        _add_used(db, user, conversation, edge_ids)
    db.executemany(
        "UPDATE conversations SET record = json_set(record, '$.closed_at', ?) "
        "WHERE user = ? AND id = ?",
        [(at.isoformat(), user, conversation) for conversation, at in changes.closed.items()],
    )
    db.executemany(
        "UPDATE edges SET strength = ?, strength0 = ?, touched_at = ?, dormant = ?, "
        "expired = ? WHERE user = ? AND id = ?",
        [(e.strength, e.strength0, ts(e.touched_at), int(e.dormant), int(e.expired), user,
          e.id) for e in changes.strengths],
    )  # fmt: skip
    for conversation, edge_ids in changes.used_done.items():
        for chunk in chunks(edge_ids):
            db.execute(
                "DELETE FROM used_edges WHERE user = ? AND conversation = ? "
                f"AND edge IN ({marks(chunk)})",
                [user, conversation, *chunk],
            )


def _append_journal(
    db: sqlite3.Connection, user: str, conversation: str, lines: Sequence[str]
) -> None:
    if not lines:
        return
    last = db.execute(
        "SELECT max(seq) FROM journal_lines WHERE user = ? AND conversation = ?",
        (user, conversation),
    ).fetchone()[0]
    start = -1 if last is None else last
    db.executemany(
        "INSERT INTO journal_lines VALUES (?, ?, ?, ?)",
        [(user, conversation, start + 1 + i, line) for i, line in enumerate(lines)],
    )


def _add_used(
    db: sqlite3.Connection, user: str, conversation: str, edge_ids: Sequence[str]
) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO used_edges (user, conversation, edge) VALUES (?, ?, ?)",
        [(user, conversation, edge) for edge in edge_ids],
    )


def _write_keys(db: sqlite3.Connection, user: str, keys: Sequence[EmbeddingKey]) -> None:
    db.executemany(
        # An upsert, not a replace: the claim-words triggers see an update.
        "INSERT INTO keys VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user, id) DO UPDATE SET "
        "text = excluded.text, ref = excluded.ref, kind = excluded.kind, "
        "vector = excluded.vector",
        [
            (user, k.id, k.text, k.ref, k.kind, np.asarray(k.vector, np.float32).tobytes())
            for k in keys
        ],
    )

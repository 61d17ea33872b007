"""The embedded store: one SQLite file, numpy for vector search, no server.

The zero-setup default. It keeps the same contract as the Neo4j store; timestamps
are stored as whole microseconds so the decay pass is arithmetic, and the decay formula
itself is :mod:`pegasus.time.decay`'s, registered as an SQL function.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from pegasus.errors import StoreError, ValidationError
from pegasus.interchange import Graph
from pegasus.model import (
    Cardinality,
    Conversation,
    Edge,
    EmbeddingKey,
    Kind,
    Node,
    Stability,
    check_relation,
)
from pegasus.stores.base import DecayReport, Stats, Store
from pegasus.time.decay import SECONDS_PER_DAY, decayed, reinforced

CHUNK = 500  # ids per IN (...) list, well under SQLite's variable limit

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE nodes (
            user TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
            aliases TEXT NOT NULL, properties TEXT NOT NULL, confidence REAL NOT NULL,
            conversations TEXT NOT NULL, provisional INTEGER NOT NULL,
            created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
            PRIMARY KEY (user, id)
        );
        CREATE TABLE node_names (
            user TEXT NOT NULL, node_id TEXT NOT NULL, name TEXT NOT NULL,
            PRIMARY KEY (user, name, node_id)
        );
        CREATE INDEX node_names_by_node ON node_names (user, node_id);
        CREATE TABLE edges (
            user TEXT NOT NULL, id TEXT NOT NULL, source TEXT NOT NULL, target TEXT NOT NULL,
            relation TEXT NOT NULL, strength REAL NOT NULL, strength0 REAL NOT NULL,
            touched_at INTEGER NOT NULL, confidence REAL NOT NULL, stability TEXT NOT NULL,
            cardinality TEXT NOT NULL, expires_at INTEGER, snippet TEXT NOT NULL,
            evidence TEXT NOT NULL, properties TEXT NOT NULL, conversations TEXT NOT NULL,
            superseded_by TEXT, dormant INTEGER NOT NULL, expired INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (user, id)
        );
        CREATE INDEX edges_by_source ON edges (user, source);
        CREATE INDEX edges_by_target ON edges (user, target);
        CREATE INDEX edges_by_relation ON edges (user, relation);
        CREATE TABLE conversations (
            user TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL,
            PRIMARY KEY (user, id)
        );
        CREATE TABLE owners (user TEXT PRIMARY KEY, self_id TEXT);
        CREATE TABLE keys (
            user TEXT NOT NULL, id TEXT NOT NULL, text TEXT NOT NULL, ref TEXT NOT NULL,
            kind TEXT NOT NULL, vector BLOB NOT NULL,
            PRIMARY KEY (user, id)
        );
        CREATE INDEX keys_by_ref ON keys (user, ref);
        """,
    ),
    (
        # The write path looks up a source's claims of one relation: on the user's
        # own node (a quarter of all edges) the source index alone read them all.
        "0002_edges_by_source_relation",
        """
        CREATE INDEX edges_by_source_relation ON edges (user, source, relation);
        DROP INDEX edges_by_source;
        """,
    ),
]

NODE_COLUMNS = (
    "user, id, name, kind, aliases, properties, confidence, conversations, provisional, "
    "created_at, updated_at"
)
EDGE_COLUMNS = (
    "user, id, source, target, relation, strength, strength0, touched_at, confidence, "
    "stability, cardinality, expires_at, snippet, evidence, properties, conversations, "
    "superseded_by, dormant, expired, created_at"
)
LIVE = "superseded_by IS NULL AND dormant = 0 AND expired = 0"


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
MICROSECONDS_PER_DAY = SECONDS_PER_DAY * 1e6


def _ts(value: datetime | None) -> int | None:
    """Timestamps are stored as whole microseconds since the epoch: exact and sortable."""
    return None if value is None else (value - EPOCH) // MICROSECOND


def _dt(value: int | None) -> datetime | None:
    return None if value is None else EPOCH + value * MICROSECOND


def _chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    batch = list(dict.fromkeys(ids))
    for start in range(0, len(batch), CHUNK):
        yield batch[start : start + CHUNK]


def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def _node_row(user: str, node: Node) -> tuple[Any, ...]:
    return (
        user, node.id, node.name, node.kind.value, json.dumps(node.aliases),
        json.dumps(node.properties), node.confidence, json.dumps(node.conversations),
        int(node.provisional), _ts(node.created_at), _ts(node.updated_at),
    )  # fmt: skip


def _edge_row(user: str, edge: Edge) -> tuple[Any, ...]:
    return (
        user, edge.id, edge.source, edge.target, edge.relation, edge.strength,
        edge.strength0, _ts(edge.touched_at), edge.confidence, edge.stability.value,
        edge.cardinality.value, _ts(edge.expires_at), edge.snippet, edge.evidence,
        json.dumps(edge.properties), json.dumps(edge.conversations), edge.superseded_by,
        int(edge.dormant), int(edge.expired), _ts(edge.created_at),
    )  # fmt: skip


# Rows were validated on the way in: reading them back skips validation (it
# dominated recall's subgraph pull), but still builds the proper types. Enum
# members by plain dict lookup and empty JSON without the parser: calling the enum
# classes and json.loads were a third of a 100k-edge pull.
KINDS = {kind.value: kind for kind in Kind}
STABILITIES = {stability.value: stability for stability in Stability}
CARDINALITIES = {cardinality.value: cardinality for cardinality in Cardinality}
_EMPTY = {"[]": list, "{}": dict}


def _json(text: str) -> Any:
    empty = _EMPTY.get(text)
    return empty() if empty else json.loads(text)


def _with_vector(key: EmbeddingKey, vector: np.ndarray) -> EmbeddingKey:
    return EmbeddingKey.model_construct(
        id=key.id, text=key.text, ref=key.ref, kind=key.kind, vector=vector
    )


def _node_from(row: sqlite3.Row) -> Node:
    return Node.model_construct(
        id=row["id"], name=row["name"], kind=KINDS[row["kind"]],
        aliases=_json(row["aliases"]), properties=_json(row["properties"]),
        confidence=row["confidence"], conversations=_json(row["conversations"]),
        provisional=bool(row["provisional"]), created_at=_dt(row["created_at"]),
        updated_at=_dt(row["updated_at"]),
    )  # fmt: skip


def _edge_from(row: sqlite3.Row) -> Edge:
    return Edge.model_construct(
        id=row["id"], source=row["source"], target=row["target"], relation=row["relation"],
        strength=row["strength"], strength0=row["strength0"],
        touched_at=_dt(row["touched_at"]), confidence=row["confidence"],
        stability=STABILITIES[row["stability"]], cardinality=CARDINALITIES[row["cardinality"]],
        expires_at=_dt(row["expires_at"]), snippet=row["snippet"], evidence=row["evidence"],
        properties=_json(row["properties"]), conversations=_json(row["conversations"]),
        superseded_by=row["superseded_by"], dormant=bool(row["dormant"]),
        expired=bool(row["expired"]), created_at=_dt(row["created_at"]),
    )  # fmt: skip


class SQLiteStore(Store):
    """A store in one SQLite file (``":memory:"`` for a throwaway one)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {self.path}: {exc}") from exc
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=OFF")
        self._lock = threading.RLock()
        self._vectors: dict[str, tuple[list[EmbeddingKey], np.ndarray, np.ndarray | None]] = {}
        self._migrate()

    # --- plumbing -------------------------------------------------------------
    def _migrate(self) -> None:
        with self._tx() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
            )
            done = {row[0] for row in db.execute("SELECT name FROM schema_migrations")}
            for name, script in MIGRATIONS:
                if name in done:
                    continue
                for statement in filter(str.strip, script.split(";")):
                    db.execute(statement)
                db.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?)",
                    (name, _ts(datetime.now(UTC))),
                )

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT name FROM schema_migrations ORDER BY name")]

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path}: {exc}") from exc

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- writes -----------------------------------------------------------------
    def _write_nodes(self, db: sqlite3.Connection, user: str, nodes: Sequence[Node]) -> None:
        db.executemany(
            f"INSERT OR REPLACE INTO nodes ({NODE_COLUMNS}) VALUES ({_marks(range(11))})",
            [_node_row(user, n) for n in nodes],
        )
        for chunk in _chunks(n.id for n in nodes):
            db.execute(
                f"DELETE FROM node_names WHERE user = ? AND node_id IN ({_marks(chunk)})",
                [user, *chunk],
            )
        db.executemany(
            "INSERT OR IGNORE INTO node_names VALUES (?, ?, ?)",
            [(user, n.id, name.casefold()) for n in nodes for name in n.names],
        )

    def _write_edges(self, db: sqlite3.Connection, user: str, edges: Sequence[Edge]) -> None:
        ends = {e.source for e in edges} | {e.target for e in edges}
        found: set[str] = set()
        for chunk in _chunks(ends):
            found.update(
                r[0]
                for r in db.execute(
                    f"SELECT id FROM nodes WHERE user = ? AND id IN ({_marks(chunk)})",
                    [user, *chunk],
                )
            )
        for edge in edges:
            for end in (edge.source, edge.target):
                if end not in found:
                    raise ValidationError(
                        f"edge {edge.id!r} points to {end!r}, which is not a node"
                    )
        db.executemany(
            f"INSERT OR REPLACE INTO edges ({EDGE_COLUMNS}) VALUES ({_marks(range(20))})",
            [_edge_row(user, e) for e in edges],
        )

    def upsert_nodes(self, user: str, nodes: Sequence[Node]) -> None:
        with self._tx() as db:
            self._write_nodes(db, user, nodes)

    def upsert_edges(self, user: str, edges: Sequence[Edge]) -> None:
        with self._tx() as db:
            self._write_edges(db, user, edges)

    def upsert_conversation(self, user: str, conversation: Conversation) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO conversations VALUES (?, ?, ?)",
                (user, conversation.id, conversation.model_dump_json()),
            )

    def set_self(self, user: str, node_id: str) -> None:
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO owners VALUES (?, ?)", (user, node_id))

    def import_graph(self, user: str, graph: Graph) -> None:
        with self._tx() as db:
            self._write_nodes(db, user, graph.nodes)
            self._write_edges(db, user, graph.edges)
            db.executemany(
                "INSERT OR REPLACE INTO conversations VALUES (?, ?, ?)",
                [(user, c.id, c.model_dump_json()) for c in graph.conversations],
            )
            if graph.self_id is not None:
                db.execute("INSERT OR REPLACE INTO owners VALUES (?, ?)", (user, graph.self_id))

    def delete_nodes(self, user: str, ids: Iterable[str]) -> None:
        with self._tx() as db:
            for chunk in _chunks(ids):
                marks = _marks(chunk)
                args = [user, *chunk]
                db.execute(
                    f"DELETE FROM edges WHERE user = ? AND (source IN ({marks}) "
                    f"OR target IN ({marks}))",
                    [user, *chunk, *chunk],
                )
                db.execute(f"DELETE FROM nodes WHERE user = ? AND id IN ({marks})", args)
                db.execute(f"DELETE FROM node_names WHERE user = ? AND node_id IN ({marks})", args)
                db.execute(
                    f"DELETE FROM keys WHERE user = ? AND kind = 'node' AND ref IN ({marks})", args
                )
                db.execute(f"DELETE FROM owners WHERE user = ? AND self_id IN ({marks})", args)
        self._vectors.pop(user, None)

    def delete_edges(self, user: str, ids: Iterable[str]) -> None:
        with self._tx() as db:
            for chunk in _chunks(ids):
                db.execute(
                    f"DELETE FROM edges WHERE user = ? AND id IN ({_marks(chunk)})", [user, *chunk]
                )

    def delete_conversation(self, user: str, conversation_id: str) -> None:
        with self._tx() as db:
            db.execute(
                "DELETE FROM conversations WHERE user = ? AND id = ?", (user, conversation_id)
            )

    # --- reads ----------------------------------------------------------------
    def _select_in(self, sql: str, user: str, ids: Iterable[str]) -> list[sqlite3.Row]:
        rows: list[sqlite3.Row] = []
        for chunk in _chunks(ids):
            rows.extend(self._rows(sql.format(marks=_marks(chunk)), [user, *chunk]))
        return rows

    def get_nodes(self, user: str, ids: Iterable[str]) -> list[Node]:
        rows = self._select_in("SELECT * FROM nodes WHERE user = ? AND id IN ({marks})", user, ids)
        return [_node_from(r) for r in rows]

    def get_edges(self, user: str, ids: Iterable[str]) -> list[Edge]:
        rows = self._select_in("SELECT * FROM edges WHERE user = ? AND id IN ({marks})", user, ids)
        return [_edge_from(r) for r in rows]

    def list_conversations(self, user: str) -> list[Conversation]:
        rows = self._rows("SELECT record FROM conversations WHERE user = ? ORDER BY id", (user,))
        return [Conversation.model_validate_json(r["record"]) for r in rows]

    def get_conversation(self, user: str, conversation_id: str) -> Conversation | None:
        rows = self._rows(
            "SELECT record FROM conversations WHERE user = ? AND id = ?", (user, conversation_id)
        )
        return Conversation.model_validate_json(rows[0][0]) if rows else None

    def get_self(self, user: str) -> str | None:
        rows = self._rows("SELECT self_id FROM owners WHERE user = ?", (user,))
        return rows[0][0] if rows else None

    def find_nodes_named(self, user: str, names: Iterable[str]) -> list[Node]:
        folded = list(dict.fromkeys(name.strip().casefold() for name in names))
        rows = self._select_in(
            "SELECT n.* FROM node_names AS nn JOIN nodes AS n ON n.user = nn.user "
            "AND n.id = nn.node_id WHERE nn.user = ? AND nn.name IN ({marks})",
            user,
            folded,
        )
        unique = {r["id"]: r for r in rows}
        return [_node_from(unique[key]) for key in sorted(unique)]

    def edges_meeting(self, user: str, claims: Iterable[tuple[str, str, str]]) -> list[Edge]:
        sql = (
            "SELECT * FROM edges WHERE user = ? AND source = ? AND relation = ? AND "
            "(target = ? OR (cardinality = 'one_to_one' AND superseded_by IS NULL))"
        )
        rows = {
            row["id"]: row
            for claim in dict.fromkeys(claims)
            for row in self._rows(sql, (user, *claim))
        }
        return [_edge_from(row) for row in rows.values()]

    def edges_touching(self, user: str, node_ids: Iterable[str]) -> list[Edge]:
        return self._edges_around(user, list(node_ids), live_only=False)

    def _edges_around(self, user: str, node_ids: list[str], live_only: bool) -> list[Edge]:
        live = f" AND {LIVE}" if live_only else ""
        rows = self._select_in(
            f"SELECT * FROM edges WHERE user = ? AND source IN ({{marks}}){live}", user, node_ids
        ) + self._select_in(
            f"SELECT * FROM edges WHERE user = ? AND target IN ({{marks}}){live}", user, node_ids
        )
        unique = {r["id"]: r for r in rows}
        return [_edge_from(r) for r in unique.values()]

    def edges_with_relation(self, user: str, relations: Iterable[str]) -> list[Edge]:
        rows = self._select_in(
            f"SELECT * FROM edges WHERE user = ? AND relation IN ({{marks}}) AND {LIVE}",
            user,
            relations,
        )
        return [_edge_from(r) for r in rows]

    def subgraph(
        self,
        user: str,
        seed_ids: Iterable[str],
        hops: int = 2,
        live_only: bool = True,
        stop_at: Iterable[str] = (),
        with_nodes: bool = True,
    ) -> Graph:
        reached = set(seed_ids)
        frontier = set(reached)
        stops = set(stop_at)
        edges: dict[str, Edge] = {}
        for hop in range(hops):
            if hop > 0:
                frontier -= stops
            if not frontier:
                break
            crossed = self._edges_around(user, sorted(frontier), live_only)
            edges.update((e.id, e) for e in crossed)
            ends = {e.source for e in crossed} | {e.target for e in crossed}
            frontier = ends - reached
            reached |= ends
        nodes = self.get_nodes(user, reached) if with_nodes else []
        return Graph(nodes=nodes, edges=list(edges.values()))

    def export(self, user: str) -> Graph:
        nodes = [_node_from(r) for r in self._rows("SELECT * FROM nodes WHERE user = ?", (user,))]
        edges = [_edge_from(r) for r in self._rows("SELECT * FROM edges WHERE user = ?", (user,))]
        return Graph(nodes, edges, self.list_conversations(user), self.get_self(user))

    def ranked_edges(self, user: str, strongest: bool, limit: int = 5) -> list[Edge]:
        order = "DESC" if strongest else "ASC"
        rows = self._rows(
            f"SELECT * FROM edges WHERE user = ? AND {LIVE} ORDER BY strength {order}, id LIMIT ?",
            (user, limit),
        )
        return [_edge_from(r) for r in rows]

    def stats(self, user: str) -> Stats:
        def count(sql: str) -> int:
            return int(self._rows(sql, (user,))[0][0])

        return Stats(
            nodes=count("SELECT count(*) FROM nodes WHERE user = ?"),
            edges=count("SELECT count(*) FROM edges WHERE user = ?"),
            conversations=count("SELECT count(*) FROM conversations WHERE user = ?"),
            keys=count("SELECT count(*) FROM keys WHERE user = ?"),
            nodes_by_kind={
                r[0]: r[1]
                for r in self._rows(
                    "SELECT kind, count(*) FROM nodes WHERE user = ? GROUP BY kind", (user,)
                )
            },
            edges_by_relation={
                r[0]: r[1]
                for r in self._rows(
                    "SELECT relation, count(*) FROM edges WHERE user = ? GROUP BY relation", (user,)
                )
            },
            dormant=count("SELECT count(*) FROM edges WHERE user = ? AND dormant = 1"),
            superseded=count(
                "SELECT count(*) FROM edges WHERE user = ? AND superseded_by IS NOT NULL"
            ),
            expired=count("SELECT count(*) FROM edges WHERE user = ? AND expired = 1"),
        )

    # --- embedding keys ----------------------------------------------------------
    def upsert_keys(self, user: str, keys: Sequence[EmbeddingKey]) -> None:
        for key in keys:
            if key.kind == "relation":
                check_relation(key.ref)
        with self._tx() as db:
            db.executemany(
                "INSERT OR REPLACE INTO keys VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (user, k.id, k.text, k.ref, k.kind, np.asarray(k.vector, np.float32).tobytes())
                    for k in keys
                ],
            )
        self._vectors.pop(user, None)

    def delete_keys(self, user: str, ids: Iterable[str]) -> None:
        with self._tx() as db:
            for chunk in _chunks(ids):
                db.execute(
                    f"DELETE FROM keys WHERE user = ? AND id IN ({_marks(chunk)})", [user, *chunk]
                )
        self._vectors.pop(user, None)

    def list_keys(self, user: str, with_vectors: bool = False) -> list[EmbeddingKey]:
        rows = self._rows("SELECT * FROM keys WHERE user = ? ORDER BY id", (user,))
        return [
            EmbeddingKey(
                id=r["id"],
                text=r["text"],
                ref=r["ref"],
                kind=r["kind"],
                vector=np.frombuffer(r["vector"], np.float32).tolist() if with_vectors else [],
            )  # fmt: skip
            for r in rows
        ]

    def _matrix(self, user: str) -> tuple[list[EmbeddingKey], np.ndarray, np.ndarray | None]:
        """The owner's keys as unit vectors, one per column (a query multiplies it
        faster than a row matrix: the search reads it straight through), and their
        mean; reloaded after changes."""
        cached = self._vectors.get(user)
        if cached is None:
            rows = self._rows("SELECT * FROM keys WHERE user = ? ORDER BY id", (user,))
            keys = [
                EmbeddingKey(id=r["id"], text=r["text"], ref=r["ref"], kind=r["kind"], vector=[])
                for r in rows
            ]
            if rows:
                matrix = np.vstack([np.frombuffer(r["vector"], np.float32) for r in rows])
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                matrix = matrix / np.where(norms == 0, 1, norms)
            else:
                matrix = np.zeros((0, 0), np.float32)
            mean = matrix.mean(axis=0) if rows else None
            matrix = np.ascontiguousarray(matrix.T)
            matrix.flags.writeable = False
            cached = self._vectors[user] = (keys, matrix, mean)
        return cached

    def key_mean(self, user: str) -> list[float] | None:
        mean = self._matrix(user)[2]
        return None if mean is None else mean.tolist()

    def search_keys_many(
        self, user: str, vectors: Sequence[Sequence[float]], limit: int = 10
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        keys, matrix, _ = self._matrix(user)
        if not keys or limit <= 0 or len(vectors) == 0:
            return [[] for _ in vectors]
        queries = np.atleast_2d(np.asarray(vectors, np.float32))
        if queries.shape[1] != matrix.shape[0]:
            raise ValidationError(
                f"query vector has {queries.shape[1]} dimensions, the keys have {matrix.shape[0]}"
            )
        norms = np.linalg.norm(queries, axis=1, keepdims=True)
        scores = (queries / np.where(norms == 0, 1, norms)) @ matrix
        results = []
        for row in scores:
            # Only the top few are wanted: partition first, then sort those.
            top = (
                np.argpartition(-row, limit - 1)[:limit]
                if limit < len(row)
                else np.arange(len(row))
            )
            top = top[np.argsort(-row[top], kind="stable")]
            # The vector is the cached (read-only) column itself: copying it into a
            # list for every candidate of every query unit took longer than the search.
            results.append([(_with_vector(keys[i], matrix[:, i]), float(row[i])) for i in top])
        return results

    # --- time -----------------------------------------------------------------------
    def decay(
        self,
        now: datetime,
        rates: Mapping[str, float],
        dormant_below: float,
        user: str | None = None,
        batch_size: int = 10_000,
    ) -> DecayReport:
        def strength(strength0: float, touched_at: float, stability: str) -> float:
            return decayed(
                strength0, (moment - touched_at) / MICROSECONDS_PER_DAY, rates[stability]
            )

        moment = _ts(now)
        scope, args = ("AND user = ?", [user]) if user is not None else ("", [])
        report = DecayReport()
        with self._lock:
            self._db.create_function("pegasus_strength", 3, strength, deterministic=True)
            low, high = self._rows(
                f"SELECT min(rowid), max(rowid) FROM edges WHERE 1 {scope}", args
            )[0]
            # Bounded transactions: one rowid range at a time.
            for start in range(low or 0, (high or -1) + 1, batch_size):
                with self._tx() as db:
                    cursor = db.execute(
                        f"""UPDATE edges SET
                               strength = pegasus_strength(strength0, touched_at, stability),
                               dormant = pegasus_strength(strength0, touched_at, stability) < ?,
                               expired = (expires_at IS NOT NULL AND expires_at <= ?)
                            WHERE rowid >= ? AND rowid < ? {scope}""",
                        [dormant_below, moment, start, start + batch_size, *args],
                    )
                    report.edges += cursor.rowcount
        counts = self._rows(
            f"SELECT total(dormant), total(expired) FROM edges WHERE 1 {scope}", args
        )[0]
        report.dormant, report.expired = int(counts[0]), int(counts[1])
        return report

    def reinforce(
        self,
        user: str,
        edge_ids: Iterable[str],
        now: datetime,
        rates: Mapping[str, float],
        amount: float,
    ) -> int:
        moment = _ts(now)
        with self._tx() as db:
            rows: list[sqlite3.Row] = []
            for chunk in _chunks(edge_ids):
                rows.extend(
                    db.execute(
                        "SELECT id, strength0, touched_at, stability FROM edges "
                        f"WHERE user = ? AND id IN ({_marks(chunk)})",
                        [user, *chunk],
                    ).fetchall()
                )
            updates = []
            for row in rows:
                days = (moment - row["touched_at"]) / MICROSECONDS_PER_DAY
                new = reinforced(decayed(row["strength0"], days, rates[row["stability"]]), amount)
                updates.append((new, new, moment, user, row["id"]))
            db.executemany(
                "UPDATE edges SET strength = ?, strength0 = ?, touched_at = ?, dormant = 0 "
                "WHERE user = ? AND id = ?",
                updates,
            )
        return len(updates)

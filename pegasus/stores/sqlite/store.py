"""The embedded store: one SQLite file, numpy for vector search, no server.

The zero-setup default. It keeps the same contract as the Neo4j store; timestamps
are stored as whole microseconds so the decay pass is arithmetic, and the decay formula
itself is :mod:`pegasus.time.decay`'s, registered as an SQL function.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from pegasus.config import Settings, data_dir
from pegasus.errors import ConfigError, DiskFullError, StoreError
from pegasus.interchange import Graph
from pegasus.model import (
    Conversation,
    Edge,
    EmbeddingKey,
    Node,
    Usage,
    check_relation,
    name_key,
)
from pegasus.paths import sqlite_file
from pegasus.stores.base import (
    COMMON_IN_CLAIMS,
    Changes,
    Diagnosis,
    Stats,
    Store,
    checked,
    patience,
    walk,
)
from pegasus.stores.graph_copy import GraphCopy, HeldGraphs
from pegasus.stores.sqlite import schema
from pegasus.stores.sqlite.rows import (
    COST_FIELDS,
    COST_TOTALS,
    LIVE,
    MICROSECONDS_PER_DAY,
    chunks,
    edge_from,
    key_from,
    marks,
    node_from,
    ts,
)
from pegasus.stores.sqlite.writes import write
from pegasus.stores.vectors import KeyVectors
from pegasus.time.decay import DecayReport, DecayRule, decayed

BUSY_SECONDS = 30.0  # how long a write waits for another process's write to finish


class SQLiteStore(Store):
    """A store in one SQLite file (``":memory:"`` for a throwaway one)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            self._db = sqlite3.connect(
                self.path, timeout=BUSY_SECONDS, check_same_thread=False, isolation_level=None
            )
            self._db.row_factory = sqlite3.Row
            # WAL: readers never wait for a writer, nor a writer for readers.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=OFF")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {self.path}: {exc}") from exc
        self._lock = threading.RLock()  # the writing connection
        # Reads go through a connection per thread: in WAL mode they never wait for a
        # writer, not even this store's own (a decay pass, a write waiting its turn).
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        # Its own lock: a thread's first read may come while it holds the cache's.
        self._readers_lock = threading.Lock()
        # Each owner's keys as a matrix, with what they looked like when loaded.
        self._vectors: dict[str, KeyVectors] = {}
        self._cache_lock = threading.Lock()
        # After ``warm``, the owners' graphs too, for a recall's reads (graph_copy.py).
        self._graphs = HeldGraphs(self._graph_copy)
        self._migrate()

    @classmethod
    def diagnose(cls, url: str, settings: Settings) -> Diagnosis:
        from pegasus.stores.sqlite.diagnose import diagnose

        return diagnose(cls, url, settings)

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> SQLiteStore:
        path = sqlite_file(url)
        if path != ":memory:":
            folder = Path(path).resolve().parent
            if folder == data_dir().resolve():
                folder.mkdir(parents=True, exist_ok=True)  # the default place: made on first use
            elif not folder.is_dir():
                raise ConfigError(f"{url!r}: the folder {folder} does not exist; create it first")
        return cls(path)

    # --- plumbing -------------------------------------------------------------
    def _migrate(self) -> None:
        if set(self.applied_migrations()) >= {name for name, _ in schema.MIGRATIONS}:
            return  # up to date: no write lock taken, so readers open beside a busy writer
        with self._tx() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
            )
            done = {row[0] for row in db.execute("SELECT name FROM schema_migrations")}
            for name, script in schema.MIGRATIONS:
                if name in done:
                    continue
                for statement in schema.statements(script):
                    db.execute(statement)
                db.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?)",
                    (name, ts(datetime.now(UTC))),
                )

    def applied_migrations(self) -> list[str]:
        exists = self._rows(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        )
        if not exists:
            return []
        return [r[0] for r in self._rows("SELECT name FROM schema_migrations ORDER BY name")]

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        wait = patience(BUSY_SECONDS)
        if not self._lock.acquire(timeout=wait):
            raise StoreError(f"SQLite store {self.path}: busy: this process kept writing "
                             f"for over {wait:g} s; try again")  # fmt: skip
        try:
            try:
                # Inside a request's deadline, a write waits no longer for another's.
                self._db.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._error(exc, wait) from exc
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as exc:
                # A failed COMMIT (a full disk) may have ended the transaction itself.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._error(exc, wait) from exc
                raise
        finally:
            self._lock.release()

    def _error(self, exc: sqlite3.Error, waited: float = BUSY_SECONDS) -> StoreError:
        """sqlite3's error as one line a person can act on."""
        text = str(exc)
        if "locked" in text or "busy" in text:
            text = f"busy: another process kept writing for over {waited:g} s; try again"
        elif "full" in text or ("disk I/O" in text and self._disk_full()):
            return DiskFullError(f"SQLite store {self.path}: the disk is full; this change "
                                 "was not written")  # fmt: skip
        elif "readonly" in text:
            text = "the file is read-only; nothing was written"
        return StoreError(f"SQLite store {self.path}: {text}")

    def _disk_full(self) -> bool:
        try:
            return shutil.disk_usage(Path(self.path).resolve().parent).free < 2**20
        except OSError:
            return False

    def _reader(self) -> sqlite3.Connection:
        """This thread's reading connection (the one connection of a store in memory)."""
        if self.path == ":memory:":
            return self._db
        reader = getattr(self._local, "reader", None)
        if reader is None:
            try:
                reader = sqlite3.connect(
                    self.path, timeout=BUSY_SECONDS, check_same_thread=False, isolation_level=None
                )
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
            reader.row_factory = sqlite3.Row
            self._local.reader = reader
            with self._readers_lock:
                self._readers.append(reader)
        return reader

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        reader = self._reader()
        try:
            if reader is self._db:
                with self._lock:
                    return reader.execute(sql, params).fetchall()
            return reader.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Several reads that see one state of the file (one read transaction)."""
        reader = self._reader()
        if reader is self._db or reader.in_transaction:
            yield
            return
        reader.execute("BEGIN")
        try:
            yield
        finally:
            reader.execute("COMMIT")

    def close(self) -> None:
        with self._lock, self._readers_lock:
            for reader in self._readers:
                reader.close()
            self._db.close()

    # --- the one write ---------------------------------------------------------
    def apply(self, user: str, changes: Changes) -> None:
        changes = checked(changes)
        if not changes:
            return
        with self._tx() as db:
            write(db, user, changes)
        if changes.keys or changes.delete_keys or changes.delete_nodes:
            with self._cache_lock:
                self._vectors.pop(user, None)

    # --- reads ----------------------------------------------------------------
    def _select_in(self, sql: str, user: str, ids: Iterable[str]) -> list[sqlite3.Row]:
        rows: list[sqlite3.Row] = []
        for chunk in chunks(ids):
            rows.extend(self._rows(sql.format(marks=marks(chunk)), [user, *chunk]))
        return rows

    def get_nodes(self, user: str, ids: Iterable[str]) -> list[Node]:
        if copy := self._graph(user):
            return copy.get_nodes(ids)
        rows = self._select_in("SELECT * FROM nodes WHERE user = ? AND id IN ({marks})", user, ids)
        return [node_from(r) for r in rows]

    def get_edges(self, user: str, ids: Iterable[str]) -> list[Edge]:
        if copy := self._graph(user):
            return copy.get_edges(ids)
        rows = self._select_in("SELECT * FROM edges WHERE user = ? AND id IN ({marks})", user, ids)
        return [edge_from(r) for r in rows]

    def _conversations(self, user: str, conversation_id: str | None = None) -> list[Conversation]:
        """Records with their journal and used edges, which live in tables of their own."""
        with self._snapshot():  # the record, its journal and used edges as of one moment
            one = conversation_id is not None
            args = (user, conversation_id) if one else (user,)
            which = "AND id = ?" if one else ""
            records = self._rows(
                f"SELECT id, record FROM conversations WHERE user = ? {which} ORDER BY id", args
            )
            scope = "AND conversation = ?" if one else ""
            journal: dict[str, list[str]] = {}
            for row in self._rows(
                f"SELECT conversation, line FROM journal_lines WHERE user = ? {scope} ORDER BY seq",
                args,
            ):
                journal.setdefault(row[0], []).append(row[1])
            used: dict[str, list[str]] = {}
            for row in self._rows(
                f"SELECT conversation, edge FROM used_edges WHERE user = ? {scope} ORDER BY rowid",
                args,
            ):
                used.setdefault(row[0], []).append(row[1])
            return [
                Conversation.model_validate_json(row["record"]).model_copy(
                    update={
                        "journal": journal.get(row["id"], []),
                        "used_edges": used.get(row["id"], []),
                    }
                )
                for row in records
            ]

    def get_conversation(self, user: str, conversation_id: str) -> Conversation | None:
        found = self._conversations(user, conversation_id)
        return found[0] if found else None

    def list_conversations(self, user: str) -> list[Conversation]:
        return self._conversations(user)

    def get_self(self, user: str) -> str | None:
        rows = self._rows("SELECT self_id FROM owners WHERE user = ?", (user,))
        return rows[0][0] if rows else None

    def find_nodes_named(self, user: str, names: Iterable[str]) -> list[Node]:
        if copy := self._graph(user):
            return copy.find_nodes_named(names)
        folded = list(dict.fromkeys(name_key(name) for name in names))
        rows = self._select_in(
            "SELECT n.* FROM node_names AS nn JOIN nodes AS n ON n.user = nn.user "
            "AND n.id = nn.node_id WHERE nn.user = ? AND nn.name IN ({marks})",
            user,
            folded,
        )
        unique = {r["id"]: r for r in rows}
        return [node_from(unique[key]) for key in sorted(unique)]

    def _edges_around(self, user: str, node_ids: list[str], live_only: bool) -> list[Edge]:
        live = f" AND {LIVE}" if live_only else ""
        rows = self._select_in(
            f"SELECT * FROM edges WHERE user = ? AND source IN ({{marks}}){live}", user, node_ids
        ) + self._select_in(
            f"SELECT * FROM edges WHERE user = ? AND target IN ({{marks}}){live}", user, node_ids
        )
        unique = {r["id"]: r for r in rows}
        return [edge_from(r) for r in unique.values()]

    def subgraph(
        self,
        user: str,
        seed_ids: Iterable[str],
        hops: int = 2,
        live_only: bool = True,
        stop_at: Iterable[str] = (),
        with_nodes: bool = True,
    ) -> Graph:
        if copy := self._graph(user):
            return copy.subgraph(seed_ids, hops, live_only, stop_at, with_nodes)
        reached, edges = walk(
            seed_ids, hops, stop_at, lambda frontier: self._edges_around(user, frontier, live_only)
        )
        return Graph(nodes=self.get_nodes(user, reached) if with_nodes else [], edges=edges)

    def export(self, user: str) -> Graph:
        with self._snapshot():
            graph = self._nodes_and_edges(user)
            return Graph(graph.nodes, graph.edges, self._conversations(user), self.get_self(user))

    def _nodes_and_edges(self, user: str) -> Graph:
        nodes = self._rows("SELECT * FROM nodes WHERE user = ?", (user,))
        edges = self._rows("SELECT * FROM edges WHERE user = ?", (user,))
        return Graph(nodes=[node_from(r) for r in nodes], edges=[edge_from(r) for r in edges])

    # --- faster than the compositions (see the contract tests) --------------------
    def edges_meeting(self, user: str, claims: Iterable[tuple[str, str, str]]) -> list[Edge]:
        claims = [(source, check_relation(relation), target) for source, relation, target in claims]
        # By (source, relation) index: on the user's own node (a quarter of all
        # edges) reading every edge at the source took most of a commit.
        sql = (
            "SELECT * FROM edges WHERE user = ? AND source = ? AND relation = ? AND "
            "(target = ? OR (cardinality = 'one_to_one' AND superseded_by IS NULL))"
        )
        rows = {
            row["id"]: row
            for claim in dict.fromkeys(claims)
            for row in self._rows(sql, (user, *claim))
        }
        return [edge_from(row) for row in rows.values()]

    def edges_with_relation(self, user: str, relations: Iterable[str]) -> list[Edge]:
        if copy := self._graph(user):
            return copy.edges_with_relation(relations)
        rows = self._select_in(
            f"SELECT * FROM edges WHERE user = ? AND relation IN ({{marks}}) AND {LIVE}",
            user,
            [check_relation(label) for label in relations],
        )
        return [edge_from(r) for r in rows]

    def ranked_edges(self, user: str, strongest: bool, limit: int = 5) -> list[Edge]:
        order = "DESC" if strongest else "ASC"
        rows = self._rows(
            f"SELECT * FROM edges WHERE user = ? AND {LIVE} ORDER BY strength {order}, id LIMIT ?",
            (user, limit),
        )
        return [edge_from(r) for r in rows]

    def stats(self, user: str) -> Stats:
        def count(sql: str) -> int:
            return int(self._rows(sql, (user,))[0][0])

        def grouped(sql: str) -> dict[str, int]:
            return {r[0]: r[1] for r in self._rows(sql, (user,))}

        return Stats(
            nodes=count("SELECT count(*) FROM nodes WHERE user = ?"),
            edges=count("SELECT count(*) FROM edges WHERE user = ?"),
            conversations=count("SELECT count(*) FROM conversations WHERE user = ?"),
            keys=count("SELECT count(*) FROM keys WHERE user = ?"),
            nodes_by_kind=grouped("SELECT kind, count(*) FROM nodes WHERE user = ? GROUP BY kind"),
            edges_by_relation=grouped(
                "SELECT relation, count(*) FROM edges WHERE user = ? GROUP BY relation"
            ),
            dormant=count("SELECT count(*) FROM edges WHERE user = ? AND dormant = 1"),
            superseded=count(
                "SELECT count(*) FROM edges WHERE user = ? AND superseded_by IS NOT NULL"
            ),
            expired=count("SELECT count(*) FROM edges WHERE user = ? AND expired = 1"),
            cost=Usage(**dict(zip(COST_FIELDS, self._rows(COST_TOTALS, (user,))[0], strict=True))),
        )

    def key_mean(self, user: str) -> list[float] | None:
        mean = self._matrix(user).mean
        return None if mean is None else mean.tolist()

    # --- embedding keys ----------------------------------------------------------
    def list_keys(self, user: str, with_vectors: bool = False) -> list[EmbeddingKey]:
        rows = self._rows("SELECT * FROM keys WHERE user = ? ORDER BY id", (user,))
        return [
            key_from(r, np.frombuffer(r["vector"], np.float32).tolist() if with_vectors else [])
            for r in rows
        ]

    def warm(self, user: str) -> None:
        self._matrix(user)
        self._graphs.serve(user)

    @contextmanager
    def reading(self, user: str, joined: object = None) -> Iterator[object]:
        held = self._local.__dict__.setdefault("graphs", {})
        if user in held or not self._graphs.serving:  # an outer block looks for both
            yield held
            return
        if isinstance(joined, dict) and user in joined:
            held[user] = joined[user]
        else:
            held[user] = self._graphs.current(user, self._graph_version(user))
        try:
            yield held
        finally:
            del held[user]

    def _graph(self, user: str) -> GraphCopy | None:
        """The owner's graph in memory while a recall reads (``reading``), if current."""
        return getattr(self._local, "graphs", {}).get(user)

    def _graph_version(self, user: str) -> int:
        found = self._rows("SELECT version FROM graph_versions WHERE user = ?", (user,))
        return found[0][0] if found else 0

    def _graph_copy(self, user: str) -> GraphCopy:
        with self._snapshot():
            return GraphCopy.of(self._nodes_and_edges(user), self._graph_version(user))

    def _matrix(self, user: str) -> KeyVectors:
        """The owner's keys as unit vectors, and their mean, reloaded when the owner's
        key version moved (whichever connection or process wrote the keys)."""
        with self._cache_lock, self._snapshot():
            found = self._rows("SELECT version FROM key_versions WHERE user = ?", (user,))
            version = found[0][0] if found else 0
            cached = self._vectors.get(user)
            if cached is not None and cached.version == version:
                return cached
            rows = self._rows("SELECT * FROM keys WHERE user = ? ORDER BY id", (user,))
            keys = [key_from(r) for r in rows]
            vectors = [np.frombuffer(r["vector"], np.float32) for r in rows]
            cached = self._vectors[user] = KeyVectors.of(keys, vectors, version)
            return cached

    def search_keys_many(
        self,
        user: str,
        vectors: Sequence[Sequence[float]],
        limit: int = 10,
        kinds: Collection[str] | None = None,
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        return self._matrix(user).nearest(vectors, limit, kinds)

    def search_words(
        self, user: str, words: Sequence[str], limit: int = 20
    ) -> list[tuple[EmbeddingKey, float]]:
        # Each word quoted: FTS5 query syntax in a message is only ever text.
        quoted = ['"' + w.replace('"', '""') + '"' for w in dict.fromkeys(words) if w.strip()]
        # A word in thousands of claims singles out none of them, and ranking every
        # claim that holds it is most of the cost (35 ms a message at 100k edges for
        # two such words); counting them first is a fraction of a millisecond.
        terms = [
            term for term in quoted
            if self._rows("SELECT count(*) AS n FROM claim_words WHERE claim_words MATCH ?",
                          (term,))[0]["n"] <= COMMON_IN_CLAIMS
        ]  # fmt: skip
        if not terms or limit <= 0:
            return []
        query = " OR ".join(terms)
        rows = self._rows(
            "SELECT k.id, k.text, k.ref, k.kind, -bm25(claim_words) AS score "
            "FROM claim_words JOIN keys AS k ON k.rowid = claim_words.rowid "
            "WHERE claim_words MATCH ? AND k.user = ? ORDER BY score DESC LIMIT ?",
            (query, user, limit),
        )
        return [
            (key_from(r), float(r["score"]))
            for r in rows
        ]  # fmt: skip

    # --- time -----------------------------------------------------------------------
    def decay(
        self, now: datetime, rule: DecayRule, user: str | None = None, batch_size: int = 10_000
    ) -> DecayReport:
        def strength(strength0: float, touched_at: float, stability: str) -> float:
            days = (moment - touched_at) / MICROSECONDS_PER_DAY
            return decayed(strength0, days, rule.rates[stability])

        moment = ts(now)
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
                        [rule.dormant_below, moment, start, start + batch_size, *args],
                    )
                    report.edges += cursor.rowcount
        counts = self._rows(
            f"SELECT total(dormant), total(expired) FROM edges WHERE 1 {scope}", args
        )[0]
        report.dormant, report.expired = int(counts[0]), int(counts[1])
        return report

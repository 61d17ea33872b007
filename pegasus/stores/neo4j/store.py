"""The Neo4j store: the production store.

Layout in the database: ``(:Entity:<KIND>)`` nodes, each claim a relationship whose
type is its relation (``-[:WORKS_AT]->``), ``(:Conversation)`` nodes, ``(:Key)``
nodes under the native vector index, and one ``(:Owner)`` node per memory owner
marking the self node. Every statement lives in ``cypher/`` and is loaded by name."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import neo4j
import numpy as np
from cachetools import LRUCache
from neo4j.exceptions import (
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_before_delay,
    wait_exponential,
    wait_random,
)

from pegasus.config import Settings
from pegasus.errors import StoreError
from pegasus.interchange import Graph
from pegasus.model import (
    CLAIM_KEY,
    Conversation,
    Edge,
    EmbeddingKey,
    Node,
    Usage,
    check_relation,
    name_key,
)
from pegasus.stores.base import (
    COMMON_IN_CLAIMS,
    Changes,
    Diagnosis,
    Stats,
    Store,
    check_hops,
    checked,
    patience,
)
from pegasus.stores.graph_copy import GraphCopy, HeldGraphs
from pegasus.stores.neo4j.queries import credentials, cypher, statements
from pegasus.stores.neo4j.records import (
    batches,
    conversation_from,
    edge_from,
    key_and_vector,
    node_from,
    possible_ends,
)
from pegasus.stores.neo4j.writes import write
from pegasus.stores.vectors import SCAN_FROM, KeyVectors
from pegasus.time.decay import DecayReport, DecayRule

log = logging.getLogger(__name__)

NAMES_PER_QUERY = 200  # terms per full-text query (Lucene caps clauses at 1,024)
# The vector index is shared by every owner: when other owners' keys crowd this
# owner's out of a search, ask again for this many times as many.
SEARCH_OVERFETCH = 4
# Neo4j's HNSW search keeps as many candidates as it is asked for: asked for the 20
# neighbours recall needs, it misses near keys a wider search finds
# (bench/index_beam.py, docs/stores.md). The nearest of a wider search are kept.
INDEX_BEAM = 100
# Owners are searched exactly, in memory, from a copy of their keys that catches up
# on every write by the keys' version: the shared index misses near keys among many
# alike and makes one owner pay for the others' size (docs/stores.md). An owner with
# at most this many name keys is read at its first search; a larger one by ``warm``,
# or in the background (the index answering meanwhile) once ``warm`` has said that
# this process lives long enough to use it.
SMALL_OWNER_NAMES = 2_000
HELD_MB = 1_024  # copies held at once; an owner larger than this alone uses the index
KEY_OVERHEAD = 500  # bytes a held key takes besides its vector (ids, text, object)


def _lucene_term(text: str) -> str:
    """One exact term for the keyword full-text index: quoted, quotes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _one_line(text: str) -> str:
    # The driver's messages run over several lines; an error here is one.
    return " ".join(text.split())


def _retryable(exc: BaseException) -> bool:
    """What the driver itself would retry: transient errors and lost connections."""
    return isinstance(exc, Neo4jError | DriverError) and exc.is_retryable()


def _keys_of(pairs: list[tuple[EmbeddingKey, np.ndarray]]) -> tuple[list[EmbeddingKey], list]:
    return [key for key, _ in pairs], [vector for _, vector in pairs]


def _held_bytes(keys: int, dims: int) -> int:
    """Room a copy of ``keys`` keys of ``dims`` takes once searched: float32 columns
    twice (all keys, and each kind's part), and a byte a dimension to scan a large part."""
    scanned = dims if keys >= SCAN_FROM else 0
    return keys * (KEY_OVERHEAD + 8 * dims + scanned)


CONNECT_SECONDS = 5.0
REQUEST_WRITE_SECONDS = 10.0  # the longest a write made for a service's request runs


class Neo4jStore(Store):
    """A store in a Neo4j 5.26+ database reached over Bolt."""

    def __init__(
        self,
        uri: str,
        auth: tuple[str, str] | None = None,
        database: str | None = None,
        retry_seconds: float = 30.0,
        held_mb: float = HELD_MB,
    ) -> None:
        self.uri = uri
        self.database = database
        self.retry_seconds = retry_seconds
        self._held: LRUCache[str, KeyVectors] = LRUCache(
            maxsize=max(1, int(held_mb * 2**20)),
            getsizeof=lambda copy: _held_bytes(len(copy.keys), copy.matrix.shape[0]),
        )
        self._holding = held_mb > 0
        self._held_lock = threading.Lock()
        self._background = False  # read large owners in the background (after warm)
        self._loading: set[str] = set()  # owners being read in the background
        self._unheld: set[str] = set()  # owners too large to hold
        self._looked = threading.local()  # owner states read once inside ``reading``
        # After ``warm``, the owners' graphs too, in as much room again (graph_copy.py).
        self._graphs = HeldGraphs(self._graph_copy, held_mb)
        try:
            # Notifications (such as "property key does not exist" on a fresh
            # database) are advice for people typing queries, not for this module.
            self._driver = neo4j.GraphDatabase.driver(
                uri,
                auth=auth,
                notifications_min_severity="OFF",
                max_transaction_retry_time=retry_seconds,
                # A server that does not answer a connection is down: say so in
                # seconds (a local one that is down refuses at once).
                connection_timeout=CONNECT_SECONDS,
            )
            self._driver.verify_connectivity()
        except (ServiceUnavailable, OSError, ValueError, Neo4jError) as exc:
            raise StoreError(
                _one_line(
                    f"cannot reach Neo4j at {uri}: {exc}. Start one with 'make neo4j-up' "
                    "or point NEO4J_URI at a running server."
                )
            ) from exc
        self._run_schema()

    @classmethod
    def diagnose(cls, url: str, settings: Settings) -> Diagnosis:
        from pegasus.stores.neo4j.diagnose import diagnose

        return diagnose(cls, url, settings)

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> Neo4jStore:
        return cls(
            url,
            auth=credentials(settings),
            database=settings.neo4j_database,
            retry_seconds=settings.neo4j_retry_seconds,
            held_mb=settings.neo4j_held_mb,
        )

    # --- plumbing -------------------------------------------------------------
    def _run_schema(self) -> None:
        for statement in statements("schema"):
            self._query(statement)

    def _session(self, access: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        # Sessions share the driver's bookmarks: on a cluster, a read sent to another
        # member waits until it holds this process's last write.
        # Inside a request's deadline, no more waiting for a connection or retrying.
        wait = patience(self.retry_seconds)
        return self._driver.session(
            database=self.database,
            bookmark_manager=self._driver.execute_query_bookmark_manager,
            default_access_mode=access,
            max_transaction_retry_time=wait,
            connection_acquisition_timeout=max(wait, 0.1),
        )

    def _retried(self, work: Callable[[], list[Any]]) -> list[Any]:
        """``work()``, again while what went wrong may pass, as the driver retries a
        managed transaction; its error as a :class:`StoreError` when it will not."""
        retrying = Retrying(
            retry=retry_if_exception(_retryable),
            # No try that would start past the patience (a request's deadline).
            stop=stop_before_delay(patience(self.retry_seconds)),
            # Jitter keeps a service's threads from retrying in step during a failover.
            wait=wait_exponential(multiplier=0.5, max=4) + wait_random(0, 0.5),
            reraise=True,
        )
        try:
            return retrying(work)
        except (Neo4jError, DriverError) as exc:
            raise self._error(exc) from exc

    def _query(self, statement: str, /, **params: Any) -> list[neo4j.Record]:
        """Run a statement in a transaction of its own (schema changes, and statements
        that commit in batches themselves): the statements run this way are safe to
        run twice."""

        def run() -> list[neo4j.Record]:
            with self._session() as session:
                return list(session.run(statement, params))

        return self._retried(run)

    def _read(
        self, statement: str, /, each: Callable[[neo4j.Record], Any] | None = None, **params: Any
    ) -> list[Any]:
        """Run the named read statement of ``cypher/`` in a transaction of its own,
        which on a cluster may go to any member. Not a managed transaction: its begin
        and commit cost more trips (a one-row read: 1.5 ms against 0.95; a recall
        makes ten reads). ``each`` turns every record into what is kept as it arrives
        (many records then never wait in memory all at once)."""
        query = cypher(statement)
        keep = each or (lambda record: record)

        def run() -> list[Any]:
            with self._session(neo4j.READ_ACCESS) as session:
                return [keep(record) for record in session.run(query, params)]

        return self._retried(run)

    def _write(self, work: Any) -> None:
        """Run ``work(tx)`` in one transaction: all of it lands, or none."""
        if patience(self.retry_seconds) < self.retry_seconds:
            # A request's write: the server ends it, should it wait on a lock held
            # elsewhere (reads take none). Its work may take longer than the wait.
            work = neo4j.unit_of_work(timeout=REQUEST_WRITE_SECONDS)(work)
        try:
            with self._session() as session:
                session.execute_write(work)
        except (Neo4jError, DriverError) as exc:
            raise self._error(exc) from exc

    def _error(self, exc: Neo4jError | DriverError) -> StoreError:
        """The driver's error as one line a person can act on."""
        if isinstance(exc, IncompleteCommit):
            text = "the connection dropped while committing; the write may or may not have landed"
        elif isinstance(exc, ServiceUnavailable | SessionExpired):
            text = f"lost the connection ({exc})"
        elif isinstance(exc, Neo4jError):
            text = exc.message or str(exc)
        else:
            text = str(exc)
        return StoreError(_one_line(f"Neo4j at {self.uri}: {text}"))

    def close(self) -> None:
        self._driver.close()

    # --- the one write ------------------------------------------------------------
    def apply(self, user: str, changes: Changes) -> None:
        changes = checked(changes)
        if changes:
            self._write(lambda tx: write(tx, user, changes))

    # --- reads ------------------------------------------------------------------
    def get_nodes(self, user: str, ids: Iterable[str]) -> list[Node]:
        if copy := self._graph(user):
            return copy.get_nodes(ids)
        return [node_from(r["props"]) for r in self._read("nodes_get", user=user, ids=list(ids))]

    def get_edges(self, user: str, ids: Iterable[str]) -> list[Edge]:
        if copy := self._graph(user):
            return copy.get_edges(ids)
        ids = list(dict.fromkeys(ids))
        ends = [end for edge in ids for end in possible_ends(edge)]
        records = self._read("edges_get_between", user=user, ends=ends)
        found = {edge.id: edge for edge in map(edge_from, records)}
        rest = [edge for edge in ids if edge not in found]
        if rest:  # ids that name no ends (see writes._locate_edges)
            refs = [r["ref"] for r in self._read("edges_locate", user=user, ids=rest)]
            found.update(
                (e.id, e) for e in map(edge_from, self._read("edges_get", user=user, refs=refs))
            )
        return list(found.values())

    def list_conversations(self, user: str) -> list[Conversation]:
        return [
            conversation_from(r["props"]) for r in self._read("export_conversations", user=user)
        ]

    def get_conversation(self, user: str, conversation_id: str) -> Conversation | None:
        records = self._read("conversation_get", user=user, id=conversation_id)
        return conversation_from(records[0]["props"]) if records else None

    def get_self(self, user: str) -> str | None:
        return self._owner(user)["self_id"]

    def find_nodes_named(self, user: str, names: Iterable[str]) -> list[Node]:
        if copy := self._graph(user):
            return copy.find_nodes_named(names)
        folded = [name for name in dict.fromkeys(name_key(n) for n in names) if name]
        found: dict[str, Node] = {}
        for chunk in batches(folded, NAMES_PER_QUERY):
            query = " OR ".join(_lucene_term(name) for name in chunk)
            for record in self._read("nodes_find", user=user, names=list(chunk), query=query):
                node = node_from(record["props"])
                found[node.id] = node
        return [found[key] for key in sorted(found)]

    def edges_meeting(self, user: str, claims: Iterable[tuple[str, str, str]]) -> list[Edge]:
        # One row per source: a hub's relationships are read once, not once a claim.
        by_source: dict[str, dict[str, list[str]]] = {}
        for source, relation, target in dict.fromkeys(claims):
            row = by_source.setdefault(source, {"relations": [], "claims": []})
            label = check_relation(relation)
            row["relations"].append(label)
            row["claims"].append(f"{label}|{target}")
        rows = [{"source": source, **row} for source, row in by_source.items()]
        records = self._read("edges_meeting", user=user, sources=rows)
        return list({e.id: e for e in map(edge_from, records)}.values())

    def edges_with_relation(self, user: str, relations: Iterable[str]) -> list[Edge]:
        if copy := self._graph(user):
            return copy.edges_with_relation(relations)
        labels = [check_relation(label) for label in relations]
        return [edge_from(r) for r in self._read("edges_with_relation", user=user, labels=labels)]

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
        check_hops(hops)
        records = self._read(
            "subgraph",
            user=user,
            seeds=list(seed_ids),
            hops=hops,
            live_only=live_only,
            stop_at=list(stop_at),
            with_nodes=with_nodes,
        )
        if not records:
            return Graph()
        record = records[0]
        return Graph(
            nodes=[node_from(props) for props in record["nodes"]],
            edges=[edge_from(edge) for edge in record["edges"]],
        )

    def export(self, user: str) -> Graph:
        return Graph(
            nodes=[node_from(r["props"]) for r in self._read("export_nodes", user=user)],
            edges=[edge_from(r) for r in self._read("export_edges", user=user)],
            conversations=self.list_conversations(user),
            self_id=self.get_self(user),
        )

    def ranked_edges(self, user: str, strongest: bool, limit: int = 5) -> list[Edge]:
        records = self._read("edges_ranked", user=user, strongest=strongest, limit=limit)
        return [edge_from(r) for r in records]

    def stats(self, user: str) -> Stats:
        record = self._read("stats", user=user)[0]
        by_relation = {relation: count for relation, count in record["relations"]}
        return Stats(
            nodes=sum(count for _, count in record["kinds"]),
            edges=sum(by_relation.values()),
            conversations=record["conversations"],
            keys=record["keys"],
            nodes_by_kind={kind: count for kind, count in record["kinds"]},
            edges_by_relation=by_relation,
            dormant=record["dormant"] or 0,
            superseded=record["superseded"] or 0,
            expired=record["expired"] or 0,
            cost=Usage(
                calls=record["calls"],
                prompt_tokens=record["prompt_tokens"],
                completion_tokens=record["completion_tokens"],
                seconds=record["seconds"],
            ),  # fmt: skip
        )

    # --- embedding keys ---------------------------------------------------------
    def key_mean(self, user: str) -> list[float] | None:
        held = self._held_copy(user)
        if held is not None:  # the same mean, without a round trip in a recall
            return None if held.mean is None else held.mean.tolist()
        record = self._read("key_stats_get", user=user)[0]
        if record["sum"] is None or not record["count"]:
            return None
        return (np.asarray(record["sum"]) / record["count"]).tolist()

    def list_keys(self, user: str, with_vectors: bool = False) -> list[EmbeddingKey]:
        records = self._read("key_list", user=user, with_vectors=with_vectors)
        return [  # checked when written
            EmbeddingKey.model_construct(
                id=r["id"],
                text=r["text"],
                ref=r["ref"],
                kind=r["kind"],
                vector=list(r["vector"] or []),
            )  # fmt: skip
            for r in records
        ]

    def search_keys_many(
        self,
        user: str,
        vectors: Sequence[Sequence[float]],
        limit: int = 10,
        kinds: Collection[str] | None = None,
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        results: list[list[tuple[EmbeddingKey, float]]] = [[] for _ in vectors]
        if limit <= 0 or len(vectors) == 0:
            return results
        held = self._held_copy(user)
        if held is not None:
            return held.nearest(vectors, limit, kinds)
        # Names and claims have a vector index each: ask the ones the kinds live in.
        wanted = None if kinds is None else set(kinds)
        searches: list[tuple[str, set[str] | None]] = []
        if wanted is None or wanted - {CLAIM_KEY}:
            searches.append(("key_embedding", None if wanted is None else wanted - {CLAIM_KEY}))
        if wanted is None or CLAIM_KEY in wanted:
            searches.append(("claim_embedding", None))  # it holds claim keys only
        for index, among in searches:
            found = self._search_index(index, user, vectors, limit, among)
            for row, more in zip(results, found, strict=True):
                row += more
        for row in results:
            row.sort(key=lambda hit: -hit[1])
            del row[limit:]
        return results

    @contextmanager
    def reading(self, user: str, joined: object = None) -> Iterator[object]:
        looked = self._looked.__dict__.setdefault("owners", {})
        if user in looked:  # an outer block looks for both
            yield looked
            return
        # Looked at on the first read that needs it, unless the joined thread has.
        looked[user] = joined.get(user) if isinstance(joined, dict) else None
        try:
            yield looked
        finally:
            del looked[user]

    def _owner(self, user: str) -> neo4j.Record:
        """The owner's state (``owner_state``), read once within ``reading``."""
        looked = getattr(self._looked, "owners", {})
        record = looked.get(user)
        if record is None:
            record = self._read("owner_state", user=user)[0]
            if user in looked:
                looked[user] = record
        return record

    def warm(self, user: str) -> None:
        self._held_copy(user, wait=True)
        if self._holding:
            self._graphs.serve(user)
        # A process that warms (the service) serves many searches: other large owners
        # are worth reading too. A one-shot command would only pay for the reading.
        self._background = True

    def _held_copy(self, user: str, wait: bool = False) -> KeyVectors | None:
        """The owner's keys in memory, current as of now, or None while a large
        owner is being read (``wait``: read it now) or when it does not fit."""
        if not self._holding:
            return None
        record = self._owner(user)
        with self._held_lock:
            held = self._held.get(user)
        if held is not None and held.version >= record["removed"]:
            if held.version == record["version"]:
                return held
            # Only written since: read what the copy lacks (a write landing in between
            # is read again next time, and replaces itself).
            rows = self._read("key_list_since", key_and_vector, user=user, version=held.version)
            return self._hold(user, held.updated(*_keys_of(rows), record["version"]))
        if held is not None:  # keys were removed since it was read
            with self._held_lock:
                self._held.pop(user, None)
        if wait or (record["names"] or 0) <= SMALL_OWNER_NAMES:
            return self._read_copy(user, record["version"])
        with self._held_lock:
            if not self._background or user in self._loading or user in self._unheld:
                return None
            self._loading.add(user)
        later = (user, record["version"])
        threading.Thread(target=self._read_later, args=later, daemon=True).start()
        return None

    def _read_copy(self, user: str, version: int) -> KeyVectors | None:
        """A fresh copy of the owner's keys, held when it fits (else None). ``version``
        was read before the keys are: a write landing in between makes the copy newer
        than its version says, and the next search reads that write again."""
        (size,) = self._read("key_count", user=user)
        if _held_bytes(size["keys"], size["dims"]) > self._held.maxsize:
            with self._held_lock:
                self._unheld.add(user)
            return None
        rows = self._read("key_list", key_and_vector, user=user, with_vectors=True)
        copy = KeyVectors.of(*_keys_of(rows), version)
        copy.claim_words()  # counted here (for a large owner, in the background), not in a recall
        return self._hold(user, copy)

    def _read_later(self, user: str, version: int) -> None:
        try:
            self._read_copy(user, version)
        except (StoreError, DriverError, Neo4jError) as exc:  # the next search tries again
            log.info("could not read %s's keys into memory: %s", user, exc)
        finally:
            with self._held_lock:
                self._loading.discard(user)

    def _hold(self, user: str, copy: KeyVectors) -> KeyVectors | None:
        with self._held_lock:
            try:
                self._held[user] = copy
            except ValueError:  # larger than all the room there is
                self._held.pop(user, None)
                return None
        return copy

    def _graph(self, user: str) -> GraphCopy | None:
        """The owner's graph in memory while a recall reads (``reading``), if current."""
        if not self._graphs.serving or user not in getattr(self._looked, "owners", {}):
            return None
        return self._graphs.current(user, self._owner(user)["graph"])

    def _graph_copy(self, user: str) -> GraphCopy:
        version = self._read("owner_state", user=user)[0]["graph"]  # before the graph
        nodes = self._read("export_nodes", lambda r: node_from(r["props"]), user=user)
        edges = self._read("export_edges", edge_from, user=user)
        return GraphCopy.of(Graph(nodes=nodes, edges=edges), version)

    def _search_index(
        self,
        index: str,
        user: str,
        vectors: Sequence[Sequence[float]],
        limit: int,
        kinds: Collection[str] | None,
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        results: list[list[tuple[EmbeddingKey, float]]] = [[] for _ in vectors]
        pending = list(range(len(vectors)))
        candidates = max(limit, INDEX_BEAM)  # widened below when other owners crowd it
        while pending:
            rows = [{"i": i, "vector": [float(x) for x in vectors[i]]} for i in pending]
            record = self._read(
                "key_search", user=user, queries=rows, candidates=candidates, limit=limit,
                kinds=None if kinds is None else list(kinds), index=index,
            )[0]  # fmt: skip
            keys = {
                k["id"]: EmbeddingKey.model_construct(
                    id=k["id"], text=k["text"], ref=k["ref"], kind=k["kind"],
                    vector=np.asarray(k["vector"], np.float32),
                )
                for k in record["keys"]
            }  # fmt: skip
            for hit in record["hits"]:
                results[hit["i"]].append((keys[hit["id"]], float(hit["score"])))
            # Queries short of this owner's keys ask again, wider, until the index
            # has nothing more to give.
            pending = [i for i in pending if len(results[i]) < limit]
            if not pending or candidates >= self._total_keys():
                break
            for i in pending:
                results[i] = []
            candidates *= SEARCH_OVERFETCH
        return results

    def search_words(
        self, user: str, words: Sequence[str], limit: int = 20
    ) -> list[tuple[EmbeddingKey, float]]:
        # Letters and digits only, each quoted: Lucene syntax in a message is only text.
        terms = [t for t in dict.fromkeys(" ".join(re.findall(r"\w+", w)) for w in words) if t]
        with self._held_lock:  # as held: catching up on writes is the key search's work
            held = self._held.get(user)
        if held is not None:
            # As SQLite leaves out common words (COMMON_IN_CLAIMS), counted in the keys
            # held: "topic" in 21,000 claims cost 5 ms of Lucene a message, a rare
            # word 1. Whole words only, the index's count of their stem is never lower.
            terms = [t for t in terms if held.claims_holding(t) <= COMMON_IN_CLAIMS]
        if not terms or limit <= 0:
            return []
        query = " OR ".join(f'"{term}"' for term in terms)
        records = self._read(
            "claim_words_search", user=user, query=query, limit=limit,
            candidates=limit * SEARCH_OVERFETCH * 4,
        )  # fmt: skip
        return [
            (EmbeddingKey.model_construct(  # validated when written (base.py)
                id=r["id"], text=r["text"], ref=r["ref"], kind=r["kind"], vector=[]
            ), float(r["score"]))
            for r in records
        ]  # fmt: skip

    def _total_keys(self) -> int:
        return int(self._read("key_total")[0]["keys"])

    # --- time ---------------------------------------------------------------------
    def decay(
        self, now: datetime, rule: DecayRule, user: str | None = None, batch_size: int = 10_000
    ) -> DecayReport:
        owners = [user] if user is not None else [r["user"] for r in self._read("owners")]
        report = DecayReport()
        for owner in owners:
            # Its own batched transactions; running it again after a failure is safe.
            self._query(
                cypher("decay"), user=owner, now=now, batch_size=batch_size, **rule.params()
            )
            self._query(cypher("owner_graph_changed"), user=owner)
            counts = self._read("decay_counts", user=owner)[0]
            report.edges += counts["edges"]
            report.dormant += counts["dormant"] or 0
            report.expired += counts["expired"] or 0
        return report

"""Exact nearest keys over one owner's key vectors held in memory.

The SQLite store searches every owner this way; the Neo4j store does for every owner
that fits in memory (see docs/stores.md, "Vector search across owners"). Many keys
are first scanned in half precision, then the best candidates scored again in full
(see docs/stores.md, "Searching many keys"): the same answer for half the memory
traffic, which is what a large owner's search spends its time on."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np

from pegasus.errors import ValidationError
from pegasus.model import CLAIM_KEY, EmbeddingKey

# Keys from which a part is scanned in half precision first; below, scoring every
# key in full takes well under a millisecond.
SCAN_FROM = 20_000
# A key stored as bfloat16 is rounded to 8 significant bits, so its cosine with a
# unit query moves by at most 2^-8; twice that bounds the scan's error, sums included.
SCAN_ERROR = 2.0**-7
# Queries from which many columns are multiplied in full rather than scanned: the
# scan reads every key once a query, a matrix product once for all of them.
MULTIPLY_FROM = 3
# OpenBLAS multiplies queries in blocks of this many; a block left part-empty made
# the product slower than a full one, at any number of keys (one query is a
# matrix-vector product, faster alone).
QUERY_BLOCK = 4


class KeyVectors(NamedTuple):
    keys: list[EmbeddingKey]  # without their vectors: the matrix holds them
    matrix: np.ndarray  # one unit-length key per column
    mean: np.ndarray | None  # of the name and relation keys (claims are sentences)
    version: Any  # of the owner's keys when loaded, as the store tells it
    kinds: np.ndarray  # each column's key kind
    parts: dict  # frozenset of kinds -> Part, made on first use

    @classmethod
    def of(cls, keys: list[EmbeddingKey], vectors: Sequence[Any], version: Any) -> KeyVectors:
        """``keys`` with their vectors given apart (one row each)."""
        if not keys:
            return cls._of_columns(keys, np.zeros((0, 0), np.float32), version)
        # A query multiplies columns faster than rows: the search reads them straight through.
        return cls._of_columns(keys, np.ascontiguousarray(_unit_rows(vectors).T), version)

    @classmethod
    def _of_columns(cls, keys: list[EmbeddingKey], columns: np.ndarray, version: Any) -> KeyVectors:
        kinds = np.asarray([key.kind for key in keys])
        named = kinds != CLAIM_KEY
        # A product with the mask, not a selection: that would copy the named columns.
        mean = columns @ named.astype(np.float32) / int(named.sum()) if named.any() else None
        columns.flags.writeable = False
        return cls(keys, columns, mean, version, kinds, {})

    def updated(self, keys: list[EmbeddingKey], vectors: Sequence[Any], version: Any) -> KeyVectors:
        """This copy with ``keys`` written over it: a key already held is replaced,
        a new one added (deletions need a fresh copy). Costs a copy of the matrix,
        not a reading of every key again."""
        if not keys:
            return self._replace(version=version)
        if not self.keys:
            return KeyVectors.of(keys, vectors, version)
        held, position = list(self.keys), {key.id: i for i, key in enumerate(self.keys)}
        columns = _unit_rows(vectors).T
        replaced, replacing, added = [], [], []
        for i, key in enumerate(keys):
            if key.id in position:
                held[position[key.id]] = key
                replaced.append(position[key.id])
                replacing.append(i)
            else:
                position[key.id] = len(held)
                held.append(key)
                added.append(i)
        matrix = np.hstack([self.matrix, columns[:, added]]) if added else self.matrix.copy()
        matrix[:, replaced] = columns[:, replacing]
        return self._of_columns(held, matrix, version)

    def only(self, kinds: Collection[str] | None) -> Part:
        """The keys of ``kinds`` (all when None), their columns and their scan."""
        wanted = None if kinds is None else frozenset(kinds)
        if wanted not in self.parts:
            if wanted is None:
                keys, matrix = self.keys, self.matrix
            else:
                columns = np.flatnonzero(np.isin(self.kinds, list(wanted)))
                keys, matrix = [self.keys[i] for i in columns], self.matrix[:, columns]
                matrix = np.ascontiguousarray(matrix)
                matrix.flags.writeable = False
            self.parts[wanted] = Part(keys, matrix, _scan(matrix))
        return self.parts[wanted]

    def nearest(
        self, vectors: Sequence[Sequence[float]], limit: int, kinds: Collection[str] | None
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        """For each query vector, the ``limit`` keys of ``kinds`` closest by cosine."""
        keys, matrix, scan = self.only(kinds)
        if not keys or limit <= 0 or len(vectors) == 0:
            return [[] for _ in vectors]
        queries = np.atleast_2d(np.asarray(vectors, np.float32))
        if queries.shape[1] != matrix.shape[0]:
            raise ValidationError(
                f"query vector has {queries.shape[1]} dimensions, the keys have {matrix.shape[0]}"
            )
        norms = np.linalg.norm(queries, axis=1, keepdims=True)
        queries = queries / np.where(norms == 0, 1, norms)
        if scan is None or len(queries) >= MULTIPLY_FROM:
            tops = _multiplied(matrix, queries, limit)
        else:
            tops = _scanned(scan, matrix, queries, limit)
        # The vector is the cached (read-only) column itself: copying it into a list
        # for every candidate of every query unit took longer than the search.
        return [[(_with_vector(keys[i], matrix[:, i]), score) for i, score in top] for top in tops]


class Part(NamedTuple):
    """The keys of some kinds: their columns, and the half-precision scan over them
    (None for a part small enough to score whole)."""

    keys: list[EmbeddingKey]
    matrix: np.ndarray
    scan: Any


def _top(scores: np.ndarray, columns: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best ``(column, score)``, best first; ``scores[i]`` is
    ``columns[i]``'s."""
    # Only the top few are wanted: partition first, then sort those.
    if limit < len(scores):
        best = np.argpartition(-scores, limit - 1)[:limit]
        best = best[np.lexsort((columns[best], -scores[best]))]
    else:
        best = np.lexsort((columns, -scores))
    return [(int(columns[i]), float(scores[i])) for i in best]


def _multiplied(
    matrix: np.ndarray, queries: np.ndarray, limit: int
) -> list[list[tuple[int, float]]]:
    """Exact nearest columns, every key scored in full."""
    rows = -len(queries) % QUERY_BLOCK if len(queries) > 1 else 0
    padded = np.vstack([queries, np.zeros((rows, queries.shape[1]), np.float32)])
    columns = np.arange(matrix.shape[1])
    return [_top(row, columns, limit) for row in (padded @ matrix)[: len(queries)]]


def _scan(matrix: np.ndarray) -> Any:
    """A bfloat16 copy of many columns, scanned by faiss; None for a few."""
    if matrix.shape[1] < SCAN_FROM:
        return None
    import faiss  # only where an owner is large: it takes a while to load

    scan = faiss.IndexScalarQuantizer(
        matrix.shape[0], faiss.ScalarQuantizer.QT_bf16, faiss.METRIC_INNER_PRODUCT
    )
    scan.add(np.ascontiguousarray(matrix.T))
    return scan


def _scanned(
    scan: Any, matrix: np.ndarray, queries: np.ndarray, limit: int
) -> list[list[tuple[int, float]]]:
    """Exact nearest columns through the scan: its best candidates are scored again
    in full, and a query asks for more until its last candidate, even at the scan's
    worst error, could not beat the ``limit``-th best score."""
    import faiss

    # One thread a search (the setting is the calling thread's own): a service runs
    # several at once on its cores, and helper threads would spin waiting for theirs.
    faiss.omp_set_num_threads(1)
    tops: list[list[tuple[int, float]]] = [[] for _ in queries]
    asked, size = list(range(len(queries))), matrix.shape[1]
    wanted = min(size, 2 * limit + 32)
    while asked:
        rough, found = scan.search(queries[asked], wanted)
        again = []
        for row, rough_row, columns in zip(asked, rough, found, strict=True):
            columns = columns[columns >= 0]
            top = _top(queries[row] @ matrix[:, columns], columns, limit)
            if wanted < size and rough_row[-1] + SCAN_ERROR >= top[-1][1]:
                again.append(row)
            tops[row] = top
        asked, wanted = again, min(size, wanted * 4)
    return tops


def _with_vector(key: EmbeddingKey, vector: np.ndarray) -> EmbeddingKey:
    return EmbeddingKey.model_construct(
        id=key.id, text=key.text, ref=key.ref, kind=key.kind, vector=vector
    )


def _unit_rows(vectors: Sequence[Any]) -> np.ndarray:
    """The vectors as float32 rows of unit length (a zero vector stays zero)."""
    rows = np.vstack([np.asarray(v, np.float32) for v in vectors])
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)

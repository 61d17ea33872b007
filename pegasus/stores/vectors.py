"""Exact nearest keys over one owner's key vectors held in memory.

The SQLite store searches every owner this way; the Neo4j store does for every owner
that fits in memory (see docs/stores.md, "Vector search across owners"). A part of
many keys is first searched in faiss's 8-bit scalar-quantized index, then its best
candidates scored again in full, asking for more until no key unseen could win (see
docs/stores.md, "Searching many keys"): the same answer as scoring every key, for a
quarter of the memory traffic. The copy also counts the words of the owner's claims,
for a store whose word index cannot count them cheaply (Neo4j)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np

from pegasus.errors import ValidationError
from pegasus.model import CLAIM_KEY, EmbeddingKey

# Keys from which a part is searched in the 8-bit index first; below, scoring every
# key in full takes well under a millisecond.
SCAN_FROM = 20_000
# Room for float32 rounding around the index's bound on its error (scores of unit vectors).
SCAN_SLACK = 2e-4
# Queries from which every key is scored in full rather than searched in the index:
# the index reads every key once a query, a matrix product once for all of them.
MULTIPLY_FROM = 3
# A word as the full-text index's tokenizer keeps it: "don't", "3.14" and
# "example.com" are one word each, never counted as "don" or "example".
WORD = re.compile(r"\w+(?:['’.,:·]\w+)*")
WORDS = "words"


class KeyVectors(NamedTuple):
    keys: list[EmbeddingKey]  # without their vectors: the matrix holds them
    matrix: np.ndarray  # one unit-length key per column
    mean: np.ndarray | None  # of the name and relation keys (claims are sentences)
    version: Any  # of the owner's keys when loaded, as the store tells it
    kinds: np.ndarray  # each column's key kind
    parts: dict  # frozenset of kinds -> Part, made on first use
    counted: dict  # WORDS -> how many claim keys hold each word, counted on first use

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
        return cls(keys, columns, mean, version, kinds, {}, {})

    def updated(self, keys: list[EmbeddingKey], vectors: Sequence[Any], version: Any) -> KeyVectors:
        """This copy with ``keys`` written over it: a key already held is replaced,
        a new one added (deletions need a fresh copy). Costs a copy of the matrix,
        not a reading of every key again."""
        if not keys:
            return self._replace(version=version)
        if not self.keys:
            fresh = KeyVectors.of(keys, vectors, version)
            return self._counts_carried(fresh, [], fresh.keys)
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
        changed = {*replaced, *range(len(self.keys), len(held))}
        return self._counts_carried(
            self._of_columns(held, matrix, version),
            [self.keys[i] for i in changed if i < len(self.keys)],
            [held[i] for i in changed],
        )

    def _counts_carried(
        self, copy: KeyVectors, was: list[EmbeddingKey], now: list[EmbeddingKey]
    ) -> KeyVectors:
        """``copy`` given this copy's word counts, if made, less the keys it no longer
        holds (``was``) and plus those it holds instead (``now``): counting every
        claim again takes a while."""
        if WORDS in self.counted:
            counts = self.counted[WORDS].copy()
            counts.subtract(w for key in was for w in _claim_words(key))
            counts.update(w for key in now for w in _claim_words(key))
            copy.counted[WORDS] = counts
        return copy

    def claim_words(self) -> Counter[str]:
        """Word (lower case) -> how many claim keys hold it in their text, counted on
        first use."""
        if WORDS not in self.counted:
            self.counted[WORDS] = Counter(w for key in self.keys for w in _claim_words(key))
        return self.counted[WORDS]

    def claims_holding(self, word: str) -> int:
        return self.claim_words()[word.lower()]

    def only(self, kinds: Collection[str] | None) -> Part:
        """The keys of ``kinds`` (all when None), their columns and their index."""
        wanted = None if kinds is None else frozenset(kinds)
        if wanted not in self.parts:
            if wanted is None:
                keys, matrix = self.keys, self.matrix
            else:
                columns = np.flatnonzero(np.isin(self.kinds, list(wanted)))
                keys, matrix = [self.keys[i] for i in columns], self.matrix[:, columns]
                matrix = np.ascontiguousarray(matrix)
                matrix.flags.writeable = False
            self.parts[wanted] = Part(keys, matrix, *_index(matrix))
        return self.parts[wanted]

    def nearest(
        self, vectors: Sequence[Sequence[float]], limit: int, kinds: Collection[str] | None
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        """For each query vector, the ``limit`` keys of ``kinds`` closest by cosine."""
        part = self.only(kinds)
        keys, matrix = part.keys, part.matrix
        if not keys or limit <= 0 or len(vectors) == 0:
            return [[] for _ in vectors]
        queries = np.atleast_2d(np.asarray(vectors, np.float32))
        if queries.shape[1] != matrix.shape[0]:
            raise ValidationError(
                f"query vector has {queries.shape[1]} dimensions, the keys have {matrix.shape[0]}"
            )
        norms = np.linalg.norm(queries, axis=1, keepdims=True)
        queries = queries / np.where(norms == 0, 1, norms)
        if part.index is None or len(queries) >= MULTIPLY_FROM:
            columns = np.arange(matrix.shape[1])
            tops = [_top(row, columns, limit) for row in queries @ matrix]
        else:
            tops = _searched(part, queries, limit)
        # The vector is the cached (read-only) column itself: copying it into a list
        # for every candidate of every query unit took longer than the search.
        return [[(_with_vector(keys[i], matrix[:, i]), score) for i, score in top] for top in tops]


class Part(NamedTuple):
    """The keys of some kinds and their columns; for a large part, its 8-bit index
    and half of each dimension's step in it (None for a part small enough to score
    whole)."""

    keys: list[EmbeddingKey]
    matrix: np.ndarray
    index: Any
    half_steps: np.ndarray | None


def _index(matrix: np.ndarray) -> tuple[Any, np.ndarray | None]:
    """faiss's 8-bit index of many columns (each dimension in 255 even steps between
    its smallest and largest value), and half of each step; (None, None) for a few."""
    if matrix.shape[1] < SCAN_FROM:
        return None, None
    import faiss  # only where an owner is large: it takes a while to load

    index = faiss.IndexScalarQuantizer(
        matrix.shape[0], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    # Trained on every key (a key outside the range would break the bound), added in
    # slices: no float copy of all of them at once.
    index.train(np.ascontiguousarray(np.vstack([matrix.min(axis=1), matrix.max(axis=1)])))
    for start in range(0, matrix.shape[1], SCAN_FROM):
        index.add(np.ascontiguousarray(matrix[:, start : start + SCAN_FROM].T))
    ranges = faiss.vector_to_array(index.sq.trained)[matrix.shape[0] :]
    return index, ranges / 255 / 2


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


def _searched(part: Part, queries: np.ndarray, limit: int) -> list[list[tuple[int, float]]]:
    """Exact nearest columns through the index: its best candidates are scored again
    in full, and a query asks for more until its last candidate, even at the index's
    worst error (each key is within half a step of its stored value, dimension by
    dimension), could not beat the ``limit``-th best score."""
    import faiss

    # One thread a search (the setting is the calling thread's own): a service runs
    # several at once on its cores, and helper threads would spin waiting for theirs.
    faiss.omp_set_num_threads(1)
    matrix, size = part.matrix, part.matrix.shape[1]
    errors = np.abs(queries) @ part.half_steps + SCAN_SLACK
    tops: list[list[tuple[int, float]]] = [[] for _ in queries]
    asked, wanted = list(range(len(queries))), 4 * limit + 80
    while asked and wanted < size:
        rough, found = part.index.search(queries[asked], wanted)
        again = []
        for row, rough_row, columns in zip(asked, rough, found, strict=True):
            # In column order, a gather reads each row of the matrix straight through.
            columns = np.sort(columns)
            tops[row] = _top(queries[row] @ matrix[:, columns], columns, limit)
            if rough_row[-1] + errors[row] >= tops[row][-1][1]:
                again.append(row)
        asked, wanted = again, wanted * 4
    every = np.arange(size)  # what the index could not settle within a part's size
    for row in asked:
        tops[row] = _top(queries[row] @ matrix, every, limit)
    return tops


def _claim_words(key: EmbeddingKey) -> set[str]:
    return set(WORD.findall(key.text.lower())) if key.kind == CLAIM_KEY else set()


def _with_vector(key: EmbeddingKey, vector: np.ndarray) -> EmbeddingKey:
    return EmbeddingKey.model_construct(
        id=key.id, text=key.text, ref=key.ref, kind=key.kind, vector=vector
    )


def _unit_rows(vectors: Sequence[Any]) -> np.ndarray:
    """The vectors as float32 rows of unit length (a zero vector stays zero)."""
    rows = np.vstack([np.asarray(v, np.float32) for v in vectors])
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)

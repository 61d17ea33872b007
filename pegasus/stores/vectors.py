"""Exact nearest keys over one owner's key vectors held in memory.

The SQLite store searches every owner this way; the Neo4j store does for owners
small enough that a shared approximate index would only slow them down (see
docs/stores.md, "Vector search across owners")."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np

from pegasus.errors import ValidationError
from pegasus.model import CLAIM_KEY, EmbeddingKey


class KeyVectors(NamedTuple):
    keys: list[EmbeddingKey]  # without their vectors: the matrix holds them
    matrix: np.ndarray  # one unit-length key per column
    mean: np.ndarray | None  # of the name and relation keys (claims are sentences)
    version: Any  # of the owner's keys when loaded, as the store tells it
    kinds: np.ndarray  # each column's key kind
    parts: dict  # frozenset of kinds -> (keys, columns), made on first use

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

    def only(self, kinds: Collection[str] | None) -> tuple[list[EmbeddingKey], np.ndarray]:
        """The keys of ``kinds`` (all when None) and their columns."""
        if kinds is None:
            return self.keys, self.matrix
        wanted = frozenset(kinds)
        if wanted not in self.parts:
            columns = np.flatnonzero(np.isin(self.kinds, list(wanted)))
            part = np.ascontiguousarray(self.matrix[:, columns])
            part.flags.writeable = False
            self.parts[wanted] = ([self.keys[i] for i in columns], part)
        return self.parts[wanted]

    def nearest(
        self, vectors: Sequence[Sequence[float]], limit: int, kinds: Collection[str] | None
    ) -> list[list[tuple[EmbeddingKey, float]]]:
        """For each query vector, the ``limit`` keys of ``kinds`` closest by cosine."""
        keys, matrix = self.only(kinds)
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


def _with_vector(key: EmbeddingKey, vector: np.ndarray) -> EmbeddingKey:
    return EmbeddingKey.model_construct(
        id=key.id, text=key.text, ref=key.ref, kind=key.kind, vector=vector
    )


def _unit_rows(vectors: Sequence[Any]) -> np.ndarray:
    """The vectors as float32 rows of unit length (a zero vector stays zero)."""
    rows = np.vstack([np.asarray(v, np.float32) for v in vectors])
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)

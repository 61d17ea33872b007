"""How ordinary a text is: its similarity to everyday English words.

Embeddings cluster by category, so a key such as a country, a city or a relation
label that is an ordinary word ("learning") sits close to many unrelated query
words. Measuring each key against a fixed reference vocabulary (the most frequent
English words, from ``wordfreq``) and discounting by it is the hubness correction
used in cross-lingual retrieval (CSLS): a key that is near everything must be
nearer to this query than to ordinary words before it counts.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np

from pegasus.config import data_dir
from pegasus.embed import Embedder
from pegasus.text import is_content

VOCABULARY_SIZE = 3000
NEIGHBOURS = 10


def reference_words(size: int = VOCABULARY_SIZE) -> list[str]:
    import wordfreq

    words = [w for w in wordfreq.top_n_list("en", size * 3) if w.isalpha() and is_content(w)]
    return words[:size]


class Ordinariness:
    """Mean similarity of a vector to its nearest everyday words."""

    def __init__(self, embedder: Embedder, cache_dir: Path | None = None) -> None:
        self.embedder = embedder
        self.cache_dir = cache_dir or data_dir() / "cache"
        self._matrix: np.ndarray | None = None
        # The reference centred on the last mean seen: the mean moves only when keys do.
        self._centred: tuple[bytes, np.ndarray] | None = None
        self._by_key: dict[str, float] = {}
        self._lock = threading.RLock()

    def _vocabulary(self) -> np.ndarray:
        with self._lock:
            return self._matrix if self._matrix is not None else self._load_vocabulary()

    def _load_vocabulary(self) -> np.ndarray:
        if self._matrix is None:
            words = reference_words()
            digest = hashlib.sha256(("\n".join(words) + self.embedder.name).encode()).hexdigest()
            path = self.cache_dir / f"reference-{digest[:16]}.npy"
            if path.exists():
                self._matrix = np.load(path)
            else:
                self._matrix = self.embedder.embed_batch(words).astype(np.float32)
                path.parent.mkdir(parents=True, exist_ok=True)
                np.save(path, self._matrix)
        return self._matrix

    def of(self, vectors: np.ndarray, centre: np.ndarray | None = None) -> np.ndarray:
        """One value per row: mean cosine to the ``NEIGHBOURS`` nearest reference words,
        after subtracting ``centre`` from both sides."""
        with self._lock:
            reference = self._vocabulary()
            rows = np.atleast_2d(vectors).astype(np.float32)
            if centre is not None:
                reference = self._centred_reference(reference, centre)
                rows = _unit(rows - centre)
            sims = rows @ reference.T
        k = min(NEIGHBOURS, sims.shape[1])
        return np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1)

    def of_keys(self, ids: list[str], vectors: np.ndarray, centre: np.ndarray) -> np.ndarray:
        """Like :meth:`of`, remembered per key id while the centre stays put. Locked:
        threads recalling for owners with other centres share one reference."""
        with self._lock:
            self._centred_reference(self._vocabulary(), centre)
            missing = [i for i, key_id in enumerate(ids) if key_id not in self._by_key]
            if missing:
                values = self.of(vectors[missing], centre)
                self._by_key.update(zip((ids[i] for i in missing), values.tolist(), strict=True))
            return np.asarray([self._by_key[key_id] for key_id in ids])

    def _centred_reference(self, reference: np.ndarray, centre: np.ndarray) -> np.ndarray:
        tag = np.asarray(centre, np.float32).tobytes()
        if self._centred is None or self._centred[0] != tag:
            self._centred = (tag, _unit(reference - centre))
            self._by_key = {}
        return self._centred[1]


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)

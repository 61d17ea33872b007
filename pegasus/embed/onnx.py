"""The embedding model run by ONNX Runtime.

The same vectors as sentence-transformers (cosine 0.99999 or more), a third of the
time per call on a small CPU (docs/recall.md, "Speed"), and no torch import once the
model has been exported: the export runs once per model, through torch, into the
user's cache directory. Models whose sentence-transformers pipeline is not
"transformer, mean pooling, normalise" run through sentence-transformers instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import platformdirs

from pegasus.embed.base import DEFAULT_MODEL, Embedder, SentenceTransformerEmbedder, bundled_path
from pegasus.errors import ConfigError

Run = Callable[[Sequence[str]], np.ndarray]
OPSET = 17
BATCH = 64  # texts per run of the model (sentence-transformers uses 32)
MEAN_POOLING = "sentence_transformers.models.Pooling"
NORMALIZE = "sentence_transformers.models.Normalize"


def models_dir() -> Path:
    return Path(platformdirs.user_cache_dir("pegasus")) / "models"


class OnnxEmbedder(Embedder):
    """A sentence-transformers model by name or path, exported to ONNX on first use."""

    def __init__(self, model: str = DEFAULT_MODEL, cache: Path | None = None) -> None:
        self.name = model
        self._cache = cache
        self._run: Run | None = None
        self._loading = threading.Lock()

    def _load(self) -> Run:
        with self._loading:
            if self._run is None:
                folder = Path(bundled_path(self.name))
                if _exportable(folder):
                    self._run = _session(self.name, folder, self._cache or models_dir())
                else:
                    self._run = SentenceTransformerEmbedder(self.name).embed_batch
            return self._run

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), np.float32)
        return self._load()(texts)


def _modules(folder: Path) -> list[str]:
    try:
        return [module["type"] for module in json.loads((folder / "modules.json").read_text())]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _exportable(folder: Path) -> bool:
    """A local transformer, mean pooling and normalisation, with a fast tokenizer."""
    modules = _modules(folder)
    if len(modules) != 3 or modules[1:] != [MEAN_POOLING, NORMALIZE]:
        return False
    try:
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError):
        return False
    modes = [key for key, on in pooling.items() if key.startswith("pooling_mode") and on]
    return modes == ["pooling_mode_mean_tokens"] and (folder / "tokenizer.json").is_file()


def _fingerprint(folder: Path) -> str:
    """Names the export after the weights it came from, so new weights export again."""
    digest = hashlib.sha256(str(folder.resolve()).encode())
    for path in sorted(folder.glob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _session(name: str, folder: Path, cache: Path) -> Run:
    import onnxruntime
    from tokenizers import Tokenizer

    path = cache / f"{folder.name}-{_fingerprint(folder)}.onnx"

    def open_session() -> onnxruntime.InferenceSession:
        options = onnxruntime.SessionOptions()
        # Its worker threads otherwise spin for a while after each run, waiting for
        # more: in recall the rest of the work (key search, store reads) then shares
        # the cores with them and ran a third slower (docs/recall.md, "Speed").
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    if not path.is_file():
        _export(name, path)
    try:
        session = open_session()
    except Exception:  # a truncated or foreign file under our name: export once more
        path.unlink(missing_ok=True)
        _export(name, path)
        try:
            session = open_session()
        except Exception as exc:
            raise ConfigError(f"cannot run the exported model {path}: {exc}") from exc
    inputs = [item.name for item in session.get_inputs()]

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=_max_length(folder))
    padding = tokenizer.padding or {}  # to the longest text of each batch
    tokenizer.enable_padding(
        pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]")
    )

    def run(texts: Sequence[str]) -> np.ndarray:
        # In batches, as sentence-transformers does: one batch of every text would
        # hold activations for all of them at once (gigabytes for a large import).
        parts = [run_batch(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        return np.concatenate(parts)

    def run_batch(texts: Sequence[str]) -> np.ndarray:
        encodings = tokenizer.encode_batch([str(text).strip() for text in texts])
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        feed = {name: np.asarray(columns[name], dtype=np.int64) for name in inputs}
        hidden = session.run(None, feed)[0]
        mask = feed["attention_mask"][..., None].astype(np.float32)
        vectors = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return (vectors / norms).astype(np.float32)

    return run


def _max_length(folder: Path) -> int:
    try:
        return int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 512


def _export(name: str, path: Path) -> None:
    """Traces the model's transformer once; written beside its final name, then moved,
    so a process reading the cache never sees half a file."""
    import torch

    model = SentenceTransformerEmbedder(name).load()
    transformer = model[0].auto_model.eval()
    sample = model[0].tokenizer(["an example", "two"], padding=True, return_tensors="pt")
    names = [key for key in ("input_ids", "attention_mask", "token_type_ids") if key in sample]

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *columns: torch.Tensor) -> torch.Tensor:
            return self.transformer(**dict(zip(names, columns, strict=True))).last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, suffix=".partial")
    os.close(handle)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Hidden(), tuple(sample[key] for key in names), partial,
                input_names=names, output_names=["hidden"], opset_version=OPSET, dynamo=False,
                dynamic_axes={key: {0: "batch", 1: "tokens"} for key in [*names, "hidden"]},
            )  # fmt: skip
        os.replace(partial, path)
    except Exception as exc:
        raise ConfigError(f"cannot export embedding model {name!r} to ONNX: {exc}") from exc
    finally:
        Path(partial).unlink(missing_ok=True)

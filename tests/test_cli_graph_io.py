"""``pegasus import`` / ``export`` through the real entry point, on both stores."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pegasus.errors import ConfigError, ValidationError
from pegasus.interchange import parse_graph
from pegasus.stores import Store
from tests.cli_helpers import run_cli
from tests.conftest import SEED_GRAPH, neo4j_uri, wipe


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def target(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[list[str], Store, str]]:
    """Global CLI options for a store, the store itself, and a fresh user."""
    user = f"cli-{uuid.uuid4().hex[:8]}"
    if request.param == "sqlite":
        from pegasus.stores.sqlite import SQLiteStore

        path = tmp_path / "cli.db"
        store: Store = SQLiteStore(path)
        yield ["--store", f"sqlite:///{path}", "--user", user], store, user
        store.close()
    else:
        store = request.getfixturevalue("_neo4j_session_store")
        yield ["--store", neo4j_uri(), "--user", user], store, user
        wipe(store, user)


def test_import_then_export_round_trips(capsys, target, tmp_path: Path) -> None:
    options, store, user = target
    result = run_cli(capsys, *options, "import", str(SEED_GRAPH))
    assert result.code == 0, result.err
    assert "16 nodes and 21 edges" in result.out

    exported = run_cli(capsys, *options, "export")
    assert exported.code == 0
    original = json.loads(SEED_GRAPH.read_text())
    back = {n["id"]: n for n in json.loads(exported.out)["nodes"]}
    for node in original["nodes"]:
        assert {k: back[node["id"]][k] for k in node} == node
    back_edges = {e["id"]: e for e in json.loads(exported.out)["edges"]}
    for edge in original["edges"]:
        got = {k: back_edges[edge["id"]][k] for k in edge}
        assert parse_graph(json.dumps({"nodes": original["nodes"], "edges": [got]})).edges == (
            parse_graph(json.dumps({"nodes": original["nodes"], "edges": [edge]})).edges
        )

    out_file = tmp_path / "export.json"
    assert run_cli(capsys, *options, "export", str(out_file)).code == 0
    assert parse_graph(out_file.read_text()).edges == parse_graph(exported.out).edges


def _bad_files() -> dict[str, tuple[str, str]]:
    seed = json.loads(SEED_GRAPH.read_text())

    def variant(change) -> str:
        doc = json.loads(json.dumps(seed))
        change(doc)
        return json.dumps(doc)

    def set_edge(field, value):
        return lambda doc: doc["edges"][3].__setitem__(field, value)

    return {
        "bad kind": (variant(lambda d: d["nodes"][2].__setitem__("kind", "ROBOT")), "ROBOT"),
        "lower-case relation": (variant(set_edge("relation", "works_at")), "works_at"),
        "self-relation": (variant(set_edge("to", seed["edges"][3]["from"])), "itself"),
        "missing snippet": (variant(lambda d: d["edges"][3].pop("snippet")), "snippet"),
        "empty snippet": (variant(set_edge("snippet", "   ")), "snippet"),
        "strength out of range": (variant(set_edge("strength", 140)), "strength"),
        "confidence out of range": (variant(set_edge("confidence", -0.1)), "confidence"),
        "unknown stability": (variant(set_edge("stability", "forever")), "stability"),
        "edge to a missing node": (variant(set_edge("to", "PERSON::ghost")), "PERSON::ghost"),
        "expiry on a stable claim": (
            variant(set_edge("expires_at", "2027-01-01T00:00:00Z")),
            "expires_at",
        ),
        "broken JSON": (SEED_GRAPH.read_text()[:-40], "not valid JSON"),
        "not an object": ("[1, 2]", "must hold an object"),
    }


@pytest.mark.parametrize("case", list(_bad_files()))
def test_bad_file_is_refused_and_nothing_changes(capsys, target, tmp_path, case) -> None:
    options, store, user = target
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"nodes": [{"id": "PLACE::home", "label": "Home",
                                            "kind": "PLACE"}], "edges": []}))  # fmt: skip
    assert run_cli(capsys, *options, "import", str(small)).code == 0
    before = store.export(user)

    text, expected = _bad_files()[case]
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = run_cli(capsys, *options, "import", str(bad))
    assert result.code == ValidationError.exit_code
    assert result.err.startswith("error:") and expected in result.err
    assert len(result.err.strip().splitlines()) <= 2  # one clear message, no traceback
    after = store.export(user)
    assert after.nodes == before.nodes and after.edges == before.edges


def test_missing_file_is_one_clear_line(capsys, tmp_path) -> None:
    result = run_cli(capsys, "--store", f"sqlite:///{tmp_path}/x.db", "import", "nope.json")
    assert result.code == 1 and "cannot read nope.json" in result.err


def test_unknown_store_url(capsys) -> None:
    result = run_cli(capsys, "--store", "postgres://x", "stats")
    assert result.code == ConfigError.exit_code and "unknown store URL" in result.err


def _keys(store: Store, user: str) -> dict[str, list[float]]:
    return {key.text: list(key.vector) for key in store.list_keys(user, with_vectors=True)}


def test_an_export_with_vectors_imports_without_embedding_again(
    capsys, target, tmp_path: Path, monkeypatch
) -> None:
    options, store, user = target
    assert run_cli(capsys, *options, "import", str(SEED_GRAPH)).code == 0
    out_file = tmp_path / "with-vectors.json"
    assert run_cli(capsys, *options, "export", "--vectors", str(out_file)).code == 0
    carried = json.loads(out_file.read_text())["vectors"]
    assert carried["model"] == "all-MiniLM-L6-v2" and carried["dimensions"] == 384
    assert set(carried["float32"]) == set(_keys(store, user))

    # Into a second memory on the same model: every key comes from the file.
    from pegasus.embed import CachedEmbedder

    asked: list[str] = []
    embed_batch = CachedEmbedder.embed_batch

    def noted(self: CachedEmbedder, texts: list[str]):
        asked.extend(texts)
        return embed_batch(self, texts)

    monkeypatch.setattr(CachedEmbedder, "embed_batch", noted)
    other = options[:-1] + [options[-1] + "-copy"]
    try:
        result = run_cli(capsys, *other, "import", str(out_file))
        assert result.code == 0, result.err
        assert not set(asked) & set(carried["float32"])
        assert _keys(store, other[-1]) == _keys(store, user)
        recalled = [run_cli(capsys, *o, "recall", "How is Joshua doing at Deloitte?").out
                    for o in (options, other)]  # fmt: skip
        assert recalled[0] == recalled[1] and "Joshua" in recalled[0]
    finally:
        wipe(store, other[-1])


def test_vectors_of_another_model_are_embedded_again(capsys, target, tmp_path: Path) -> None:
    options, store, user = target
    assert run_cli(capsys, *options, "import", str(SEED_GRAPH)).code == 0
    assert run_cli(capsys, *options, "export", "--vectors", str(tmp_path / "v.json")).code == 0
    document = json.loads((tmp_path / "v.json").read_text())
    document["vectors"]["model"] = "some-other-model"
    document["vectors"]["float32"] = dict.fromkeys(document["vectors"]["float32"], "AAAAAAAAAAA=")
    document["vectors"]["dimensions"] = 2
    other = options[:-1] + [options[-1] + "-other"]
    (tmp_path / "other.json").write_text(json.dumps(document))
    try:
        result = run_cli(capsys, *other, "import", str(tmp_path / "other.json"))
        assert result.code == 0, result.err
        assert "'some-other-model' (2 dimensions)" in " ".join(result.out.split())
        assert _keys(store, other[-1]) == _keys(store, user)
    finally:
        wipe(store, other[-1])


@pytest.mark.parametrize(
    "vectors",
    [
        {"model": "all-MiniLM-L6-v2", "dimensions": 384, "float32": {"Evan": "not base64!"}},
        {"model": "all-MiniLM-L6-v2", "dimensions": 384, "float32": {"Evan": "AAAAAA=="}},
        {"model": "all-MiniLM-L6-v2", "dimensions": 1, "float32": {"Evan": "AADAfw=="}},  # NaN
        {"dimensions": 384, "float32": {}},
        ["not", "an", "object"],
    ],
)
def test_malformed_vectors_are_refused_and_nothing_is_written(
    capsys, target, tmp_path: Path, vectors
) -> None:
    options, store, user = target
    document = json.loads(SEED_GRAPH.read_text()) | {"vectors": vectors}
    (tmp_path / "bad.json").write_text(json.dumps(document))
    result = run_cli(capsys, *options, "import", str(tmp_path / "bad.json"))
    assert result.code == 2 and "vectors" in result.err
    assert store.stats(user).nodes == 0

"""``pegasus doctor``: one line per check, what to fix, exit 1 on a problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pegasus.llm.scripted import Step
from pegasus.stores.sqlite import MIGRATIONS, SQLiteStore
from tests.cli_helpers import Result, run_cli
from tests.conftest import neo4j_uri

CHECKS = ["config", "store", "embedding", "llm", "neo4j", "jobs"]


def doctor(
    capsys: pytest.CaptureFixture[str], *options: str, llm: bool = False
) -> tuple[Result, dict]:
    """Run ``pegasus [options] doctor --json``: the result and the checks by name."""
    result = run_cli(capsys, *options, "doctor", "--json", *(["--llm"] if llm else []))
    report = json.loads(result.out)
    assert [check["name"] for check in report["checks"]] == CHECKS
    assert report["ok"] == (result.code == 0)
    return result, {check["name"]: check for check in report["checks"]}


def line(out: str, name: str) -> str:
    """The text line of one check."""
    found = [text for text in out.splitlines() if text.split()[1:2] == [name]]
    assert len(found) == 1, out
    return found[0]


def test_a_healthy_sqlite_setup_passes(capsys, monkeypatch, tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteStore(path).close()
    url = f"sqlite:///{path}"
    monkeypatch.setenv("PEGASUS_STORE", url)

    result = run_cli(capsys, "doctor")
    assert result.code == 0, result.out + result.err
    assert not [text for text in result.out.splitlines() if text.startswith("problem")]
    assert line(result.out, "config").startswith("ok ")
    assert f"PEGASUS_STORE={url} (environment)" in line(result.out, "config")
    store = line(result.out, "store")
    assert store.startswith("ok ") and f"migrations applied ({len(MIGRATIONS)} of" in store
    embedding = line(result.out, "embedding")
    assert embedding.startswith("ok ") and "all-MiniLM-L6-v2" in embedding
    assert "loaded offline in" in embedding and "384 dimensions" in embedding
    llm = line(result.out, "llm")
    assert llm.startswith("warning ") and "PEGASUS_LLM_BASE_URL" in llm and "ingest" in llm
    assert line(result.out, "neo4j").startswith("ok ")
    assert result.out.splitlines()[-1] == "ready, with 1 warning"

    result, checks = doctor(capsys)
    assert result.code == 0
    assert {name: check["status"] for name, check in checks.items()} == {
        "config": "ok", "store": "ok", "embedding": "ok", "llm": "warning", "neo4j": "ok",
        "jobs": "ok",
    }  # fmt: skip
    assert checks["store"]["details"]["from"] == "PEGASUS_STORE"
    assert checks["embedding"]["details"]["load_seconds"] > 0


def test_a_new_sqlite_file_is_not_created(capsys, tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    result, checks = doctor(capsys, "--store", f"sqlite:///{path}")
    assert result.code == 0
    assert checks["store"]["status"] == "ok"
    assert "created on first use" in checks["store"]["message"]
    assert not path.exists()


def test_a_sqlite_url_in_a_missing_folder_is_a_problem(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "nowhere"
    result = run_cli(capsys, "--store", f"sqlite:///{folder}/memory.db", "doctor")
    assert result.code == 1
    store = line(result.out, "store")
    assert store.startswith("problem ")
    assert f"the folder {folder} does not exist" in store and f"mkdir -p {folder}" in store
    assert result.out.splitlines()[-1] == "not ready: 1 problem, 1 warning"
    assert not folder.exists()


def test_a_store_file_that_is_not_a_database_is_a_problem(capsys, tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_text("not a database\n" * 100)
    result, checks = doctor(capsys, "--store", f"sqlite:///{path}")
    assert result.code == 1
    assert checks["store"]["status"] == "problem"
    assert str(path) in checks["store"]["message"] and checks["store"]["fix"]


def test_a_store_in_memory_is_a_warning(capsys) -> None:
    result, checks = doctor(capsys, "--store", "sqlite:///:memory:")
    assert result.code == 0
    assert (
        checks["store"]["status"] == "warning" and "nothing is kept" in checks["store"]["message"]
    )


def test_an_unknown_store_scheme_is_a_problem(capsys) -> None:
    result, checks = doctor(capsys, "--store", "postgres://localhost/memory")
    assert result.code == 1
    assert "unknown store URL" in checks["store"]["message"]


def test_neo4j_nobody_listens_on_is_a_problem(capsys) -> None:
    result = run_cli(capsys, "--store", "bolt://127.0.0.1:1", "doctor")
    assert result.code == 1
    store = line(result.out, "store")
    assert store.startswith("problem ") and "cannot reach Neo4j at bolt://127.0.0.1:1" in store
    assert "->" in store  # and what to do


def test_an_unreachable_neo4j_uri_beside_a_sqlite_store_is_a_warning(
    capsys, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    result, checks = doctor(capsys, "--store", f"sqlite:///{tmp_path / 'memory.db'}")
    assert result.code == 0
    assert checks["store"]["status"] == "ok"
    assert checks["neo4j"]["status"] == "warning"
    assert "unset NEO4J_URI" in checks["neo4j"]["fix"]


def test_a_bad_llm_timeout_is_a_problem_naming_it(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PEGASUS_LLM_TIMEOUT", "soon")
    result = run_cli(capsys, "--store", f"sqlite:///{tmp_path / 'memory.db'}", "doctor")
    assert result.code == 1
    config = line(result.out, "config")
    assert config.startswith("problem ") and "PEGASUS_LLM_TIMEOUT='soon'" in config
    assert "correct or unset PEGASUS_LLM_TIMEOUT (environment)" in config
    # The other checks still run, with that setting at its default.
    assert line(result.out, "store").startswith("ok ")
    assert line(result.out, "embedding").startswith("ok ")


def test_the_config_file_is_named_as_a_source_and_unknown_keys_flagged(
    capsys, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "config" / "pegasus").mkdir(parents=True)
    (tmp_path / "config" / "pegasus" / "config.env").write_text(
        "PEGASUS_LLM_RETRIES=2\nNEO4J_PASSWORD=secret\nPEGASUS_LLM_MODLE=qwen\n"
    )
    result, checks = doctor(capsys, "--store", f"sqlite:///{tmp_path / 'memory.db'}")
    assert result.code == 0
    config = checks["config"]
    assert config["status"] == "warning"
    assert "PEGASUS_LLM_RETRIES=2 (config file)" in config["message"]
    assert "PEGASUS_LLM_MODLE" in config["message"] and "NEO4J_PASSWORD=(set)" in config["message"]
    assert "secret" not in result.out


def test_a_bad_config_file_value_names_the_file(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "config" / "pegasus").mkdir(parents=True)
    (tmp_path / "config" / "pegasus" / "config.env").write_text("PEGASUS_LLM_RETRIES=-3\n")
    result, checks = doctor(capsys, "--store", f"sqlite:///{tmp_path / 'memory.db'}")
    assert result.code == 1
    assert "PEGASUS_LLM_RETRIES" in checks["config"]["message"]
    config_env = tmp_path / "config" / "pegasus" / "config.env"
    assert f"PEGASUS_LLM_RETRIES (config file {config_env})" in checks["config"]["fix"]
    assert checks["store"]["status"] == "ok"  # the rest still checked


def test_a_blank_user_is_a_problem(capsys, tmp_path: Path) -> None:
    result, checks = doctor(capsys, "--user", "  ", "--store", f"sqlite:///{tmp_path / 'm.db'}")
    assert result.code == 1
    assert checks["config"]["status"] == "problem"
    assert "--user" in checks["config"]["fix"]


def test_a_missing_embedding_model_is_a_problem(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PEGASUS_EMBED_MODEL", str(tmp_path / "no-model"))
    result, checks = doctor(capsys, "--store", f"sqlite:///{tmp_path / 'memory.db'}")
    assert result.code == 1
    assert checks["embedding"]["status"] == "problem"
    assert "no-model" in checks["embedding"]["message"]
    assert "PEGASUS_EMBED_MODEL" in checks["embedding"]["fix"]


def test_half_a_language_model_setting_is_a_problem(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "qwen2.5:14b")
    result, checks = doctor(capsys, "--store", f"sqlite:///{tmp_path / 'memory.db'}")
    assert result.code == 1
    assert checks["llm"]["status"] == "problem"
    assert "PEGASUS_LLM_BASE_URL" in checks["llm"]["fix"]


def test_the_language_model_is_called_only_with_llm(
    capsys, monkeypatch, tmp_path: Path, serve
) -> None:
    requests: list[dict] = []

    def respond(body: dict) -> Step:
        requests.append(body)
        return Step(content="ready")

    server = serve(respond)
    monkeypatch.setenv("PEGASUS_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "scripted")
    store = ("--store", f"sqlite:///{tmp_path / 'memory.db'}")

    result, checks = doctor(capsys, *store)
    assert result.code == 0 and checks["llm"]["status"] == "ok"
    assert "not contacted" in checks["llm"]["message"] and not requests

    result = run_cli(capsys, *store, "doctor", "--llm")
    assert result.code == 0, result.out
    assert "answered in" in line(result.out, "llm") and len(requests) == 1
    assert "everything is ready" in result.out


def test_a_language_model_that_does_not_answer_is_a_problem(
    capsys, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PEGASUS_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "absent")
    store = ("--store", f"sqlite:///{tmp_path / 'memory.db'}")
    result, checks = doctor(capsys, *store)
    assert result.code == 0  # not contacted without --llm
    result, checks = doctor(capsys, *store, llm=True)
    assert result.code == 1
    assert checks["llm"]["status"] == "problem"
    assert "cannot reach the language model" in checks["llm"]["message"]


@pytest.mark.neo4j
def test_neo4j_at_neo4j_uri_reports_ok(capsys, monkeypatch, tmp_path, _neo4j_session_store) -> None:
    monkeypatch.setenv("NEO4J_URI", neo4j_uri())
    result, checks = doctor(capsys, "--store", f"sqlite:///{tmp_path / 'memory.db'}")
    assert result.code == 0, result.out
    assert checks["neo4j"]["status"] == "ok"
    assert "answers: Neo4j/" in checks["neo4j"]["message"]
    assert "not the store in use" in checks["neo4j"]["message"]


@pytest.mark.neo4j
def test_a_neo4j_store_has_its_schema(capsys, _neo4j_session_store) -> None:
    result = run_cli(capsys, "--store", neo4j_uri(), "doctor")
    assert result.code == 0, result.out
    store = line(result.out, "store")
    assert store.startswith("ok ") and "schema in place" in store

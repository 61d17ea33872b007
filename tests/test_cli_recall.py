"""``pegasus recall``, ``close`` and ``decay`` through the real entry point."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pegasus.errors import NotFoundError, ValidationError
from pegasus.recall.inject import NOTICE
from tests.cli_helpers import run_cli
from tests.conftest import SEED_GRAPH

NOW = "2026-09-20T09:00:00+00:00"


@pytest.fixture
def options(capsys, tmp_path: Path) -> list[str]:
    opts = ["--store", f"sqlite:///{tmp_path / 'm.db'}", "--user", "trevor"]
    assert run_cli(capsys, *opts, "import", str(SEED_GRAPH)).code == 0
    return opts


def test_json_has_the_specified_fields(capsys, options) -> None:
    result = run_cli(capsys, *options, "recall", "Should I take the bank offer?", "--json",
                     "--now", NOW)  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert {"seeds", "fired", "memory", "context", "text", "used_edges", "shown"} <= set(data)
    first = data["fired"][0]
    assert set(first) == {"id", "name", "kind", "score", "via", "hop", "why"} and first["why"]
    assert {s["edge_id"] for s in data["shown"]} == set(data["used_edges"])
    assert first["via"] in {"seed", "forward", "reverse"}
    assert data["text"].startswith(f"{NOTICE}\n[MEMORY]\n")
    plain = run_cli(capsys, *options, "recall", "Should I take the bank offer?", "--now", NOW)
    assert plain.out.rstrip("\n") == data["text"]


def test_stdin_gives_one_object_per_line(capsys, options, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("Should I take the bank offer?\n\npasta?\n"))
    result = run_cli(capsys, *options, "recall", "-", "--json", "--now", NOW)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line["message"] for line in lines] == ["Should I take the bank offer?", "pasta?"]
    assert lines[0]["fired"] and not lines[1]["fired"]


def test_close_reinforces_once_and_decay_reports(capsys, options) -> None:
    later = "2026-12-01T09:00:00+00:00"
    run_cli(capsys, *options, "recall", "Should I take the bank offer?", "--conversation-id",
            "c2", "--now", later)  # fmt: skip
    first = run_cli(capsys, *options, "close", "c2", "--now", later)
    assert first.code == 0 and first.out.startswith("reinforced ")
    assert int(first.out.split()[1]) >= 1
    assert "reinforced 0 edges" in run_cli(capsys, *options, "close", "c2").out
    decayed = run_cli(capsys, *options, "decay", "--now", "2027-09-20")
    assert decayed.code == 0 and decayed.out.startswith("decayed 21 edges")
    missing = run_cli(capsys, *options, "close", "nope")
    assert missing.code == NotFoundError.exit_code and "no conversation 'nope'" in missing.err


def test_bad_time_is_one_clear_line(capsys, options) -> None:
    result = run_cli(capsys, *options, "decay", "--now", "yesterday")
    assert result.code == ValidationError.exit_code
    assert "--now 'yesterday' is not an ISO" in result.err

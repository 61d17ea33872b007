"""``pegasus demo`` runs offline in a temporary store and shows the whole loop."""

from __future__ import annotations

from tests.cli_helpers import run_cli


def test_demo_shows_storage_recall_and_decay(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = run_cli(capsys, "--store", f"sqlite:///{tmp_path / 'demo.db'}", "demo")
    assert result.code == 0, result.err
    out = result.out
    assert "recorded model answers" in out
    assert "16 entities created" in out and "21 relations added" in out
    assert "[MEMORY]" in out and '"Trevor" -[REPORTS_TO]-> "Joshua"' in out
    assert "memories that were used got +15" in out
    assert "+180 days" in out and "(dormant)" in out

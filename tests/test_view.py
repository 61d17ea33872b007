"""``pegasus view`` writes a self-contained page; headless Chromium loads it with no
errors and shows the right counts and details."""

from __future__ import annotations

import subprocess

from tests.chromium import chromium
from tests.cli_helpers import run_cli
from tests.conftest import SEED_GRAPH


def load(page, fragment: str = "") -> tuple[str, str]:
    """The page's DOM after its scripts ran, and the browser's log."""
    done = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--virtual-time-budget=10000", "--dump-dom", f"{page.as_uri()}{fragment}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def test_the_page_loads_and_shows_the_memory(capsys, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert run_cli(capsys, "--store", url, "import", str(SEED_GRAPH), "--no-index").code == 0
    page = tmp_path / "view.html"
    result = run_cli(capsys, "--store", url, "view", "--out", str(page))
    assert result.code == 0, result.err
    html = page.read_text()
    assert not any(f'{attr}="http' in html for attr in ("src", "href")) and "<link" not in html
    dom, log = load(page, "#node=PERSON::joshua")
    assert 'data-ready="yes"' in dom and 'data-errors="[]"' in dom
    assert "16 nodes · 21 edges" in dom
    assert dom.count("<circle") == 16 and dom.count("<line") == 21
    # Details of the picked node, with its claims' snippets.
    assert "I hate having a boss" in dom and "REPORTS_TO" in dom
    assert "Uncaught" not in log and "SyntaxError" not in log

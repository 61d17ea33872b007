"""``pegasus serve`` as a process: it says where it answers, needs its token, and
stops cleanly on SIGTERM, removing what it said."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.faults import free_port
from pegasus.config import service_file
from pegasus.memory import Pegasus
from tests.conftest import SEED_GRAPH


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from pegasus.cli.app import main; main()", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def serve_process(store_url: str, port: int, env: dict[str, str] | None = None, *more: str):
    """``pegasus serve`` in a process of its own, without the daily decay."""
    return subprocess.Popen(serving(store_url, port, *more), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)  # fmt: skip


def serving(store_url: str, port: int, *more: str) -> list[str]:
    return [sys.executable, "-c", "from pegasus.cli.app import main; main()",
            "--store", store_url, "serve", "--port", str(port), "--no-decay", *more]  # fmt: skip


def answering(url: str, status: int = 200, seconds: float = 120) -> None:
    """Waits until the service's /health gives ``status``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health").status_code == status:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("the service never answered")


def sample_store(tmp_path: Path) -> str:
    """The sample memory in an SQLite file, as its URL."""
    url = f"sqlite:///{tmp_path / 'served.db'}"
    with Pegasus(url) as core:
        core.for_user("default").import_file(SEED_GRAPH)
    return url


def test_serve_answers_and_stops_cleanly(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_TOKEN", "t0ken-long-enough-4tests")
    port = free_port()
    process = serve_process(sample_store(tmp_path), port)
    try:
        url = f"http://127.0.0.1:{port}"
        answering(url, status=401)  # the token is needed
        store = f"sqlite:{tmp_path / 'served.db'}"
        said = {"url": url, "pid": process.pid, "store": store}
        assert json.loads(service_file().read_text()) == said
        auth = {"Authorization": "Bearer t0ken-long-enough-4tests"}
        assert httpx.get(f"{url}/health", headers=auth).json()["ok"] is True
        stats = httpx.get(f"{url}/stats", params={"user": "u"}, headers=auth).json()
        assert stats["nodes"] == 0
        # The command line asks the running service (this machine's own default store
        # is empty: only the service holds the sample memory)...
        asked = cli("recall", "What did Joshua say about the Nova AI offer?", "--json",
                    "--conversation-id", "c1")  # fmt: skip
        assert asked.returncode == 0, asked.stderr
        fired = {f["id"] for f in json.loads(asked.stdout)["fired"]}
        assert "PERSON::joshua" in fired
        closed = cli("close", "c1")
        assert closed.returncode == 0 and "reinforced" in closed.stdout
        assert closed.stdout.split()[1] != "0"
        # ...unless told to work here.
        local = cli("--local", "recall", "What did Joshua say about the Nova AI offer?")
        assert local.returncode == 0 and local.stdout.strip() == ""
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert not service_file().exists()
    assert os.environ["PEGASUS_TOKEN"] == "t0ken-long-enough-4tests"


def test_a_second_service_is_refused_and_the_first_goes_on(tmp_path) -> None:
    store, served = sample_store(tmp_path), tmp_path / "served.db"
    port = free_port()
    first = serve_process(store, port)
    try:
        url = f"http://127.0.0.1:{port}"
        answering(url)
        said = service_file().read_text()
        # Another port, the same data folder: refused before it loads anything.
        second = subprocess.run(serving(store, free_port()),
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        assert second.returncode == 2
        assert f"a memory service already runs at {url} (pid {first.pid})" in second.stderr
        assert service_file().read_text() == said
        # A port another program holds: a clear error, and nothing written.
        elsewhere = tmp_path / "elsewhere"
        taken = subprocess.run(serving(store, port),
                               capture_output=True, text=True, timeout=60,
                               env={**os.environ, "XDG_DATA_HOME": str(elsewhere)})  # fmt: skip
        assert taken.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in taken.stderr
        assert not (elsewhere / "pegasus" / "service.json").exists()
        assert httpx.get(f"{url}/health").json()["ok"] is True
        # A command naming the store the service holds asks the service, relative path
        # and all; one naming another store works here.
        relative = os.path.relpath(served)
        asked = cli("--store", f"sqlite:///{relative}", "recall", "Joshua and the Nova AI offer")
        assert asked.returncode == 0 and "Joshua" in asked.stdout
        other = cli("--store", f"sqlite:///{tmp_path / 'other.db'}", "recall", "Joshua")
        assert other.returncode == 0 and other.stdout.strip() == ""
    finally:
        first.send_signal(signal.SIGTERM)
        output = first.communicate(timeout=60)[0]
    assert first.returncode == 0
    assert output.count("POST /recall") == 1, output  # the first command's, not the other's
    assert not service_file().exists()

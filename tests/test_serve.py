"""``pegasus serve`` as a process: it says where it answers, needs its token, and
stops cleanly on SIGTERM, removing what it said."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx

from pegasus.config import service_file
from pegasus.memory import Pegasus
from tests.conftest import SEED_GRAPH


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from pegasus.cli.app import main; main()", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def serve_process(store_url: str, port: int, env: dict[str, str] | None = None):
    """``pegasus serve`` in a process of its own, without the daily decay."""
    return subprocess.Popen(
        [sys.executable, "-c", "from pegasus.cli.app import main; main()",
         "--store", store_url, "serve", "--port", str(port), "--no-decay"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip


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


def test_serve_answers_and_stops_cleanly(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_TOKEN", "t0ken")
    with Pegasus(f"sqlite:///{tmp_path / 'served.db'}") as core:
        core.for_user("default").import_file(SEED_GRAPH)
    port = free_port()
    process = serve_process(f"sqlite:///{tmp_path / 'served.db'}", port)
    try:
        url = f"http://127.0.0.1:{port}"
        answering(url, status=401)  # the token is needed
        assert json.loads(service_file().read_text()) == {"url": url, "pid": process.pid}
        auth = {"Authorization": "Bearer t0ken"}
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
    assert os.environ["PEGASUS_TOKEN"] == "t0ken"

"""The decay daemon as a real process: it catches up at start and stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pegasus.interchange import parse_graph
from pegasus.stores import Changes
from pegasus.stores.sqlite import SQLiteStore
from tests.conftest import SEED_GRAPH


def test_catch_up_then_clean_stop(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    store = SQLiteStore(db)
    store.apply("default", Changes.of_graph(parse_graph(SEED_GRAPH.read_text())))
    store.close()
    env = {**os.environ, "PEGASUS_STORE": f"sqlite:///{db}"}
    process = subprocess.Popen(
        [sys.executable, "-c", "from pegasus.cli.app import main; main()", "scheduler",
         "--at", "04:00"],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    log = ""
    deadline = time.monotonic() + 60
    assert process.stderr is not None
    while "Scheduler started" not in log and time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        log += line
    process.send_signal(signal.SIGTERM)
    _, rest = process.communicate(timeout=30)
    log += rest
    assert process.returncode == 0, log
    assert "decay pass: 21 edges" in log
    assert "stopping on signal 15" in log and "stopped" in log
    # The catch-up pass ran for real: strengths are now as of today.
    reopened = SQLiteStore(db)
    assert all(e.strength < e.strength0 or e.stability == "immutable"
               for e in reopened.export("default").edges)  # fmt: skip
    reopened.close()

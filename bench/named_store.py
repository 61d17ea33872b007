"""A fresh ``pegasus recall`` while the service runs, with the store named (as
``PEGASUS_STORE`` in the environment or ``config.env`` names it) and without.

    python -m bench.named_store [--runs 30]

The sample memory in an SQLite file, ``pegasus serve`` on it, then ``pegasus recall``
from fresh processes, alternating: no store named, ``PEGASUS_STORE`` set to the
service's file, and the same file by a relative path. Both must be answered by the
service: the goal is a p95 with the store named within 1.2x of the one without.
Results go to bench/results/named_store.json."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

from bench.import_edges import RESULTS
from bench.service import PORT, serve, spread, timed
from pegasus.memory import Pegasus
from pegasus.paths import APP_NAME

SAMPLE = Path(__file__).resolve().parents[1] / "pegasus" / "data" / "graph.json"
QUESTION = "What did Joshua say about the Nova AI offer?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pegasus-named-") as tmp:
        folder = Path(tmp)
        store = f"sqlite:///{folder / 'memory.db'}"
        with Pegasus(store) as core:
            core.for_user("default").import_file(SAMPLE)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PEGASUS_", "NEO4J_"))}
        env |= {"XDG_DATA_HOME": str(folder / "data"), "XDG_CONFIG_HOME": str(folder / "c")}
        service = serve(store, env)
        pegasus = str(Path(sys.executable).parent / "pegasus")
        relative = f"sqlite:///{os.path.relpath(folder / 'memory.db')}"
        cases = {"no store named": env, "PEGASUS_STORE": env | {"PEGASUS_STORE": store},
                 "PEGASUS_STORE, relative": env | {"PEGASUS_STORE": relative}}  # fmt: skip
        times: dict[str, list[float]] = {case: [] for case in cases}
        try:
            for _ in range(args.runs):
                for case, case_env in cases.items():
                    times[case].append(timed([pegasus, "recall", QUESTION], case_env))
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(60)
        assert not (folder / "data" / APP_NAME / "service.json").exists()
    found = {case: spread(values) for case, values in times.items()}
    base = found["no store named"]["p95_ms"]
    for case, shown in found.items():
        shown["p95_vs_no_store"] = round(shown["p95_ms"] / base, 2)
        print(f"{case:26} p50 {shown['p50_ms']:7.1f} ms   p95 {shown['p95_ms']:7.1f} ms   "
              f"x{shown['p95_vs_no_store']}")  # fmt: skip
    (RESULTS / "named_store.json").write_text(json.dumps({"runs": args.runs, "port": PORT,
                                                          **found}, indent=1) + "\n")  # fmt: skip


if __name__ == "__main__":
    main()

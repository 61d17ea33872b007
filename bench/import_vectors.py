"""How long ``pegasus import`` of the generated memory takes on SQLite, embedding
keys included: a file without vectors (every name, relation and claim embedded) and
an export that carries them (``pegasus export --vectors``: nothing embedded).

    python -m bench.import_vectors --edges 100000 [--source sqlite:///memory.db]

Each import is the real command in a fresh process, timed from start to exit.
``--source`` names a memory that already holds the generated graph with its keys
(the import without vectors is then not run). Results go to
bench/results/import_vectors.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generator import generate
from bench.import_edges import RESULTS
from pegasus.interchange import dump_graph
from pegasus.memory import Pegasus

USER = "default"


def imported(store_url: str, file: Path) -> float:
    """Seconds ``pegasus import`` took, from start to exit."""
    command = [str(Path(sys.executable).parent / "pegasus"), "--store", store_url,
               "--user", USER, "import", str(file)]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return round(time.perf_counter() - started, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--source", help="a memory holding the generated graph and its keys")
    parser.add_argument("--out", type=Path, default=RESULTS / "import_vectors.json")
    args = parser.parse_args()
    results: dict[str, object] = {"edges": args.edges}
    with tempfile.TemporaryDirectory() as tmp:
        source = args.source
        if source is None:
            plain = Path(tmp) / "plain.json"
            plain.write_text(dump_graph(generate(args.edges).graph))
            source = f"sqlite:///{tmp}/source.db"
            results["without_vectors_s"] = imported(source, plain)
        carrying = Path(tmp) / "vectors.json"
        with Pegasus(source) as core:
            memory = core.for_user(USER)
            carrying.write_text(memory.export_json(vectors=True))
            keys = memory.stats().keys
        results["file_mb"] = round(carrying.stat().st_size / 1e6, 1)
        target = f"sqlite:///{tmp}/target.db"
        results["with_vectors_s"] = imported(target, carrying)
        with Pegasus(target) as core:
            results["keys"] = core.for_user(USER).stats().keys
        assert results["keys"] == keys, (results["keys"], keys)
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""Recall in one long-lived process without the service: ``pegasus recall -`` reading
one message a line, on the generated memory (SQLite).

    python -m bench.recall_stdin --source sqlite:///memory.db [--edges 100000]

``--source`` is a memory holding bench/generator.py's graph of ``--edges`` with its
keys (bench/import_vectors.py makes one; ``pegasus import`` of its export is quick).
The command is started with ``--local`` and asked bench/recall_latency.py's messages
one at a time; each is timed from the line written to its answer read. The first
answer (the model loading, the keys read) is reported apart. Results go to
bench/results/recall_stdin.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.generator import generate
from bench.import_edges import RESULTS
from bench.recall_latency import messages, percentile


def timed(store_url: str, lines: list[str]) -> list[float]:
    """Milliseconds from each line written to its answer read."""
    command = [str(Path(sys.executable).parent / "pegasus"), "--store", store_url, "--local",
               "recall", "-", "--json"]  # fmt: skip
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    took = []
    try:
        for line in lines:
            started = time.perf_counter()
            process.stdin.write(line + "\n")
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())
            took.append((time.perf_counter() - started) * 1000)
            assert answer["message"] == line
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="a memory of the generated graph")
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--out", type=Path, default=RESULTS / "recall_stdin.json")
    args = parser.parse_args()
    lines = messages(generate(args.edges).graph, args.messages + 1)
    took = timed(args.source, lines)
    rest = took[1:]
    result = {"edges": args.edges, "messages": len(rest), "first_ms": round(took[0], 1),
              "mean_ms": round(statistics.mean(rest), 1),
              "p50_ms": round(statistics.median(rest), 1),
              "p95_ms": round(percentile(rest, 0.95), 1)}  # fmt: skip
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

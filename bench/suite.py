"""Every figure at every size on both stores, in one run.

    python -m bench.suite --sizes 1000 10000 [--stores sqlite neo4j] [--profile]

Each (size, store) is measured in a fresh process, so its peak memory is its own:
the generated memory of bench/generator.py is imported, its keys embedded (Neo4j is
then left --settle seconds to finish its index merges), the owner's keys read into
memory as the service does at start (``warm_s``), then warm recall latency, recall
quality for every preset, the cold start of ``pegasus recall`` in a new process, a
reinforcement batch, the commit of one extraction batch (bench/commit_batch.py) and
a decay pass are measured in that order. Results go to bench/results/suite.json;
bench/report.py turns them into the markdown table and plots.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path

from bench.commit_batch import batch, commit
from bench.generator import generate
from bench.import_edges import RESULTS
from bench.recall_latency import latency
from bench.recall_quality import BUDGET_S, quality
from bench.stores import add_settle_option, add_store_options, bench_store, settle
from pegasus.embed import default_embedder
from pegasus.errors import StoreError
from pegasus.interchange import Graph
from pegasus.memory import Memory
from pegasus.model import Conversation
from pegasus.recall.presets import PRESETS
from pegasus.stores import Changes, Store

NOW = datetime(2026, 9, 1, tzinfo=UTC)
REINFORCE_BATCH = 100  # edges one long conversation's recalls used
COLD_RUNS = 2
WARM_UP_EDGES = 1000
IMPORT_SLICE = 100_000  # nodes or edges a transaction: 300k in one overflow a 2 GiB Neo4j heap
NEO4J_PID = Path(".neo4j/pid")
NEO4J_DATA = Path(".neo4j/home/data")  # the launcher's database files


@contextmanager
def profiled(path: Path | None):
    """cProfile around a block, the top of it by cumulative time written to ``path``."""
    if path is None:
        yield
        return
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(30)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(out.getvalue())


def seconds(start: float) -> float:
    return round(time.perf_counter() - start, 3)


# ``pegasus`` as its console script runs it, reporting its own peak memory at exit
# (the process's VmHWM: ru_maxrss would count the forking parent's pages too).
PEGASUS = """
import atexit, sys
def peak():
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    sys.stderr.write(f"\\npeak_kb={status.split()[0]}\\n")
atexit.register(peak)
from pegasus.cli.app import main
sys.argv[0] = "pegasus"
sys.exit(main())
"""


def cold_start(url: str, user: str, message: str) -> tuple[float, float]:
    """Wall time of ``pegasus recall`` in a new process (imports, model load, store
    connection, the first recall), the faster of two runs so files are in the page
    cache as on a machine that has run it before; and that process's peak MB."""
    command = [sys.executable, "-c", PEGASUS, "--store", url, "--user", user, "recall", message]
    runs, peaks = [], []
    for _ in range(COLD_RUNS):
        start = time.perf_counter()
        done = subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
        runs.append(time.perf_counter() - start)
        peaks.append(int(done.stderr.rsplit("peak_kb=", 1)[1].split()[0]) / 1024)
    return round(min(runs), 2), round(max(peaks), 1)


def import_sliced(store: Store, user: str, graph: Graph) -> None:
    """The generated memory written as an import would write it, IMPORT_SLICE
    records a transaction: nodes, then edges, then the conversations."""
    for records, part in ((graph.nodes, "nodes"), (graph.edges, "edges")):
        for start in range(0, len(records), IMPORT_SLICE):
            store.apply(user, Changes(**{part: records[start : start + IMPORT_SLICE]}))
    store.apply(user, Changes(conversations=graph.conversations, self_id=graph.self_id))


def disk_mb(directory: Path) -> float:
    return round(sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 1e6, 1)


def reinforce(memory: Memory, graph: Graph) -> float:
    """Median milliseconds to close a conversation whose recalls used
    REINFORCE_BATCH edges (three conversations, different edges)."""
    live = [e.id for e in graph.edges if not e.superseded_by]
    runs = []
    for i in range(3):
        used = live[i * REINFORCE_BATCH : (i + 1) * REINFORCE_BATCH]
        memory.store.apply(
            memory.user, Changes(conversations=[Conversation(id=f"reinforce-{i}", used_edges=used)])
        )
        start = time.perf_counter()
        memory.close_conversation(f"reinforce-{i}", NOW)
        runs.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(runs), 1)


def server_peak_mb() -> float | None:
    """Peak resident memory of the Neo4j this machine's launcher started, if any."""
    try:
        status = Path(f"/proc/{NEO4J_PID.read_text().strip()}/status").read_text()
    except OSError:
        return None
    line = next(line for line in status.splitlines() if line.startswith("VmHWM"))
    return round(int(line.split()[1]) / 1024, 1)


def measure(kind: str, edges: int, args: argparse.Namespace, cold: bool = True) -> dict:
    """All figures for one store at one size (options as ``main`` parses them);
    runs in its own process."""
    out: dict[str, object] = {"store": kind, "edges": edges}
    prof = RESULTS / "profile" if args.profile else None
    data = generate(edges)
    replies, text = batch(data.graph)  # marks some stored claims one_to_one
    with bench_store(kind, args.neo4j) as (store, user, url):
        start = time.perf_counter()
        import_sliced(store, user, data.graph)
        out["import_s"] = seconds(start)
        memory = Memory.open(store, user=user, embedder=default_embedder())
        memory.embedder.embed("load the model before timing")
        start = time.perf_counter()
        memory.sync_keys()
        out["keys"] = store.stats(user).keys
        out["keys_s"] = seconds(start)
        settle(kind, args.settle)
        start = time.perf_counter()
        store.warm(user)  # as the service does at start
        out["warm_s"] = seconds(start)

        with profiled(prof and prof / f"recall-{kind}-{edges}.txt"):
            out["latency"] = latency(memory, data.graph, args.queries)
        out["quality"] = quality(memory, data, NOW, args.budget, args.presets)
        if cold:
            out["cold_start_s"], out["recall_process_mb"] = cold_start(
                url, user, data.probes[0].message
            )

        out["reinforce_ms"] = reinforce(memory, data.graph)

        with profiled(prof and prof / f"commit-{kind}-{edges}.txt"):
            out["commit"] = commit(memory, replies, text)

        start = time.perf_counter()
        report = memory.decay(NOW + timedelta(days=30))
        elapsed = time.perf_counter() - start
        out["decay_s"] = round(elapsed, 3)
        out["decay_edges_per_s"] = round(store.stats(user).edges / elapsed)
        out["decay_dormant"], out["decay_expired"] = report.dormant, report.expired
        if kind == "sqlite":
            out["disk_mb"] = disk_mb(Path(url.removeprefix("sqlite:///")).parent)
        elif NEO4J_DATA.is_dir():  # the whole database, this owner nearly all of it
            out["disk_mb"] = disk_mb(NEO4J_DATA)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if kind == "neo4j":
        out["server_peak_mb"] = server_peak_mb()
    return out


def run_one(kind: str, edges: int, args: argparse.Namespace, cold: bool = True) -> dict:
    """One measurement in a fresh process; a store that cannot be reached is a row
    that says so, not a crash."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        job = pool.submit(measure, kind, edges, args, cold)
        try:
            return job.result()
        except StoreError as exc:
            return {"store": kind, "edges": edges, "error": str(exc)}
        except Exception as exc:  # out of memory at 1M, a killed child: the row says so
            return {"store": kind, "edges": edges, "error": f"{type(exc).__name__}: {exc}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="cProfile recall and commit")
    parser.add_argument(
        "--budget",
        type=float,
        default=BUDGET_S,
        help="seconds of recall quality per preset and size",
    )
    parser.add_argument("--presets", nargs="+", choices=list(PRESETS), default=list(PRESETS),
                        help="recall settings whose quality is measured")  # fmt: skip
    add_settle_option(parser)
    parser.add_argument("--out", type=Path, default=RESULTS / "suite.json")
    add_store_options(parser)
    args = parser.parse_args()
    run = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}",
        "rows": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if "neo4j" in args.stores:
        # A fresh server compiles its queries and warms its JIT over the first few
        # hundred: a throwaway pass keeps that out of the first size's figures.
        print("warming the Neo4j server up", flush=True)
        run_one("neo4j", WARM_UP_EDGES, args, cold=False)
    for edges in args.sizes:
        for kind in args.stores:
            run["rows"].append(run_one(kind, edges, args))
            print(json.dumps(run["rows"][-1]), flush=True)
            args.out.write_text(json.dumps(run, indent=1) + "\n")  # a long run keeps its rows


if __name__ == "__main__":
    main()

"""The memory service as assistants meet it.

    python -m bench.service --sizes 1000 10000 100000 [--stores sqlite neo4j]

For each (store, size): bench/generator.py's memory is imported and its keys
embedded (Neo4j is then left --settle seconds to finish its index merges),
``pegasus serve`` is started on it, and then measured from outside:
the wall time of the hook command, of the prompt's ``curl`` command hook and of
``pegasus recall``, each a fresh process asking the running service, and of Claude
Code's HTTP hook (the prompt's JSON posted to the service on a new connection)
(p50/p95); recalls per second with 1, 4
and 16 concurrent clients over HTTP; the service's resident memory. Once per run:
``pegasus --help`` and the first write of a new user's memory (the sample
conversation, the model's replies instant from the scripted server, so the time is
Pegasus's own), and the machine's pace at the start and at the end (bench/pace.py).
Results go to bench/results/service.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from bench.generator import generate
from bench.import_edges import RESULTS
from bench.pace import pace
from bench.recall_latency import messages, percentile
from bench.stores import add_settle_option, add_store_options, bench_store, settle
from pegasus.embed import default_embedder
from pegasus.integrations.hooks import PROMPT_PATH, prompt_command
from pegasus.llm.scripted import ScriptedServer, by_round, recorded_rounds
from pegasus.memory import Memory
from pegasus.stores import Changes

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = json.loads((ROOT / "pegasus" / "data" / "conversation.json").read_text())
RECORDING = json.loads((ROOT / "pegasus" / "data" / "seed_extraction.json").read_text())
FRESH_RUNS = 40
CLIENT_SECONDS = 10.0
POOL = 20_000  # messages for the throughput runs, none asked twice
PORT = 8791


def timed(command: list[str], env: dict[str, str], stdin: str = "") -> float:
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    elapsed = (time.perf_counter() - start) * 1000
    if stdin:  # a hook: a failure is one line on stderr, the answer JSON or nothing
        assert not done.stderr, done.stderr
        json.loads(done.stdout or "{}")
    return elapsed


def hook_payload(prompt: str) -> dict[str, str]:
    return {"hook_event_name": "UserPromptSubmit", "session_id": "bench", "prompt": prompt}


def spread(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 0.95), 1)}  # fmt: skip


def throughput(url: str, user: str, texts: Iterator[str], clients: int) -> float:
    """Recalls a second by ``clients`` threads, each message taken once from ``texts``."""
    counts = [0] * clients
    deadline = time.monotonic() + CLIENT_SECONDS

    address = urlsplit(url)

    failed: list[BaseException] = []

    def client(index: int) -> None:
        # The standard library's client: httpx took 0.8-1.0 ms of CPU a request,
        # this 0.2, and the clients share the service's two cores.
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
        try:
            while time.monotonic() < deadline:
                body = json.dumps({"user": user, "message": next(texts)})
                connection.request("POST", "/recall", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                answer = response.read()
                if response.status != 200:
                    raise RuntimeError(f"recall answered {response.status}: {answer[:200]!r}")
                counts[index] += 1
        except Exception as exc:  # a client that stopped would only lower the count
            failed.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise failed[0]
    return round(sum(counts) / CLIENT_SECONDS, 1)


def http_hook(http: httpx.Client, user: str, text: str) -> float:
    """Claude Code's HTTP hook for a prompt: its JSON posted on a new connection."""
    start = time.perf_counter()
    http.post(PROMPT_PATH, params={"user": user}, json=hook_payload(text)).raise_for_status()
    return (time.perf_counter() - start) * 1000


def _read(path: Path) -> str:
    try:  # a thread or a process may end while we look
        return path.read_text()
    except OSError:
        return ""


def children(pid: int, command: str = "") -> list[int]:
    """The processes ``pid`` started whose command line holds ``command``. Each is
    listed under the thread that started it."""
    threads = Path(f"/proc/{pid}/task").iterdir()
    found = [int(child) for thread in threads for child in _read(thread / "children").split()]
    return [child for child in found if command in _read(Path(f"/proc/{child}/cmdline"))]


def resident_mb(pid: int) -> dict[str, float]:
    """The service's memory, with its child processes' (if any). Each process's RSS
    counts the pages it shares with the others, and the peak is the sum of each one's
    own peak: upper bounds."""
    kb = {"VmRSS": 0, "VmHWM": 0}
    for each in [pid, *children(pid)]:
        for line in _read(Path(f"/proc/{each}/status")).splitlines():
            name, _, value = line.partition(":")
            if name in kb:
                kb[name] += int(value.split()[0])
    return {"rss_mb": round(kb["VmRSS"] / 1024, 1), "peak_mb": round(kb["VmHWM"] / 1024, 1)}


def serve(url: str, env: dict[str, str]) -> subprocess.Popen:
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "pegasus"), "--store", url, "serve", "--port", str(PORT),
         "--no-decay"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{PORT}/health").status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the service did not start")


def measure(kind: str, edges: int, args: argparse.Namespace, env: dict[str, str],
            first_write: bool) -> dict:  # fmt: skip
    data = generate(edges)
    out: dict[str, object] = {"store": kind, "edges": edges}
    with bench_store(kind, args.neo4j) as (store, user, url):
        store.apply(user, Changes.of_graph(data.graph))
        Memory.open(store, user=user, embedder=default_embedder()).sync_keys()
        settle(kind, args.settle)
        # Its owner is warmed at start.
        process = serve(url, env | {"PEGASUS_USER": user})
        service = f"http://127.0.0.1:{PORT}"
        try:
            # Each measurement its own messages: the service remembers the texts it
            # embedded, and a message asked again would skip the model.
            prompts, curled, posted, typed = (messages(data.graph, FRESH_RUNS, seed=s)
                                              for s in (3, 5, 4, 6))  # fmt: skip
            hook = [sys.executable, "-m", "pegasus.integrations.hooks", "--user", user]
            asked = {text: json.dumps(hook_payload(text)) for text in prompts + curled}
            out["hook"] = spread([timed(hook, env, asked[text]) for text in prompts])
            curl = prompt_command(service, user)
            if curl is not None:  # as the assistant runs it: through the shell
                out["curl_hook"] = spread([timed(["sh", "-c", curl], env, asked[text])
                                           for text in curled])  # fmt: skip
            # A new connection for each hook, as an assistant would not keep one open.
            fresh = httpx.Limits(max_keepalive_connections=0)
            with httpx.Client(base_url=service, timeout=60, limits=fresh) as http:
                out["http_hook"] = spread([http_hook(http, user, text) for text in posted])
            cli = [str(Path(sys.executable).parent / "pegasus"), "--user", user, "recall"]
            out["cli_recall"] = spread([timed([*cli, text], env) for text in typed[:20]])
            pool = iter(messages(data.graph, POOL, seed=9))
            out["recalls_per_s"] = {n: throughput(service, user, pool, n) for n in (1, 4, 16)}
            out["service_memory"] = resident_mb(process.pid)
            if first_write:
                out["first_write_s"] = first_ingest(service)
        finally:
            process.terminate()
            process.wait(timeout=60)
    return out


def first_ingest(service: str) -> float:
    """Seconds from handing the sample conversation of a new user to the service until
    its job is done (the scripted model answers at once)."""
    start = time.perf_counter()
    job = httpx.post(f"{service}/ingest", json={"user": "first-write", "transcript": SAMPLE,
                                                 "conversation_id": "first"}).json()  # fmt: skip
    status = f"{service}/jobs/{job['id']}?user=first-write"
    while httpx.get(status).json()["state"] not in ("done", "failed"):
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    assert httpx.get(status).json()["state"] == "done"
    return round(seconds, 2)


def help_seconds(env: dict[str, str]) -> float:
    command = [str(Path(sys.executable).parent / "pegasus"), "--help"]
    return round(min(timed(command, env) for _ in range(5)) / 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    add_settle_option(parser)
    parser.add_argument("--out", type=Path, default=RESULTS / "service.json")
    add_store_options(parser)
    args = parser.parse_args()
    model = ScriptedServer(by_round(recorded_rounds(RECORDING))).start()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PEGASUS_")}
        env |= {"XDG_DATA_HOME": home, "PEGASUS_LLM_BASE_URL": model.base_url,
                "PEGASUS_LLM_MODEL": "scripted", "PEGASUS_LLM_API_KEY": "none"}  # fmt: skip
        result = {"help_s": help_seconds(env), "pace_start": pace(), "rows": rows}
        for edges in args.sizes:
            for kind in args.stores:
                first = edges == args.sizes[0] and kind == args.stores[0]
                rows.append(measure(kind, edges, args, env, first))
                print(json.dumps(rows[-1]), flush=True)
                args.out.write_text(json.dumps(result, indent=2) + "\n")
        result["pace_end"] = pace()
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    model.stop()


if __name__ == "__main__":
    main()

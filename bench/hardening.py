"""The memory service's door, and the service under a held lock and a store outage,
measured from outside against real ``pegasus serve`` processes.

    python -m bench.hardening [--out bench/results/hardening.json]

1. Attacks on a service holding the sample memory for "alice": foreign Hosts (DNS
   rebinding), missing or wrong tokens, the OpenAPI pages, ``serve`` and ``mcp``
   beyond this machine without a long enough token, MCP over HTTP, a lone
   surrogate, a 10 MB recall (its time and the service's memory growth), another
   owner's job, odd SQLite URLs, a chat id that climbs out of its folder. An attack
   succeeded when the service did what the attacker wanted: the goal is none.
2. Recalls with and without a conversation id while this process holds the SQLite
   file's write lock: p95 with an id within 1.5x of a plain recall.
3. A Neo4j (NEO4J_URI, else bolt://127.0.0.1:7687) cut off behind a relay: every
   request answered within 2 s; mended, recalls answer again within 5 s without a
   restart. Skipped without a Neo4j.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from bench.faults import Relay, free_port, neo4j_target
from bench.recall_latency import percentile
from bench.service import resident_mb
from pegasus.chat import ChatSession
from pegasus.memory import Pegasus
from pegasus.stores import Changes

ROOT = Path(__file__).resolve().parents[1]
GRAPH = ROOT / "pegasus" / "data" / "graph.json"
PEGASUS = [sys.executable, "-c", "from pegasus.cli.app import main; main()"]
TOKEN = "hardening-" + uuid.uuid4().hex
MESSAGE = "My boss Joshua wants to talk about the Nova AI offer"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "0"}}}  # fmt: skip
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
FOREIGN = {"Host": "evil.example"}
BEES = [{"role": "user", "content": "I keep bees."}]


def environment(folder: Path, **more: str) -> dict[str, str]:
    """No Pegasus or model settings, the data and config folders in ``folder``."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PEGASUS_", "OPENAI_"))}
    return keep | {"XDG_DATA_HOME": str(folder / "data"),
                   "XDG_CONFIG_HOME": str(folder / "config")} | more  # fmt: skip


def start(store: str, command: list[str], folder: Path, **env: str) -> tuple[subprocess.Popen, str]:
    """``pegasus --store store <command> --port P``, once it answers at all."""
    port = free_port()
    process = subprocess.Popen([*PEGASUS, "--store", store, *command, "--port", str(port)],
                               env=environment(folder, **env), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 180
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx.get(f"{url}/health", timeout=30)
            return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{' '.join(command)} did not start ({process.poll()})")


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def ask(method: str, url: str, **kwargs) -> tuple[int | None, str, float]:
    """Status (None: no answer), the body's start and the seconds it took."""
    began = time.perf_counter()
    try:
        response = httpx.request(method, url, timeout=kwargs.pop("timeout", 30), **kwargs)
        return response.status_code, response.text[:300], time.perf_counter() - began
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}", time.perf_counter() - began


def exits(command: list[str], folder: Path, cwd: Path | None = None, **env: str) -> int | None:
    """A command's exit status; None when it still ran after 60 s (it served)."""
    try:
        return subprocess.run(command, env=environment(folder, **env), capture_output=True,
                              timeout=60, cwd=cwd).returncode  # fmt: skip
    except subprocess.TimeoutExpired:
        return None


def attacks(tmp: Path, probe: subprocess.Popen, url: str) -> tuple[list[dict], list[dict]]:
    done: list[dict] = []
    checks: list[dict] = []

    def attack(name: str, status: int | None, succeeded: bool, **more) -> None:
        done.append({"attack": name, "status": status, "succeeded": succeeded, **more})

    def at_door(name: str, method: str, where: str, **kwargs) -> None:
        """Succeeded when it got past the door (neither 401 nor 403)."""
        status, body, _ = ask(method, where, **kwargs)
        attack(name, status, status not in (None, 401, 403), body=body)

    port = url.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}"):
        at_door(f"DNS rebinding: GET /export, Host {host}", "GET", f"{url}/export",
                params={"user": "alice"}, headers={"Host": host})  # fmt: skip
    bodies = {"/recall": {"user": "alice", "message": MESSAGE},
              "/forget": {"user": "alice", "node": "Joshua"},
              "/ingest": {"user": "alice", "transcript": BEES}}  # fmt: skip
    for path, body in bodies.items():
        at_door(f"foreign Host: POST {path}", "POST", url + path, json=body, headers=FOREIGN)
    for path in ("/docs", "/openapi.json"):
        at_door(f"foreign Host: GET {path}", "GET", url + path, headers=FOREIGN)
    for origin in ("https://evil.example", "null"):  # a page of another site, at 127.0.0.1
        at_door(f"cross-site page: GET /export, Origin {origin}", "GET", f"{url}/export",
                params={"user": "alice"}, headers={"Origin": origin})  # fmt: skip

    guarded, door = start(f"sqlite:///{tmp / 'token.db'}", ["serve", "--no-decay"],
                          tmp / "token", PEGASUS_TOKEN=TOKEN)  # fmt: skip
    try:
        at_door("token: /health without it", "GET", f"{door}/health")
        at_door("token: /health with a wrong one", "GET", f"{door}/health",
                headers={"Authorization": "Bearer " + "x" * len(TOKEN)})  # fmt: skip
        for path in ("/docs", "/redoc", "/openapi.json"):
            at_door(f"token: {path} without it", "GET", door + path)
        status, _, _ = ask("GET", f"{door}/health", headers={"Authorization": f"bearer {TOKEN}"})
        checks.append({"check": "token taken as 'bearer <token>'", "ok": status == 200,
                       "status": status})  # fmt: skip
    finally:
        stop(guarded)

    for command in (["serve", "--no-decay"], ["mcp", "--transport", "http"]):
        for token, env in (("no token", {}), ("a 1-char token", {"PEGASUS_TOKEN": "x"})):
            line = [*PEGASUS, "--store", f"sqlite:///{tmp / 'exposed.db'}", *command,
                    "--host", "0.0.0.0", "--port", str(free_port())]  # fmt: skip
            code = exits(line, tmp / "exposed", **env)
            attack(f"{command[0]} --host 0.0.0.0 with {token}", code, code in (0, None))

    mcp, mcp_url = start(f"sqlite:///{tmp / 'mcp.db'}", ["mcp", "--transport", "http"],
                         tmp / "mcp", PEGASUS_TOKEN=TOKEN)  # fmt: skip
    try:
        auth = MCP_HEADERS | {"Authorization": f"Bearer {TOKEN}"}
        at_door("MCP initialize without the token", "POST", f"{mcp_url}/mcp", json=INITIALIZE,
                headers=MCP_HEADERS)  # fmt: skip
        at_door("MCP initialize with a foreign Host", "POST", f"{mcp_url}/mcp", json=INITIALIZE,
                headers=auth | FOREIGN)  # fmt: skip
        status, body, _ = ask("POST", f"{mcp_url}/mcp", json=INITIALIZE, headers=auth)
        checks.append({"check": "MCP initialize with the token", "ok": status == 200,
                       "status": status, "body": body})  # fmt: skip
    finally:
        stop(mcp)

    as_json = {"Content-Type": "application/json"}
    raw = b'{"user":"alice","message":"hi \\ud800"}'
    status, body, _ = ask("POST", f"{url}/recall", content=raw, headers=as_json)
    attack("lone surrogate in /recall (400 wanted)", status, status != 400, body=body)
    before = resident_mb(probe.pid)["rss_mb"]
    huge = json.dumps({"user": "alice", "message": "a" * 10_000_000})
    status, body, seconds = ask("POST", f"{url}/recall", content=huge, headers=as_json)
    grew = round(resident_mb(probe.pid)["rss_mb"] - before, 1)
    attack("10 MB recall message (413 wanted)", status, status != 413, body=body,
           seconds=round(seconds, 3), rss_growth_mb=grew)  # fmt: skip

    job = httpx.post(f"{url}/ingest", json={"user": "alice", "transcript": BEES}).json()
    for method, path in (("GET", ""), ("POST", "/retry"), ("DELETE", "")):
        status, body, _ = ask(method, f"{url}/jobs/{job['id']}{path}", params={"user": "bob"})
        attack(f"{method} /jobs/<alice's>{path}?user=bob", status,
               status is not None and status < 400, body=body)  # fmt: skip

    for method, path in (("GET", "/nope"), ("DELETE", "/recall")):
        status, body, _ = ask(method, url + path)
        ok = body.startswith('{"error":')
        checks.append({"check": f"{method} {path}: JSON with 'error'", "ok": ok,
                       "status": status, "body": body})  # fmt: skip

    for bad in ("sqlite:", "sqlite:/", "sqlite://localhost/x.db"):
        where = Path(tempfile.mkdtemp(dir=tmp))
        code = exits([*PEGASUS, "--store", bad, "stats"], tmp / "urls", cwd=where)
        left = sorted(p.name for p in where.iterdir())
        attack(f"--store {bad} stats", code, code == 0 or bool(left), files_left=left)

    chats = tmp / "chats"
    path = ChatSession(None, None, conversation_id="../../escape").save(chats)  # type: ignore[arg-type]
    attack("chat --conversation-id ../../escape", None,
           not path.resolve().is_relative_to(chats.resolve()), path=str(path))  # fmt: skip
    return done, checks


def recalls(url: str, conversation: str | None, times: int = 40) -> dict:
    """``times`` recalls for alice in a row, each on a new connection as a hook makes
    them (on a kept-alive one, each waited 40 ms more here)."""
    seconds, failed = [], 0
    fresh = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(base_url=url, timeout=30, limits=fresh) as http:
        for _ in range(times):
            began = time.perf_counter()
            body = {"user": "alice", "message": MESSAGE, "conversation_id": conversation}
            failed += http.post("/recall", json=body).status_code != 200
            seconds.append(time.perf_counter() - began)
    return {"p50_ms": round(statistics.median(seconds) * 1000, 1),
            "p95_ms": round(percentile(seconds, 0.95) * 1000, 1), "not_200": failed}  # fmt: skip


def write_lock(url: str, db: Path) -> dict:
    def both() -> dict:
        return {"with_id": recalls(url, uuid.uuid4().hex), "plain": recalls(url, None)}

    recalls(url, None, 10)  # warm: the first recalls after the attacks were slower
    out = {"free": both()}
    holder = sqlite3.connect(db, isolation_level=None, timeout=30)
    holder.execute("BEGIN IMMEDIATE")
    try:
        out["held"] = both()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    out["ratio_p95"] = round(out["held"]["with_id"]["p95_ms"] / out["held"]["plain"]["p95_ms"], 2)
    return out


def neo4j_answers(uri: str, wait: float) -> bool:
    import neo4j

    user, password = os.environ.get("NEO4J_USER"), os.environ.get("NEO4J_PASSWORD")
    deadline = time.monotonic() + wait
    while True:
        try:
            with neo4j.GraphDatabase.driver(uri, auth=(user, password) if user else None) as d:
                d.verify_connectivity()
            return True
        except Exception:
            if time.monotonic() > deadline:
                return False
            time.sleep(5)


def outage(tmp: Path) -> dict:
    host, port = neo4j_target()
    direct = f"bolt://{host}:{port}"
    if not neo4j_answers(direct, 180):
        return {"skipped": f"no Neo4j at {direct}"}
    user = f"hardening-{uuid.uuid4().hex[:8]}"
    relay = Relay((host, port))
    relay.mend()
    try:
        with Pegasus(direct) as core:
            core.for_user(user).import_file(GRAPH)
        service, url = start(f"bolt://127.0.0.1:{relay.port}", ["serve", "--no-decay"],
                             tmp / "outage")  # fmt: skip
        try:
            recall = {"user": user, "message": MESSAGE}
            with_id = recall | {"conversation_id": "cut"}
            asks = {"GET /health": ("GET", "/health", {}),
                    "POST /recall": ("POST", "/recall", {"json": recall}),
                    "GET /stats": ("GET", "/stats", {"params": {"user": user}}),
                    "POST /recall with an id": ("POST", "/recall", {"json": with_id})}  # fmt: skip
            up = ask("POST", f"{url}/recall", json=recall)[0]
            relay.cut()
            cut = {}
            for name, (method, path, kwargs) in asks.items():
                tries = [ask(method, url + path, **kwargs) for _ in range(3)]
                cut[name] = {"status": [t[0] for t in tries], "body": tries[-1][1],
                             "seconds": [round(t[2], 3) for t in tries]}  # fmt: skip
            relay.mend()
            began, back = time.perf_counter(), None
            while back is None and time.perf_counter() - began < 60:
                if ask("POST", f"{url}/recall", json=recall, timeout=10)[0] == 200:
                    back = round(time.perf_counter() - began, 2)
                time.sleep(0.1)
        finally:
            stop(service)
    finally:
        relay.cut()
        with Pegasus(direct) as core:  # as tests/conftest.py's wipe
            store = core.for_user(user).store
            graph, keys = store.export(user), store.list_keys(user)
            nodes, talks = [n.id for n in graph.nodes], [c.id for c in graph.conversations]
            store.apply(user, Changes(delete_nodes=nodes, delete_keys=[k.id for k in keys],
                                      delete_conversations=talks))  # fmt: skip
    return {"store": direct, "recall_before_cut": up, "cut": cut, "recovered_s": back}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "hardening.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pegasus-hardening-") as name:
        tmp = Path(name)
        os.environ.update(environment(tmp / "self"))  # this process's own files too
        db = tmp / "probe.db"
        with Pegasus(f"sqlite:///{db}") as core:
            core.for_user("alice").import_file(GRAPH)
        probe, url = start(f"sqlite:///{db}", ["serve", "--no-decay"], tmp / "probe")
        try:
            done, checks = attacks(tmp, probe, url)
            lock = write_lock(url, db)
        finally:
            stop(probe)
        down = outage(tmp)
    cpu = platform.processor() or next((line.split(":")[1].strip() for line in
                                        Path("/proc/cpuinfo").read_text().splitlines()
                                        if line.startswith("model name")), "")  # fmt: skip
    result = {"machine": {"processor": cpu, "cpus": os.cpu_count()},
              "attacks": {"list": done, "succeeded": sum(a["succeeded"] for a in done),
                          "checks": checks},
              "write_lock": lock, "outage": down}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    summary(result)
    print(f"\nwritten to {args.out}")


def summary(result: dict) -> None:
    def goal(text: str, met: bool) -> None:
        print(f"  [{'met' if met else 'MISSED'}] {text}")

    attacks, lock, down = result["attacks"], result["write_lock"], result["outage"]
    print("attacks (status, then whether the attacker got what it wanted):")
    for each in attacks["list"]:
        said = "SUCCEEDED" if each["succeeded"] else "blocked"
        print(f"  {each['status']!s:>4} {said:9}  {each['attack']}")
    for each in attacks["checks"]:
        print(f"  {each['status']!s:>4} {'ok' if each['ok'] else 'NOT OK':9}  {each['check']}")
    huge = next(a for a in attacks["list"] if a["attack"].startswith("10 MB"))
    print("goals:")
    goal(f"attacks that succeeded: {attacks['succeeded']} (goal 0)", attacks["succeeded"] == 0)
    goal("checks all ok", all(c["ok"] for c in attacks["checks"]))
    goal(f"10 MB recall refused in {huge['seconds']} s (goal < 0.5)", huge["seconds"] < 0.5)
    goal(f"the service grew {huge['rss_growth_mb']} MB by it (goal < 50)",
         huge["rss_growth_mb"] < 50)  # fmt: skip
    for state in ("free", "held"):
        for kind, each in lock[state].items():
            print(f"  write lock {state}, recall {kind}: p50 {each['p50_ms']} ms, "
                  f"p95 {each['p95_ms']} ms, {each['not_200']} not 200")  # fmt: skip
    goal(f"lock held: p95 with an id / plain = {lock['ratio_p95']} (goal <= 1.5)",
         lock["ratio_p95"] <= 1.5)  # fmt: skip
    if "skipped" in down:
        print(f"  store outage: skipped: {down['skipped']}")
        return
    for name, each in down["cut"].items():
        goal(f"store cut: {name} answered {each['status']} in {each['seconds']} s (goal < 2)",
             None not in each["status"] and max(each["seconds"]) < 2)  # fmt: skip
    back = down["recovered_s"]
    goal(f"store mended: recall 200 again after {back} s (goal < 5)", back is not None and back < 5)


if __name__ == "__main__":
    main()

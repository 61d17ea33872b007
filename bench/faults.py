"""The fault matrix: every front end hands a session over under every fault, and no
session is lost without a message.

    python -m bench.faults [--out bench/results/faults.json]

For each fault a world is set up (a data folder, a store, a scripted model, a
memory service as its own process), each front end hands over one session as it
does for real (the hook command with Claude Code's and Codex's transcripts, the
opencode plugin's built module, the MCP tools' backend, ``pegasus ingest``), and
what became of it is read back: learned (in the store), pending (a job that says
why), refused (the front end said so), or lost. Then the fault is put right (the
service started again with a working model and store) and every session the front
end accepted must be learned. ``store down`` needs a Neo4j (``NEO4J_URI``, else
bolt://127.0.0.1:7687), which is cut off behind a relay; the opencode column needs
the plugin built (``npm run build`` in integrations/opencode)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

from pegasus.client import kept_jobs
from pegasus.llm.scripted import ScriptedServer, Step
from pegasus.memory import Pegasus

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "integrations" / "opencode" / "dist" / "memory.js"
FRONT_ENDS = ("claude-code", "codex", "opencode", "mcp", "cli")
FAULTS = ("no model", "model down", "model garbage", "store down", "killed mid-job",
          "second service", "service after client")  # fmt: skip
TURNS = [{"role": "user", "content": "I keep bees on the roof of my flat in Leeds."},
         {"role": "assistant", "content": "How many hives?"},
         {"role": "user", "content": "Two, since last spring."}]  # fmt: skip
FINISH = Step(tool_calls=[("finish", {"summary": "bees", "importance": 0.5, "tags": []})])
PEGASUS = [sys.executable, "-c", "from pegasus.cli.app import main; main()"]
RUN = uuid.uuid4().hex[:8]


@dataclass
class Cell:
    """What became of one front end's session under one fault."""

    front_end: str
    fault: str
    accepted: bool = False  # the front end took the session (to the service or its queue)
    said: str = ""  # what the front end told the user, if anything
    seen: str = ""  # learned, pending, refused or lost, before the fault is put right
    why: str = ""  # a pending job's reason
    learned_after: bool = False  # in the store once the fault is put right

    @property
    def lost(self) -> bool:
        """Accepted and never learned, or turned away without a word."""
        if self.accepted:
            return not self.learned_after
        return not self.said


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Relay:
    """A TCP relay in front of a server that can be cut (every connection dropped, new
    ones refused) and mended, on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target, self.port = target, free_port()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None

    def mend(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        for sock in [self._listener, *self._sockets]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass


@dataclass
class World:
    """One fault's surroundings: a data folder, a store, a model, a service."""

    folder: Path
    store: str  # the URL the service and the command line open
    direct: str  # the store itself, past any relay, to read what was learned
    model: ScriptedServer
    answers: list[Callable[[dict], Step]] = field(default_factory=list)  # the model now
    model_url: str | None = None  # None: no model configured
    port: int = field(default_factory=free_port)
    service: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def jobs(self) -> Path:
        return self.folder / "data" / "pegasus" / "jobs"

    def env(self, model: bool = True) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("PEGASUS_", "OPENAI_", "NEO4J_"))}  # fmt: skip
        keep |= {"XDG_DATA_HOME": str(self.folder / "data"),
                 "XDG_CONFIG_HOME": str(self.folder / "config"),
                 "PEGASUS_LLM_RETRIES": "1", "PEGASUS_NEO4J_RETRY_SECONDS": "2"}  # fmt: skip
        if model and self.model_url:
            keep |= {"PEGASUS_LLM_BASE_URL": self.model_url, "PEGASUS_LLM_MODEL": "scripted",
                     "PEGASUS_LLM_API_KEY": "none"}  # fmt: skip
        return keep

    def start(self, port: int | None = None) -> subprocess.Popen:
        process = subprocess.Popen(
            [*PEGASUS, "--store", self.store, "serve", "--port", str(port or self.port),
             "--no-decay"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env(),
        )  # fmt: skip
        if port is None:
            self.service = process
            answering(self.url, process)
        return process

    def stop(self, how: int = signal.SIGTERM) -> None:
        if self.service is not None and self.service.poll() is None:
            self.service.send_signal(how)
            self.service.communicate(timeout=60)
        self.service = None

    def jobs_now(self) -> list[dict[str, Any]]:
        if self.service is not None:
            with contextlib.suppress(httpx.HTTPError):
                return httpx.get(f"{self.url}/jobs", timeout=10).json()
        return [{"conversation_id": j["conversation_id"], "state": j["state"],
                 "waiting_for": j["why"], "error": None} for j in kept_jobs(self.jobs)]  # fmt: skip

    def settled(self, seconds: float = 120) -> None:
        """Waits until no job is queued or running."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not any(j["state"] in ("queued", "running") for j in self.jobs_now()):
                return
            time.sleep(0.3)


def answering(url: str, process: subprocess.Popen, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the service stopped: {process.communicate()[0][-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=5).status_code in (200, 503):
                return
        time.sleep(0.2)
    raise RuntimeError("the service never answered")


# --- the front ends, handing one session over ----------------------------------------
def _run(args: list[str], world: World, stdin: str = "", model: bool = True):
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=300,
                          env=world.env(model), cwd=ROOT)  # fmt: skip


def _hook(world: World, cell: Cell, event: str, lines: list[dict]) -> None:
    transcript = world.folder / f"{cell.front_end}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    payload = {"hook_event_name": event, "session_id": session(cell),
               "transcript_path": str(transcript)}  # fmt: skip
    done = _run([sys.executable, "-m", "pegasus.integrations.hooks", "--user", owner(cell)],
                world, json.dumps(payload), model=False)  # fmt: skip
    cell.accepted, cell.said = done.returncode == 0, done.stderr.strip()


def claude_code(world: World, cell: Cell) -> None:
    _hook(world, cell, "SessionEnd", [
        {"type": t["role"], "message": {"role": t["role"], "content": t["content"]}}
        for t in TURNS])  # fmt: skip


def codex(world: World, cell: Cell) -> None:
    kinds = {"user": "input_text", "assistant": "output_text"}
    _hook(world, cell, "Stop", [
        {"type": "response_item", "payload": {"type": "message", "role": t["role"],
         "content": [{"type": kinds[t["role"]], "text": t["content"]}]}}
        for t in TURNS])  # fmt: skip


def opencode(world: World, cell: Cell) -> None:
    script = (f"import {{ Memory, settingsFrom }} from {json.dumps(PLUGIN.as_uri())};"
              f"const memory = new Memory(settingsFrom({{user: {json.dumps(owner(cell))}}}));"
              f"console.log(await memory.ingest({json.dumps(session(cell))}, "
              f"{json.dumps(TURNS)}));")  # fmt: skip
    done = _run(["node", "--input-type=module", "-e", script], world, model=False)
    cell.accepted = done.returncode == 0 and done.stdout.strip() in ("sent", "queued")
    cell.said = done.stderr.strip()


def mcp(world: World, cell: Cell) -> None:
    """The MCP tools' backend (``pegasus --store ... mcp``): ``remember`` with a whole
    transcript."""
    script = ("import json, sys; from pegasus.integrations.backend import Backend;"
              f"answer = Backend({owner(cell)!r}, {world.store!r}).remember(json.load(sys.stdin), "
              f"{session(cell)!r}); print(json.dumps(answer))")  # fmt: skip
    done = _run([sys.executable, "-c", script], world, json.dumps(TURNS))
    cell.accepted = done.returncode == 0
    said = done.stderr.strip().splitlines()
    answer = json.loads(done.stdout) if done.returncode == 0 else {}
    cell.said = answer.get("waiting_for") or (said[-1] if said else "")


def cli(world: World, cell: Cell) -> None:
    """``pegasus ingest``, which works in its own process."""
    transcript = world.folder / "cli.json"
    transcript.write_text(json.dumps(TURNS))
    done = _run([*PEGASUS, "--store", world.store, "--user", owner(cell), "ingest",
                 str(transcript), "--conversation-id", session(cell)], world)  # fmt: skip
    cell.accepted = done.returncode == 0
    cell.said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""


HAND_OVER = {"claude-code": claude_code, "codex": codex, "opencode": opencode, "mcp": mcp,
             "cli": cli}  # fmt: skip


def owner(cell: Cell) -> str:
    """The front end's memory owner, this run's own (a shared Neo4j outlives it)."""
    return f"{cell.front_end.replace('-', '')}-{RUN}"


def session(cell: Cell) -> str:
    return f"{cell.fault.replace(' ', '-')}-{cell.front_end}"


# --- the faults --------------------------------------------------------------------
def neo4j_target() -> tuple[str, int]:
    target = urlparse(os.environ.get("NEO4J_URI") or "bolt://127.0.0.1:7687")
    return target.hostname or "127.0.0.1", target.port or 7687


@contextlib.contextmanager
def world_for(fault: str, folder: Path) -> Iterator[tuple[World, Relay | None]]:
    answers: list[Callable[[dict], Step]] = [lambda body: FINISH]
    model = ScriptedServer(lambda body: answers[-1](body)).start()
    relay = None
    store = f"sqlite:///{folder / 'memory.db'}"
    if fault == "store down":
        relay = Relay(neo4j_target())
        relay.mend()
        store = f"bolt://127.0.0.1:{relay.port}"
    direct = f"bolt://{neo4j_target()[0]}:{neo4j_target()[1]}" if relay else store
    world = World(folder, store, direct, model, answers, model.base_url)
    try:
        yield world, relay
    finally:
        world.stop(signal.SIGKILL)
        model.stop()
        if relay is not None:
            relay.cut()
            forget_owners(direct)


def run_fault(fault: str, front_ends: tuple[str, ...] = FRONT_ENDS) -> list[Cell]:
    """One row of the matrix: the fault set up, every front end's hand-over, what
    became of each session, then the fault put right."""
    cells = [Cell(front_end, fault) for front_end in front_ends]
    with tempfile.TemporaryDirectory(prefix="pegasus-faults-") as tmp, \
            world_for(fault, Path(tmp)) as (world, relay):  # fmt: skip
        down_port = free_port()
        if fault == "no model":
            world.model_url = None
        elif fault == "model down":
            world.model_url = f"http://127.0.0.1:{down_port}/v1"
        elif fault == "model garbage":
            world.answers.append(lambda body: Step(raw="<html>502 Bad Gateway</html>"))
        elif fault == "killed mid-job":
            world.answers.append(lambda body: Step(tool_calls=FINISH.tool_calls, sleep=2.0))
        if fault != "service after client":
            world.start()
        if fault == "second service":
            second = world.start(port=free_port())
            said = second.communicate(timeout=120)[0]
            assert second.returncode != 0 and "already runs" in said, said
        if relay is not None:
            relay.cut()
        for cell in cells:
            HAND_OVER[cell.front_end](world, cell)
            if fault == "killed mid-job" and world.service is not None:
                running = any(j["state"] == "running" for j in world.jobs_now())
                if running or cell is cells[-1]:
                    world.stop(signal.SIGKILL)
        if fault in ("no model", "model down", "model garbage", "store down"):
            world.settled()
        observe(world, cells)
        # Put right: a working model and store, the service (again).
        world.stop()
        world.model_url = world.model.base_url
        world.answers.append(lambda body: FINISH)
        if relay is not None:
            relay.mend()
        world.start()
        world.settled(300)
        for job in world.jobs_now():
            if job["state"] in ("waiting", "failed"):
                httpx.post(
                    f"{world.url}/jobs/{job['id']}/retry", params={"user": job["user"]}, timeout=10
                )
        world.settled(300)
        world.stop()
        learned(world, cells)
    return cells


def observe(world: World, cells: list[Cell]) -> None:
    jobs = {job["conversation_id"]: job for job in world.jobs_now()}
    done = stored(world, cells)
    for cell in cells:
        job = jobs.get(session(cell))
        if session(cell) in done:
            cell.seen = "learned"
        elif job is not None:
            cell.seen, cell.why = "pending", job.get("waiting_for") or job.get("error") or ""
            cell.why = cell.why or ("queued for the service" if job["state"] == "queued" else "")
        elif not cell.accepted:
            cell.seen = "refused" if cell.said else "lost"
        else:
            cell.seen = "lost"


def stored(world: World, cells: list[Cell]) -> set[str]:
    """The sessions the store holds whole."""
    found = set()
    with Pegasus(world.direct) as core:
        for cell in cells:
            record = core.store.get_conversation(owner(cell), session(cell))
            if record is not None and record.turns_ingested == len(TURNS):
                found.add(session(cell))
    return found


def learned(world: World, cells: list[Cell]) -> None:
    done = stored(world, cells)
    for cell in cells:
        cell.learned_after = session(cell) in done


def forget_owners(url: str) -> None:
    """Removes what this run's owners left in a shared store."""
    with Pegasus(url) as core:
        for front_end in FRONT_ENDS:
            memory = core.for_user(owner(Cell(front_end, "")))
            for conversation in memory.store.export(memory.user).conversations:
                memory.forget(memory.plan_forget(conversation=conversation.id))


def table(cells: list[Cell]) -> str:
    lines = ["| fault | " + " | ".join(FRONT_ENDS) + " |",
             "|---|" + "---|" * len(FRONT_ENDS)]  # fmt: skip
    for fault in dict.fromkeys(cell.fault for cell in cells):
        row = {cell.front_end: cell for cell in cells if cell.fault == fault}
        shown = []
        for front_end in FRONT_ENDS:
            cell = row.get(front_end)
            if cell is None:
                shown.append("not run")
                continue
            after = ", then learned" if cell.learned_after else ", never learned"
            then = {"pending": after, "refused": " with a message"}.get(cell.seen, "")
            shown.append(("LOST" if cell.lost else cell.seen) + then)
        lines.append(f"| {fault} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", nargs="*", default=list(FAULTS))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "faults.json")
    args = parser.parse_args()
    front_ends = FRONT_ENDS if PLUGIN.exists() and shutil.which("node") else tuple(
        f for f in FRONT_ENDS if f != "opencode")  # fmt: skip
    cells: list[Cell] = []
    for fault in args.faults:
        started = time.monotonic()
        cells += run_fault(fault, front_ends)
        print(f"{fault}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(table(cells))
    lost = sum(cell.lost for cell in cells)
    print(f"\n{len(cells)} sessions, {sum(c.accepted for c in cells)} accepted, "
          f"{sum(c.learned_after for c in cells)} learned in the end, {lost} lost")  # fmt: skip
    args.out.write_text(json.dumps([asdict(cell) | {"lost": cell.lost} for cell in cells],
                                   indent=1) + "\n")  # fmt: skip
    sys.exit(1 if lost else 0)


if __name__ == "__main__":
    main()

"""Claude Code and Codex themselves (tests/clients, pinned), run headless with the hooks
``pegasus hooks install`` writes, against a model server scripted at the HTTP
boundary (tests/integrations/scripted_clients.py), into a running memory service: a
first session tells a fact and ends; the second session's request to the model
carries it in the recall block; a compacted session's summary is never taken for
something the user said. ``make test`` installs both programs (a missing one fails
there, with PEGASUS_REQUIRE_CLIENTS=1)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pegasus.client import call
from pegasus.integrations.codex_trust import codex_config, codex_hooks
from pegasus.integrations.hooks import settings_path, transcript_turns
from pegasus.llm.scripted import ScriptedServer, sequence
from pegasus.memory import Pegasus
from tests.cli_helpers import run_cli
from tests.integrations.conftest import running_service, wait_for
from tests.integrations.scripted_clients import ClientModel
from tests.write.conftest import FINISH, calls, entity, llm_for, relation

CLIENTS = Path(__file__).resolve().parents[1] / "clients" / "node_modules" / ".bin"
TOLD = "My sister Ana moved to Porto in May."
ASKED = "Should I visit my sister Ana this winter?"
EXTRACTION = [
    calls(entity("Ana"), entity("Porto", "PLACE"), relation("Ana", "LIVES_IN", "Porto", TOLD)),
    calls(FINISH),
]
# The model's summary when a client compacts its session: nobody said it.
SUMMARY = "The user keeps three beehives named Zephyrine in Braga."
RUN_TIMEOUT = 120  # seconds one headless run may take, at worst
OWNER = "ana"


def client(name: str) -> Path:
    binary = CLIENTS / name
    if binary.exists():
        return binary
    message = f"{name} is missing from tests/clients (make test runs npm install there)"
    if os.environ.get("PEGASUS_REQUIRE_CLIENTS") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def answer(body: dict[str, Any]) -> str:
    """The model's answer: a summary when asked to compact, else a short reply."""
    items = body.get("messages") or body.get("input") or [{}]
    last = json.dumps(items[-1])
    if "CONTEXT CHECKPOINT COMPACTION" in last or "<summary>" in last:
        return f"<analysis>A short chat.</analysis>\n<summary>{SUMMARY}</summary>"
    return "Noted."


def texts(item: dict[str, Any]) -> str:
    """The text of one message the client sent to the model."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own: the programs' settings, sessions and trust."""
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    return home


def environment(home: Path, **extra: str) -> dict[str, str]:
    """The programs' environment: nothing of this machine's accounts or settings."""
    mine = ("PEGASUS_", "ANTHROPIC_", "OPENAI_", "CLAUDE", "CODEX_", "NEO4J_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(mine)}
    kinds = {"DATA": "data", "CONFIG": "config", "CACHE": "cache", "STATE": "state"}
    env |= {f"XDG_{kind}_HOME": str(home / folder) for kind, folder in kinds.items()}
    env |= {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"), "NO_COLOR": "1"}  # fmt: skip
    return env | extra


def run(command: list[str], home: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=home / "project", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@contextmanager
def memory_service(tmp_path: Path, serve) -> Iterator[tuple[Pegasus, str, ScriptedServer]]:
    """The service (its URL) over a fresh store, extracting with a scripted model."""
    extraction = serve(sequence(EXTRACTION))
    core = Pegasus(f"sqlite:///{tmp_path / 'memory.db'}")
    with core, running_service(core, llm_for(extraction)) as url:
        yield core, url, extraction


def settled(url: str, sent: int) -> bool:
    """The service has taken ``sent`` sessions (one per hook that sent one) and
    ingested every one."""
    jobs = call(url, "/jobs", query={"user": OWNER}) or []
    assert len(jobs) <= sent and all(job["state"] != "failed" for job in jobs), jobs
    return len(jobs) == sent and all(job["state"] == "done" for job in jobs)


def install(capsys, target: str, url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``pegasus --user ana hooks install TARGET`` with the service found at ``url``."""
    monkeypatch.setenv("PEGASUS_URL", url)
    done = run_cli(capsys, "--user", OWNER, "hooks", "install", target)
    assert done.code == 0, done.out + done.err
    assert f"wrote to {settings_path(target)}:" in done.out
    return done.out


def test_claude_code_remembers_across_sessions(tmp_path, home, monkeypatch, capsys, serve):
    claude = str(client("claude"))
    with ClientModel(answer) as model, memory_service(tmp_path, serve) as (core, url, extraction):
        out = install(capsys, "claude-code", url, monkeypatch)
        assert f"UserPromptSubmit: Claude Code posts it to {url}/hooks/prompt?user=ana" in out
        env = environment(home, ANTHROPIC_BASE_URL=model.base_url, PEGASUS_URL=url,
                          ANTHROPIC_API_KEY="sk-ant-scripted",
                          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")  # fmt: skip
        session = str(uuid.uuid4())
        run([claude, "-p", TOLD, "--session-id", session], home, env)
        memory = core.for_user(OWNER)
        assert wait_for(lambda: memory.find("Ana"), 60), "the first session never landed"
        first = len(model.bodies("/v1/messages"))

        run([claude, "-p", ASKED], home, env)
        # The hook's context reaches the model as a system entry of the conversation.
        added = [texts(m) for body in model.bodies("/v1/messages")[first:]
                 for m in body["messages"] if m["role"] == "system"]  # fmt: skip
        assert any("[MEMORY]" in text and "Porto" in text for text in added), added

        # /compact on the first session: its summary comes back as a user's line.
        run([claude, "-p", "/compact", "--resume", session], home, env)
        (transcript,) = (home / ".claude" / "projects").glob(f"*/{session}.jsonl")
        lines = [json.loads(line) for line in transcript.read_text().splitlines()]
        (summary,) = [line for line in lines if line.get("isCompactSummary")]
        assert summary["type"] == "user" and SUMMARY in json.dumps(summary)
        # Sent by SessionEnd twice, then by PreCompact and SessionEnd.
        assert wait_for(lambda: settled(url, 4), 60)
        assert SUMMARY not in json.dumps(transcript_turns(transcript))
        assert "Zephyrine" not in json.dumps(extraction.requests)
        assert core.store.get_conversation(OWNER, session).turns_ingested == 2


CODEX_CONFIG = """# the user's own settings, kept by pegasus hooks install
model = "scripted"
model_provider = "scripted"
model_auto_compact_token_limit = 1000
check_for_update_on_startup = false

[model_providers.scripted]
name = "Scripted"
base_url = "{url}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
"""


def test_codex_remembers_across_sessions(tmp_path, home, monkeypatch, capsys, serve):
    codex = str(client("codex"))
    with ClientModel(answer) as model, memory_service(tmp_path, serve) as (core, url, extraction):
        config = codex_config()
        config.parent.mkdir(parents=True)
        config.write_text(CODEX_CONFIG.format(url=model.base_url))
        out = install(capsys, "codex", url, monkeypatch)
        assert f"trusted them in {config}" in out
        assert config.read_text().startswith(CODEX_CONFIG.format(url=model.base_url))
        env = environment(home, PEGASUS_URL=url)
        # No --dangerously-bypass-hook-trust: the hooks run because install trusted them.
        exec_ = [codex, "exec", "--skip-git-repo-check"]
        run([*exec_, TOLD], home, env)
        memory = core.for_user(OWNER)
        assert wait_for(lambda: memory.find("Ana"), 60), "the first session never landed"
        first = len(model.bodies("/v1/responses"))

        run([*exec_, ASKED], home, env)
        # The hook's context reaches the model as a developer message.
        added = [texts(m) for body in model.bodies("/v1/responses")[first:]
                 for m in body["input"] if m.get("role") == "developer"]  # fmt: skip
        assert any("[MEMORY]" in text and "Porto" in text for text in added), added

        # A session grown past the compaction limit: Codex compacts it before the next
        # turn, and the summary goes into the rollout file.
        model.used = 200_000
        run([*exec_, "resume", "--last", "I also play the cello."], home, env)
        run([*exec_, "resume", "--last", "Which instrument do I play?"], home, env)
        (rollout,) = [path for path in (home / ".codex" / "sessions").rglob("*.jsonl")
                      if "compacted" in path.read_text()]  # fmt: skip
        assert SUMMARY in rollout.read_text()
        # Sent by Stop after each of four turns, and by PreCompact.
        assert wait_for(lambda: settled(url, 5), 60)
        said = json.dumps(transcript_turns(rollout))
        assert "cello" in said and SUMMARY not in said and "Another language model" not in said
        assert "Zephyrine" not in json.dumps(extraction.requests)


def test_codex_trusts_the_hooks_as_install_does(home, monkeypatch, capsys):
    """Codex's own view of the hooks install wrote, yours and a trusted project's (its
    app server's hooks/list): the same keys and hashes, all trusted, for an owner
    whose name needs quoting."""
    codex = str(client("codex"))
    project = home / "project"
    monkeypatch.chdir(project)
    monkeypatch.setenv("PEGASUS_URL", "http://127.0.0.1:9")
    codex_config().parent.mkdir()
    codex_config().write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    ours = {}
    for scope in ([], ["--project"]):
        done = run_cli(capsys, "--user", "o'brien $x ü", "hooks", "install", "codex", *scope)
        assert done.code == 0 and "once you trust this project" not in done.out
        path = settings_path("codex", project if scope else None)
        ours |= {key: digest for key, digest, _ in
                 codex_hooks(path, json.loads(path.read_text())["hooks"])}  # fmt: skip
    listed = app_server_hooks(codex, home)
    assert len(ours) == 6
    assert {hook["key"]: hook["currentHash"] for hook in listed} == ours
    assert {hook["trustStatus"] for hook in listed} == {"trusted"}


def app_server_hooks(codex: str, home: Path) -> list[dict[str, Any]]:
    """The hooks Codex finds, as its app server lists them (JSON-RPC on stdio)."""
    requests = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(home / "project")]}},
    ]
    server = subprocess.Popen([codex, "app-server"], env=environment(home), cwd=home / "project",
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    watchdog = threading.Timer(RUN_TIMEOUT, server.kill)  # no answer ends the read below
    watchdog.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        for request in requests:
            server.stdin.write(json.dumps({"jsonrpc": "2.0", **request}) + "\n")
            server.stdin.flush()
        for line in server.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                return [hook for found in message["result"]["data"] for hook in found["hooks"]]
        raise AssertionError("the app server closed without listing the hooks")
    finally:
        watchdog.cancel()
        server.kill()
        server.wait(timeout=RUN_TIMEOUT)

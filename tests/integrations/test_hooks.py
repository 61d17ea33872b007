"""The hooks for Claude Code and Codex: the command fed recorded hook payloads on
stdin, against a running service and with none; both transcript formats; the
settings round trip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pegasus.errors import PegasusError
from pegasus.integrations.codex_trust import codex_config, codex_hooks
from pegasus.integrations.hooks import (
    MODULE,
    install,
    pegasus_hook,
    settings_path,
    transcript_turns,
    uninstall,
)
from pegasus.llm.scripted import sequence
from pegasus.memory import Pegasus
from tests.cli_helpers import run_cli
from tests.conftest import SEED_GRAPH
from tests.integrations.conftest import running_service, wait_for
from tests.write.conftest import FINISH, calls, entity, llm_for, relation

FIXTURES = Path(__file__).parent.parent / "fixtures"
SESSION = FIXTURES / "claude_code" / "session.jsonl"
ROLLOUT = FIXTURES / "codex" / "rollout.jsonl"
COMPACTED = {"claude-code": FIXTURES / "claude_code" / "compacted.jsonl",
             "codex": FIXTURES / "codex" / "compacted.jsonl"}  # fmt: skip
SESSION_ID = "3f9c2a5e-1b7d-4c2e-9a61-0d4f8e2b7c10"
MOVE = "I'm moving to Porto in March with my partner Leo"
EXTRACTION = [
    calls(entity("Leo"), entity("Porto", "PLACE"),
          relation("Leo", "MOVING_TO", "Porto", MOVE),
          relation("Leo", "WORKS_AS", "nurse", "Leo works as a nurse")),
    calls(FINISH),
]  # fmt: skip


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The assistants' settings (and Codex's trust) in a home folder of the test's own."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    return home


def hook(payload: dict, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", MODULE], input=json.dumps(payload), env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PEGASUS_", "NEO4J_"))}
    return keep | {"XDG_DATA_HOME": str(tmp_path / "data")} | extra


def prompt(text: str) -> dict:
    return {"session_id": SESSION_ID, "transcript_path": str(SESSION), "cwd": "/tmp",
            "hook_event_name": "UserPromptSubmit", "prompt": text}  # fmt: skip


def ended(event: str = "SessionEnd", transcript: Path = SESSION) -> dict:
    return {"session_id": SESSION_ID, "transcript_path": str(transcript), "cwd": "/tmp",
            "hook_event_name": event, "reason": "exit"}  # fmt: skip


@pytest.mark.parametrize("transcript", [SESSION, ROLLOUT], ids=["claude-code", "codex"])
def test_the_transcript_keeps_only_what_was_said(transcript: Path) -> None:
    turns = transcript_turns(transcript)
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[0]["content"].startswith(MOVE)
    assert turns[1]["content"].startswith("Happy to help with the Porto move.\n\nI ")
    assert turns[2]["content"].startswith("Thanks! Leo works as a nurse")
    said = json.dumps(turns)
    for left_out in ("/clear", "Caveat", "checklist.py')", "File created", "sub-agent",
                     "The user wants", "compacting", "AGENTS.md", "environment_context",
                     "sandboxed", "Planning a checklist", "exit_code", "interrupted",
                     "API Error", "the IDE", "relocating", "Another language model",
                     "/compact", "Compacted"):  # fmt: skip
        assert left_out not in said


@pytest.mark.parametrize("assistant", ["claude-code", "codex"])
def test_a_compacted_session_keeps_only_what_was_said(assistant: str) -> None:
    """Transcripts the real programs wrote around a compaction: the model's summary,
    the hook's context, the environment and the command's echo are nobody's words."""
    turns = transcript_turns(COMPACTED[assistant])
    said = ["My sister Ana moved to Porto in May.", "Noted."]
    if assistant == "codex":  # two more turns, the second after the compaction
        said += ["I also play the cello.", "Noted.", "And I live in Lisbon.", "Noted."]
    assert [turn["content"] for turn in turns] == said
    assert [turn["role"] for turn in turns] == ["user", "assistant"] * (len(said) // 2)


def test_hooks_against_the_running_service(tmp_path, serve) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with Pegasus(url) as core:
        core.for_user("default").import_file(SEED_GRAPH)
        llm = llm_for(serve(sequence(EXTRACTION)))
        with running_service(core, llm) as at:
            env = environment(tmp_path, PEGASUS_URL=at)
            asked = hook(prompt("Should I take the Nova AI offer from Joshua?"), env)
            assert asked.returncode == 0, asked.stderr
            context = json.loads(asked.stdout)["hookSpecificOutput"]
            assert context["hookEventName"] == "UserPromptSubmit"
            assert "[MEMORY]" in context["additionalContext"]
            assert "Joshua" in context["additionalContext"]

            done = hook(ended(), env)
            assert done.returncode == 0 and done.stdout == "", done.stderr
            memory = core.for_user("default")
            assert wait_for(lambda: memory.find("Leo")), "the session never landed"
            record = core.store.get_conversation("default", SESSION_ID)
            assert record is not None and record.turns_ingested == 4

            # Compaction of the same session, then its end, then the same session told
            # by Codex's Stop hook: nothing twice.
            before = memory.stats().edges
            assert hook(ended("PreCompact"), env).returncode == 0
            assert hook(ended(), env).returncode == 0
            assert hook(ended("Stop", ROLLOUT), env).returncode == 0
            assert wait_for(lambda: not core.store.get_conversation(
                "default", SESSION_ID).journal, 10)  # fmt: skip
            assert memory.stats().edges == before
            # A prompt about nothing remembered adds no context at all.
            quiet = hook(prompt("How do I reverse a list in Python?"), env)
            assert quiet.returncode == 0 and quiet.stdout == ""


def installed_prompt_hook(tmp_path: Path, url: str, user: str) -> str:
    """The command ``install`` writes for Codex's prompts, given the service's URL."""
    path = settings_path("codex")
    install(path, "codex", user, url=url)
    (group,) = json.loads(path.read_text())["hooks"]["UserPromptSubmit"]
    return group["hooks"][0]["command"]


def run_in_shell(command: str, text: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, shell=True, input=json.dumps(prompt(text)), env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_the_prompt_command_posts_to_the_service_with_curl(tmp_path, monkeypatch) -> None:
    user = "o'brien $x ü"  # quotes, a dollar and a non-ASCII letter survive two shells
    monkeypatch.delenv("PEGASUS_TOKEN", raising=False)
    # A curlrc asking for headers and a proxy for everything: neither may reach the hook.
    (tmp_path / ".curlrc").write_text("-i\n")
    env = environment(tmp_path, HOME=str(tmp_path), http_proxy="http://127.0.0.1:9",
                      HTTP_PROXY="http://127.0.0.1:9")  # fmt: skip
    with Pegasus(f"sqlite:///{tmp_path / 'memory.db'}") as core:
        core.for_user(user).import_file(SEED_GRAPH)
        with running_service(core) as at:
            command = installed_prompt_hook(tmp_path, at, user)
            assert command.startswith("sh -c ") and curl_path() in command
            asked = run_in_shell(command, "Should I take the Nova AI offer from Joshua?", env)
            assert asked.returncode == 0 and asked.stderr == ""
            context = json.loads(asked.stdout)["hookSpecificOutput"]["additionalContext"]
            assert "[MEMORY]" in context and "Joshua" in context
            quiet = run_in_shell(command, "How do I reverse a list in Python?", env)
            assert quiet.returncode == 0 and json.loads(quiet.stdout) == {}
        with running_service(core, token="s3cret-token-for-tests") as guarded:
            # A token set after install: refused, and said so, never an error.
            refused = run_in_shell(installed_prompt_hook(tmp_path, guarded, user), "Joshua?", env)
            assert refused.returncode == 0 and refused.stdout == ""
            assert "with no token?" in refused.stderr
    # Nothing listens: the prompt goes on, with one line on stderr.
    gone = run_in_shell(command, "Joshua?", env)
    assert gone.returncode == 0 and gone.stdout == ""
    assert gone.stderr.startswith(f"pegasus: no memory from the service at {at}")
    # A token, or no curl: the prompt's hook is the hook command, which finds the
    # service itself and keeps the token out of the process list.
    monkeypatch.setenv("PEGASUS_TOKEN", "s3cret-token-for-tests")
    assert installed_prompt_hook(tmp_path, at, "ana").endswith(f"{MODULE} --user ana")
    monkeypatch.delenv("PEGASUS_TOKEN")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert installed_prompt_hook(tmp_path, at, "ana").endswith(f"{MODULE} --user ana")


def curl_path() -> str:
    curl = shutil.which("curl")
    assert curl is not None, "curl is part of the machine these tests run on"
    return curl


def test_without_a_service_prompts_go_on_and_sessions_wait(tmp_path, serve) -> None:
    env = environment(tmp_path, PEGASUS_URL="http://127.0.0.1:9")  # nothing listens
    asked = hook(prompt("Should I take the Nova AI offer?"), env)
    assert asked.returncode == 0 and asked.stdout == ""
    done = hook(ended(), env)
    assert done.returncode == 0 and done.stdout == ""
    assert "queued for its next start" in done.stderr
    (queued,) = (tmp_path / "data" / "pegasus" / "jobs").glob("*.json")
    # The service, once started, takes the queued session in.
    with Pegasus(f"sqlite:///{tmp_path / 'memory.db'}") as core:
        llm = llm_for(serve(sequence(EXTRACTION)))
        with running_service(core, llm, jobs_folder=queued.parent):
            assert wait_for(lambda: core.for_user("default").find("Leo"))
            assert wait_for(lambda: not queued.exists(), 10)


def test_a_session_kept_but_not_learned_yet_is_said(tmp_path) -> None:
    """A service with no language model keeps the session and says why: so does the
    hook, on stderr, and the prompt's flow is never blocked."""
    core = Pegasus(f"sqlite:///{tmp_path / 'memory.db'}")
    with core, running_service(core, jobs_folder=tmp_path / "jobs") as at:
        done = hook(ended(), environment(tmp_path, PEGASUS_URL=at))
    assert done.returncode == 0 and done.stdout == ""
    said = "pegasus: the session is kept but not learned yet: "
    assert done.stderr.startswith(said) and len(done.stderr.strip()) > len(said)
    assert "\n" not in done.stderr.strip()


def test_broken_input_never_blocks_the_prompt(tmp_path) -> None:
    env = environment(tmp_path)
    for raw in ("", "not json", "[]", '{"hook_event_name": "UserPromptSubmit"}'):
        done = subprocess.run([sys.executable, "-m", MODULE], input=raw, env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0 and done.stdout == ""


FOREIGN = {
    "model": "opus",
    "hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "echo hi"}]},
            # Someone else's endpoint of the same name: not ours.
            {"hooks": [{"type": "http", "url": "https://tools.example/hooks/prompt"}]},
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": 'curl -d @- -H "Authorization: $PEGASUS_TOKEN" '
                        "https://tools.example/hooks/prompt?user=me",
                    }
                ]
            },
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
    },
}


def test_install_and_uninstall_keep_everyone_elses_hooks(tmp_path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(FOREIGN))
    assert install(path, "claude-code", "ana") == ["UserPromptSubmit", "SessionEnd", "PreCompact"]
    install(path, "claude-code", "ana")  # twice is once
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    ours = [h for groups in settings["hooks"].values() for g in groups for h in g["hooks"]
            if MODULE in h.get("command", "")]  # fmt: skip
    assert len(ours) == 3 and all("--user ana" in h["command"] for h in ours)
    assert settings["hooks"]["UserPromptSubmit"][:3] == FOREIGN["hooks"]["UserPromptSubmit"]
    assert uninstall(path) == 3
    assert json.loads(path.read_text()) == FOREIGN
    assert uninstall(path) == 0


def test_claude_codes_prompt_hook_can_post_to_the_service(tmp_path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(FOREIGN))
    install(path, "claude-code", "ana b", url="http://127.0.0.1:8765/", http=True)
    install(path, "claude-code", "ana b", url="http://127.0.0.1:8765/", http=True)  # once
    hooks = json.loads(path.read_text())["hooks"]
    *foreign, (posted,) = (g["hooks"] for g in hooks["UserPromptSubmit"])
    assert [{"hooks": h} for h in foreign] == FOREIGN["hooks"]["UserPromptSubmit"]
    assert posted["type"] == "http"
    assert posted["url"] == "http://127.0.0.1:8765/hooks/prompt?user=ana+b"
    assert posted["allowedEnvVars"] == ["PEGASUS_TOKEN"]
    # The session's end still reads the transcript through the command, for the same
    # owner.
    assert hooks["SessionEnd"][0]["hooks"][0]["command"].endswith(f"{MODULE} --user 'ana b'")
    assert uninstall(path) == 3
    assert json.loads(path.read_text()) == FOREIGN
    with pytest.raises(PegasusError, match="command hooks only"):
        install(settings_path("codex", tmp_path), "codex", url="http://127.0.0.1:8765", http=True)
    assert not settings_path("codex", tmp_path).exists()


def test_the_command_line_installs_the_http_hook_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PEGASUS_URL", "http://127.0.0.1:9100")  # a service found there
    done = run_cli(capsys, "--user", "ana", "hooks", "install", "claude-code", "--project")
    assert done.code == 0 and "service at http://127.0.0.1:9100" in done.out
    assert "nothing answers at http://127.0.0.1:9100 now" in done.err
    # This project's personal settings, never the shared file teams commit.
    settings = tmp_path / ".claude" / "settings.local.json"
    assert settings_path("claude-code", tmp_path) == settings
    assert not (tmp_path / ".claude" / "settings.json").exists()
    command = f"{sys.executable} -m {MODULE} --user ana"
    assert done.out.splitlines()[:4] == [
        f"wrote to {settings}:",
        "  UserPromptSubmit: Claude Code posts it to http://127.0.0.1:9100/hooks/prompt?user=ana",
        f"  SessionEnd: runs {command}",
        f"  PreCompact: runs {command}",
    ]
    prompt_hook = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert prompt_hook["url"] == "http://127.0.0.1:9100/hooks/prompt?user=ana"
    assert run_cli(capsys, "hooks", "install", "claude-code", "--project", "--command").code == 0
    prompt_hook = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert prompt_hook["type"] == "command" and curl_path() in prompt_hook["command"]
    assert "http://127.0.0.1:9100/hooks/prompt?user=default" in prompt_hook["command"]
    # No owner named: the default, for prompts and sessions alike.
    monkeypatch.delenv("PEGASUS_USER", raising=False)
    assert run_cli(capsys, "hooks", "install", "claude-code", "--project").code == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["url"].endswith("/hooks/prompt?user=default")
    assert hooks["SessionEnd"][0]["hooks"][0]["command"].endswith("--user default")
    assert run_cli(capsys, "hooks", "uninstall", "claude-code", "--project").code == 0
    assert json.loads(settings.read_text()) == {}


def test_the_scope_option_leaves_user_to_the_owner(tmp_path, monkeypatch, capsys, home):
    """``--user`` names the memory's owner only; the hooks are yours unless ``--project``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PEGASUS_URL", "http://127.0.0.1:9")
    assert run_cli(capsys, "hooks", "install", "claude-code", "--user").code != 0
    done = run_cli(capsys, "--user", "leo", "hooks", "install", "claude-code")
    assert done.code == 0 and f"wrote to {home / '.claude' / 'settings.json'}:" in done.out
    assert not (tmp_path / ".claude").exists()
    removed = run_cli(capsys, "hooks", "uninstall", "claude-code")
    assert removed.out.startswith(f"removed 3 hooks from {home / '.claude' / 'settings.json'}")


def test_a_project_install_leaves_the_shared_settings(tmp_path, monkeypatch, capsys):
    """Hooks of ours in a project's shared settings.json (they name this machine's
    Python and the owner) move to its settings.local.json; the team's hooks stay."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PEGASUS_URL", "http://127.0.0.1:9")
    shared = tmp_path / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps(FOREIGN))
    install(shared, "claude-code", "ana")
    done = run_cli(capsys, "--user", "ana", "hooks", "install", "claude-code", "--project")
    assert done.code == 0 and f"removed 3 of Pegasus's hooks from {shared}" in done.out
    assert json.loads(shared.read_text()) == FOREIGN
    assert len(json.loads((tmp_path / ".claude" / "settings.local.json").read_text())["hooks"]) == 3


def test_a_broken_settings_file_is_left_alone(tmp_path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": {')
    with pytest.raises(PegasusError, match="not valid JSON"):
        install(path)
    assert path.read_text() == '{"hooks": {'
    fresh = tmp_path / "new" / "settings.json"
    install(fresh)
    assert uninstall(fresh) == 3 and json.loads(fresh.read_text()) == {}


def test_codex_hooks_go_in_its_hooks_file(tmp_path, home) -> None:
    path = settings_path("codex", tmp_path)
    assert path == tmp_path / ".codex" / "hooks.json"
    assert settings_path("codex") == home / ".codex" / "hooks.json"  # CODEX_HOME's
    assert install(path, "codex") == ["UserPromptSubmit", "Stop", "PreCompact"]
    hooks = json.loads(path.read_text())["hooks"]
    assert all(MODULE in groups[0]["hooks"][0]["command"] for groups in hooks.values())
    assert uninstall(path, "codex") == 3


def trust(config: Path) -> dict[str, str]:
    """Codex's trust in ``config``: hook key to trusted hash."""
    states = tomllib.loads(config.read_text()).get("hooks", {}).get("state", {})
    return {key: state["trusted_hash"] for key, state in states.items() if "trusted_hash" in state}


USER_CONFIG = """# mine
model = "o3"  # the one I like

[hooks.state."/elsewhere/hooks.json:stop:0:0"]
enabled = false
"""
CODEX_FOREIGN = {"hooks": {
    "PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "lint"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify", "timeout": 5}]}],
}}  # fmt: skip


def test_codex_trusts_what_install_wrote_and_only_that(tmp_path) -> None:
    """Install trusts its hooks in CODEX_HOME's config.toml (Codex skips, without a
    word, a hook nobody trusted), keeps the rest of that file as it was, and moves the
    trust given to another hook when its place in the file changes."""
    config, path = codex_config(), settings_path("codex", tmp_path)
    config.parent.mkdir()
    config.write_text(USER_CONFIG)
    path.parent.mkdir()
    path.write_text(json.dumps(CODEX_FOREIGN))
    foreign = dict((key, digest) for key, digest, _ in codex_hooks(path, CODEX_FOREIGN["hooks"]))
    config.write_text(USER_CONFIG + "".join(
        f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n' for key, digest in foreign.items()
    ))  # fmt: skip
    install(path, "codex", "ana")
    hooks = json.loads(path.read_text())["hooks"]
    ours = {key: digest for key, digest, mine in codex_hooks(path, hooks, pegasus_hook) if mine}
    assert len(ours) == 3 and all(":stop:1:0" in key or ":0:0" in key for key in ours)
    assert trust(config) == foreign | ours
    assert config.read_text().startswith(USER_CONFIG)  # comments, order and all
    # Someone's hook added after ours: uninstall moves its place, and its trust with it.
    hooks = json.loads(path.read_text())
    hooks["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "late"}]})
    path.write_text(json.dumps(hooks))
    (late,) = [(k, d) for k, d, _ in codex_hooks(path, hooks["hooks"]) if k.endswith(":stop:2:0")]
    config.write_text(
        config.read_text() + f'\n[hooks.state."{late[0]}"]\ntrusted_hash = "{late[1]}"\n'
    )
    assert uninstall(path, "codex") == 3
    assert trust(config) == foreign | {late[0].replace(":stop:2:0", ":stop:1:0"): late[1]}
    states = tomllib.loads(config.read_text())["hooks"]["state"]
    assert states["/elsewhere/hooks.json:stop:0:0"] == {"enabled": False}


def test_codex_in_an_untrusted_project_is_said(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PEGASUS_URL", "http://127.0.0.1:9")
    done = run_cli(capsys, "hooks", "install", "codex", "--project")
    assert done.code == 0 and f"wrote to {tmp_path / '.codex' / 'hooks.json'}:" in done.out
    assert f"trusted them in {codex_config()}" in done.out
    assert "Codex reads .codex/ here once you trust this project" in done.out
    with codex_config().open("a") as config:
        config.write(f'\n[projects."{tmp_path.parent}"]\ntrust_level = "trusted"\n')
    done = run_cli(capsys, "hooks", "install", "codex", "--project")
    assert done.code == 0 and "once you trust this project" not in done.out
    assert run_cli(capsys, "hooks", "uninstall", "codex", "--project").code == 0
    assert trust(codex_config()) == {}


def test_a_broken_codex_config_is_left_alone(tmp_path) -> None:
    config, path = codex_config(), settings_path("codex", tmp_path)
    config.parent.mkdir()
    config.write_text("model = [")
    with pytest.raises(PegasusError, match="not valid TOML"):
        install(path, "codex")
    assert config.read_text() == "model = [" and not path.exists()

"""Hooks for Claude Code and Codex: recall on every prompt, the session remembered
as it goes.

The assistant runs ``python -m pegasus.integrations.hooks`` with the hook's JSON on
stdin (both assistants send the same fields and read the same answer). The command
uses the standard library and the running memory service only, so it starts in a
few tens of milliseconds; when no service answers, a prompt goes on with no memory
(one line on stderr, never an error) and a session is queued for the service's
next start. On a prompt the command is only a messenger, so where ``curl`` is found
the prompt's hook is ``curl`` posting the hook's JSON to the service
(:func:`prompt_command`, a few milliseconds to start against Python's tens), and
Claude Code can post it itself (an HTTP hook, :func:`prompt_hook`), which starts no
process at all. ``pegasus hooks install claude-code|codex`` writes the hooks into the
assistant's settings, Claude Code's prompt hook as an HTTP hook unless told
``--command`` (``install`` and ``uninstall`` below)."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from pegasus.client import call, ingest_job, queue_ingest, service_url
from pegasus.errors import PegasusError, StoreError

MODULE = "pegasus.integrations.hooks"
PROMPT_PATH = "/hooks/prompt"  # the service's endpoint for Claude Code's HTTP hook
RECALL_TIMEOUT = 3.0  # seconds a prompt may wait for memory, at worst
CURL_FAILED = "pegasus: no memory from the service at "  # and marks the curl hook as ours
# Each assistant's settings file (under the project or the home folder) and the hooks
# Pegasus adds to it, with their timeouts in seconds. Codex has no session end: its
# Stop (after each turn) sends the session so far, and ingest takes the new turns.
ASSISTANTS = {
    "claude-code": (Path(".claude") / "settings.json",
                    {"UserPromptSubmit": 10, "SessionEnd": 30, "PreCompact": 30}),
    "codex": (Path(".codex") / "hooks.json", {"UserPromptSubmit": 10, "Stop": 30,
                                               "PreCompact": 30}),
}  # fmt: skip
REMEMBER_ON = ("SessionEnd", "PreCompact", "Stop")
# Text the assistants put in the user's place that the user never typed.
NOT_SAID = ("<command-", "<local-command", "<system-reminder", "Caveat: ",
            "<environment_context", "<user_instructions", "# AGENTS.md instructions")  # fmt: skip


# --- the hook command -------------------------------------------------------------
def transcript_turns(path: Path) -> list[dict[str, str]]:
    """The user's and the assistant's words from a JSONL transcript (Claude Code's, or
    Codex's rollout file): tool calls, tool results, thinking, sub-agents' side chains
    and text the assistant put in the user's place are left out, and an assistant's
    consecutive text blocks make one turn."""
    turns: list[dict[str, str]] = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash; the rest still counts
            role, content = _message(entry) if isinstance(entry, dict) else (None, None)
            text = _text(content)
            if role is None or not text or text.startswith(NOT_SAID):
                continue
            if turns and turns[-1]["role"] == role == "assistant":
                turns[-1]["content"] += "\n\n" + text
            else:
                turns.append({"role": role, "content": text})
    return turns


def _message(entry: dict[str, Any]) -> tuple[str | None, Any]:
    """(role, content) of a transcript line that is a user's or assistant's message."""
    if entry.get("type") == "response_item":  # Codex
        payload = entry.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "message":
            role = payload.get("role")
            return (role, payload.get("content")) if role in ("user", "assistant") else (None, None)
        return None, None
    message = entry.get("message")  # Claude Code
    if entry.get("isSidechain") or entry.get("isMeta") or not isinstance(message, dict):
        return None, None
    role = entry.get("type")
    return (role, message.get("content")) if role in ("user", "assistant") else (None, None)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    kinds = ("text", "input_text", "output_text")
    parts = [block.get("text", "") for block in content
             if isinstance(block, dict) and block.get("type") in kinds]  # fmt: skip
    return "\n".join(part for part in parts if isinstance(part, str)).strip()


def prompt_of(payload: dict[str, Any]) -> str | None:
    """The prompt a UserPromptSubmit payload carries, if it has one worth a recall."""
    prompt = payload.get("prompt")
    return prompt if isinstance(prompt, str) and prompt.strip() else None


def as_context(block: str) -> dict[str, Any]:
    """A recall block as the hook's answer: context added before the prompt. The same
    JSON is the answer of a command hook (on stdout) and of an HTTP hook."""
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                   "additionalContext": block}}  # fmt: skip


def on_prompt(payload: dict[str, Any], user: str, url: str | None) -> dict[str, Any] | None:
    """The recall block as Claude Code's additional context, or None."""
    prompt = prompt_of(payload)
    if not url or prompt is None:
        return None
    body = {"user": user, "message": prompt, "conversation_id": payload.get("session_id")}
    found = call(url, "/recall", body, timeout=RECALL_TIMEOUT)
    return as_context(found["text"]) if found and found.get("text") else None


def on_session_end(payload: dict[str, Any], user: str, url: str | None) -> str:
    """Sends the session to the service's ingest queue (or queues it for its next
    start); says what happened, for stderr."""
    path, session = payload.get("transcript_path"), payload.get("session_id")
    if not isinstance(path, str) or not isinstance(session, str):
        return "no transcript_path or session_id in the hook's input"
    turns = transcript_turns(Path(path).expanduser())
    if not any(turn["role"] == "user" for turn in turns):
        return "nothing the user said in this session"
    transcript = {"id": session, "turns": turns}
    try:
        job = call(url, "/ingest", {"user": user, "transcript": transcript}) if url else None
    except StoreError:  # the service runs, its store does not: keep the session for later
        job = None
    if job is None:
        queue_ingest(ingest_job(user, transcript, session))
        return "the memory service could not take the session: it is queued for its next start"
    return ""


def owner(user: str | None) -> str:
    """Whose memory a hook reads and writes: as given, else ``PEGASUS_USER``, else
    the default owner (``pegasus.model.DEFAULT_USER``, not imported: pydantic is too
    heavy for a hook)."""
    return user or os.environ.get("PEGASUS_USER") or "default"


def main(argv: list[str] | None = None) -> int:
    """One hook call. Exit 0 whatever happens: memory never blocks the assistant."""
    argv = sys.argv[1:] if argv is None else argv
    user = owner(argv[argv.index("--user") + 1] if "--user" in argv[:-1] else None)
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        event = payload.get("hook_event_name") if isinstance(payload, dict) else None
        url = service_url()
        if event == "UserPromptSubmit":
            output = on_prompt(payload, user, url)
            if output is not None:
                sys.stdout.write(json.dumps(output))
            elif url is None:
                print("pegasus: no memory service running (pegasus serve)", file=sys.stderr)
        elif event in REMEMBER_ON:
            said = on_session_end(payload, user, url)
            if said:
                print(f"pegasus: {said}", file=sys.stderr)
    except (PegasusError, OSError, ValueError) as exc:
        print(f"pegasus: {exc}", file=sys.stderr)
    return 0


# --- the settings file ------------------------------------------------------------
def hook_command(user: str | None = None) -> str:
    words = [sys.executable, "-m", MODULE, *(["--user", user] if user else [])]
    return " ".join(shlex.quote(word) for word in words)


def prompt_hook(url: str, user: str | None = None) -> dict[str, Any]:
    """Claude Code's HTTP hook for a prompt: its JSON posted to the service at ``url``,
    whose answer is the hook's answer, so no process starts on a prompt. The owner is
    fixed now (:func:`owner`); the token, if any, is read from Claude Code's own
    environment."""
    query = urllib.parse.urlencode({"user": owner(user)})
    return {"type": "http", "url": f"{url.rstrip('/')}{PROMPT_PATH}?{query}",
            "timeout": math.ceil(RECALL_TIMEOUT),
            "headers": {"Authorization": "Bearer $PEGASUS_TOKEN"},
            "allowedEnvVars": ["PEGASUS_TOKEN"]}  # fmt: skip


def prompt_command(url: str, user: str | None = None) -> str | None:
    """A prompt's command hook that posts the hook's JSON to the service at ``url``
    with ``curl`` and prints its answer, so no Python starts on a prompt (the
    service's ``prompt_hook`` endpoint does the rest). None where there is no
    ``curl``, or with ``PEGASUS_TOKEN`` set: a token on curl's command line would
    show in the process list, and the hook command keeps it in its environment.

    It runs under ``sh`` whatever the assistant's shell, ignores ``~/.curlrc`` and
    proxies, and prints the answer only once all of it has come: when nothing
    answers, or with an error or a timeout, it prints one line on stderr and exits
    0, like the hook command."""
    curl = shutil.which("curl")
    if curl is None or os.environ.get("PEGASUS_TOKEN"):
        return None
    target = prompt_hook(url, user)["url"]
    failed = f"{CURL_FAILED}{url.rstrip('/')} (is pegasus serve running there, with no token?)"
    post = (f'{_quoted(curl)} -q -sf --noproxy "*" --max-time {RECALL_TIMEOUT:g} '
            f'-H "Content-Type: application/json" --data-binary @- {_quoted(target)}')  # fmt: skip
    script = f'answer=$({post}) && printf "%s" "$answer" || echo {_quoted(failed)} >&2'
    return f"sh -c {shlex.quote(script)}"


def _quoted(text: str) -> str:
    """``text`` as one word of the script in double quotes, which read better inside
    the single quotes around it; in single quotes where double ones would expand."""
    return f'"{text}"' if not set(text) & set('"$`\\!') else shlex.quote(text)


def _ours(hook: Any) -> bool:
    """A hook Pegasus wrote: its command runs our module or is ``prompt_command``'s,
    or it is an HTTP hook to our endpoint passing our token (a path alone could be
    anyone's)."""
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "http":
        url, names = hook.get("url"), hook.get("allowedEnvVars")
        return (isinstance(url, str) and isinstance(names, list) and "PEGASUS_TOKEN" in names
                and urllib.parse.urlsplit(url).path.endswith(PROMPT_PATH))  # fmt: skip
    command = str(hook.get("command", ""))
    return MODULE in command or (f"{PROMPT_PATH}?" in command and CURL_FAILED in command)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        settings = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise PegasusError(f"{path} is not valid JSON ({exc}); left as it is") from exc
    if not isinstance(settings, dict) or not isinstance(settings.get("hooks", {}), dict):
        raise PegasusError(f"{path} does not hold a settings object with a 'hooks' object")
    return settings


def _write(path: Path, settings: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(partial, path)


def uninstall(path: Path) -> int:
    """Removes Pegasus's hooks and nothing else; returns how many were removed."""
    settings = _read(path)
    hooks = settings.get("hooks", {})
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue  # not ours, whatever it is
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [hook for hook in inner if not _ours(hook)]
            removed += len(inner) - len(kept)
            if kept or not inner:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups or not groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if removed:
        if not hooks:
            settings.pop("hooks", None)
        _write(path, settings)
    return removed


def settings_path(assistant: str, root: Path) -> Path:
    """The assistant's settings file under ``root`` (a project, or the home folder)."""
    return root / ASSISTANTS[assistant][0]


def install(
    path: Path,
    assistant: str = "claude-code",
    user: str | None = None,
    url: str | None = None,
    http: bool = False,
) -> list[str]:
    """Adds Pegasus's hooks (replacing an older install of ours); returns the events.
    With ``url``, the service's, a prompt's hook posts to it: Claude Code itself with
    ``http`` (:func:`prompt_hook`), else ``curl`` where there is one
    (:func:`prompt_command`). Every other hook runs the hook command, which reads the
    transcript here and finds the service when it runs."""
    if http and assistant != "claude-code":
        raise PegasusError(f"{assistant} runs command hooks only")
    if http and url is None:
        raise PegasusError("an HTTP hook needs the service's URL")
    # One owner for every hook, fixed now: prompts and sessions meet in one memory.
    user = owner(user)
    uninstall(path)
    settings = _read(path)
    hooks = settings.setdefault("hooks", {})
    command = hook_command(user)
    events = ASSISTANTS[assistant][1]
    for event, timeout in events.items():
        entry = {"type": "command", "command": command, "timeout": timeout}
        if url is not None and event == "UserPromptSubmit":
            if http:
                entry = prompt_hook(url, user)
            else:
                entry["command"] = prompt_command(url, user) or command
        hooks.setdefault(event, []).append({"hooks": [entry]})
    _write(path, settings)
    return list(events)


if __name__ == "__main__":
    sys.exit(main())

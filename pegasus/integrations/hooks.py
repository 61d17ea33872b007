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

import copy
import json
import math
import os
import re
import shlex
import shutil
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from pegasus.client import call, ingest_job, queue_ingest, service_url
from pegasus.errors import PegasusError, StoreError
from pegasus.integrations.codex_trust import CodexTrust, codex_config, codex_home

MODULE = "pegasus.integrations.hooks"
PROMPT_PATH = "/hooks/prompt"  # the service's endpoint for Claude Code's HTTP hook
RECALL_TIMEOUT = 3.0  # seconds a prompt may wait for memory, at worst
CURL_FAILED = "pegasus: no memory from the service at "  # and marks the curl hook as ours
# The hooks Pegasus adds for each assistant, with their timeouts in seconds. Codex has
# no session end: its Stop (after each turn) sends the session so far, and ingest
# takes the new turns.
EVENTS = {
    "claude-code": {"UserPromptSubmit": 10, "SessionEnd": 30, "PreCompact": 30},
    "codex": {"UserPromptSubmit": 10, "Stop": 30, "PreCompact": 30},
}
REMEMBER_ON = ("SessionEnd", "PreCompact", "Stop")
# Text the assistants put in the user's place that the user never typed: Claude Code's
# command echoes, caveats, reminders and interruption notes, its summary after a
# compaction (older versions mark it by this text alone); Codex's environment and
# instructions, and its summary after a compaction.
NOT_SAID = ("<command-", "<local-command", "<system-reminder", "Caveat: ",
            "[Request interrupted by user", "This session is being continued from a "
            "previous conversation", "<environment_context", "<user_instructions",
            "# AGENTS.md instructions", "<permissions instructions", "<skills_instructions",
            "Another language model started to solve this problem")  # fmt: skip
# Claude Code's marks on a line the user did not say: a harness note, the summary
# after /compact, a line shown in the transcript only, a sub-agent's exchange, an
# API error told as the assistant's answer.
CLAUDE_NOT_SAID = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "isSidechain",
                   "isApiErrorMessage")  # fmt: skip
REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


# --- the hook command -------------------------------------------------------------
def transcript_turns(path: Path) -> list[dict[str, str]]:
    """The user's and the assistant's words from a JSONL transcript (Claude Code's, or
    Codex's rollout file): tool calls, tool results, thinking, sub-agents' side chains,
    compaction summaries and text the assistant put in the user's place are left out,
    and an assistant's consecutive text blocks make one turn."""
    turns: list[dict[str, str]] = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash; the rest still counts
            role, content = _message(entry) if isinstance(entry, dict) else (None, None)
            text = _text(content)
            if role is None or not text:
                continue
            if turns and turns[-1]["role"] == role == "assistant":
                turns[-1]["content"] += "\n\n" + text
            else:
                turns.append({"role": role, "content": text})
    return turns


def _message(entry: dict[str, Any]) -> tuple[str | None, Any]:
    """(role, content) of a transcript line that is a user's or assistant's message."""
    if entry.get("type") == "response_item":
        return _codex_message(entry)
    message = entry.get("message")  # Claude Code
    role = entry.get("type")
    if role not in ("user", "assistant") or not isinstance(message, dict):
        return None, None
    if any(entry.get(mark) for mark in CLAUDE_NOT_SAID) or "toolUseResult" in entry:
        return None, None
    if role == "assistant" and message.get("model") == "<synthetic>":
        return None, None  # a note Claude Code wrote itself, no model's answer
    return role, message.get("content")


def _codex_message(entry: dict[str, Any]) -> tuple[str | None, Any]:
    """A Codex rollout line: the model's compaction summary is marked in the line's
    metadata, and what Codex sends in the user's role says where it came from in its
    content kinds (``user.text`` for what was typed)."""
    payload, metadata = entry.get("payload"), entry.get("metadata")
    if not isinstance(payload, dict) or payload.get("type") != "message":
        return None, None
    role = payload.get("role")
    if role not in ("user", "assistant"):
        return None, None
    if isinstance(metadata, dict) and metadata.get("compaction_output"):
        return None, None
    passthrough = payload.get("internal_chat_message_metadata_passthrough")
    kinds = passthrough.get("content_item_kinds") if isinstance(passthrough, dict) else None
    typed = isinstance(kinds, list) and any(str(kind).startswith("user.") for kind in kinds)
    if role == "user" and isinstance(kinds, list) and kinds and not typed:
        return None, None
    return role, payload.get("content")


def _text(content: Any) -> str:
    """The text a message's content says, without what the assistant added to it."""
    if isinstance(content, str):
        blocks = [content]
    elif isinstance(content, list):
        kinds = ("text", "input_text", "output_text")
        blocks = [block.get("text") for block in content
                  if isinstance(block, dict) and block.get("type") in kinds]  # fmt: skip
    else:
        return ""
    said = (REMINDER.sub("", block).strip() for block in blocks if isinstance(block, str))
    return "\n".join(text for text in said if text and not text.startswith(NOT_SAID))


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
    if isinstance(job, dict) and job.get("state") == "waiting":
        return f"the session is kept but not learned yet: {job.get('waiting_for') or 'it waits'}"
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


def pegasus_hook(hook: Any) -> bool:
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


def _write(path: Path, text: str) -> None:
    """``text`` in ``path``, whole or not at all, with the mode the file had."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, "utf-8")
    if path.exists():
        shutil.copymode(path, partial)
    os.replace(partial, path)


def _write_settings(path: Path, settings: dict[str, Any]) -> None:
    _write(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")


def _remove_ours(settings: dict[str, Any]) -> int:
    """Takes Pegasus's hooks out of ``settings``; returns how many there were."""
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
            kept = [hook for hook in inner if not pegasus_hook(hook)]
            removed += len(inner) - len(kept)
            if kept or not inner:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups or not groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if removed and not hooks:
        settings.pop("hooks", None)
    return removed


def uninstall(path: Path, assistant: str = "claude-code") -> int:
    """Removes Pegasus's hooks and nothing else (for Codex, with the trust given to
    them); returns how many were removed."""
    settings = _read(path)
    before = copy.deepcopy(settings.get("hooks", {}))
    trust = CodexTrust(codex_config()) if assistant == "codex" else None
    removed = _remove_ours(settings)
    if removed:
        _write_settings(path, settings)
        if trust is not None:
            trust.update(path, before, settings.get("hooks", {}), pegasus_hook)
            _write(trust.config, trust.text())
    return removed


def claude_home() -> Path:
    """Claude Code's folder for your settings: ``CLAUDE_CONFIG_DIR``, else ~/.claude."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def settings_path(assistant: str, project: Path | None = None) -> Path:
    """The file Pegasus's hooks go in: yours, in the assistant's home folder, or one
    project's. There, Claude Code's is its personal file (``settings.local.json``, which
    teams do not commit: the hooks name this machine's Python and the memory's owner);
    Codex has one hook file per project, ``.codex/hooks.json``, and runs its hooks
    only in a project it trusts, and only once you trust the hooks too."""
    if assistant == "claude-code" and project:
        return project / ".claude" / "settings.local.json"
    if assistant == "claude-code":
        return claude_home() / "settings.json"
    return (project / ".codex" if project else codex_home()) / "hooks.json"


def shared_settings(assistant: str, project: Path | None) -> Path | None:
    """A project's settings file that teams commit, where Pegasus's hooks do not belong."""
    return project / ".claude" / "settings.json" if assistant == "claude-code" and project else None


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
    transcript here and finds the service when it runs. Codex's hooks are trusted in
    :func:`codex_config`: Codex skips, without a word, a hook you have not trusted."""
    if http and assistant != "claude-code":
        raise PegasusError(f"{assistant} runs command hooks only")
    if http and url is None:
        raise PegasusError("an HTTP hook needs the service's URL")
    # One owner for every hook, fixed now: prompts and sessions meet in one memory.
    user = owner(user)
    settings = _read(path)
    before = copy.deepcopy(settings.get("hooks", {}))
    trust = CodexTrust(codex_config()) if assistant == "codex" else None  # read first: may fail
    _remove_ours(settings)
    hooks = settings.setdefault("hooks", {})
    command = hook_command(user)
    events = EVENTS[assistant]
    for event, timeout in events.items():
        entry = {"type": "command", "command": command, "timeout": timeout}
        if url is not None and event == "UserPromptSubmit":
            if http:
                entry = prompt_hook(url, user)
            else:
                entry["command"] = prompt_command(url, user) or command
        hooks.setdefault(event, []).append({"hooks": [entry]})
    _write_settings(path, settings)
    if trust is not None:
        trust.update(path, before, hooks, pegasus_hook)
        _write(trust.config, trust.text())
    return list(events)


def installed(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Pegasus's hooks in the file at ``path``, as (event, hook)."""
    return [(event, hook) for event, groups in _read(path).get("hooks", {}).items()
            if isinstance(groups, list)
            for group in groups if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for hook in group["hooks"] if pegasus_hook(hook)]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())

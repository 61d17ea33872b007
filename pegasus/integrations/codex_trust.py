"""Codex's trust in hooks: Codex runs a hook from a hooks file only when your
``config.toml`` holds, under ``[hooks.state."<file>:<event>:<group>:<hook>"]``, the
hash of that hook as Codex reads it (the file's absolute path, the event in snake
case, the places counted from 0), and skips any other without a word. Standard
library only at import (``tomlkit`` when a file is changed): the hook command
imports this module."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pegasus.errors import PegasusError


def codex_home() -> Path:
    """Codex's folder for your settings: ``CODEX_HOME``, else ~/.codex."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def codex_config() -> Path:
    """Your Codex settings, where Codex keeps which hooks you trust (for every project
    too: a project cannot trust its own hooks)."""
    return codex_home() / "config.toml"


def codex_trusts(project: Path) -> bool:
    """Whether your Codex settings trust ``project`` (or a folder above it): Codex
    reads a project's ``.codex/`` only then."""
    import tomllib

    try:
        projects = tomllib.loads(codex_config().read_text("utf-8")).get("projects", {})
    except (OSError, ValueError):
        return False
    trusted = {Path(path) for path, says in projects.items()
               if isinstance(says, dict) and says.get("trust_level") == "trusted"}  # fmt: skip
    here = project.resolve()
    return any(folder in trusted for folder in (here, *here.parents))


# Codex runs a hook from a hooks file only when your config.toml holds, under
# [hooks.state."<file>:<event>:<group>:<hook>"], the hash of that hook as it reads it
# (the file's absolute path, the event in snake case, the places counted from 0).
CODEX_NO_MATCHER = ("UserPromptSubmit", "Stop")  # Codex ignores a matcher on these
CODEX_DEFAULT_TIMEOUT = 600


def codex_hash(event: str, matcher: Any, hook: dict[str, Any]) -> str:
    """The hash Codex trusts a command hook by: SHA-256 of the hook as Codex reads it,
    with the timeout it defaults to and without what it ignores, in JSON with sorted
    keys and no spaces."""
    timeout = hook.get("timeout")
    timeout = max(1, timeout if isinstance(timeout, int) else CODEX_DEFAULT_TIMEOUT)
    handler = {"type": "command", "command": hook.get("command"), "timeout": timeout,
               "async": bool(hook.get("async"))}  # fmt: skip
    if isinstance(hook.get("statusMessage"), str):
        handler["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": _snake(event), "hooks": [handler]}
    if isinstance(matcher, str) and event not in CODEX_NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def codex_hooks(
    path: Path, hooks: dict[str, Any], ours: Callable[[Any], bool] = lambda hook: False
) -> list[tuple[str, str, bool]]:
    """(key, hash, ``ours(hook)``) of each command hook of Codex's hooks file at
    ``path``."""
    source = str(path.resolve())
    found = []
    for event, groups in hooks.items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, hook in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(hook, dict) and hook.get("type") == "command":
                    key = f"{source}:{_snake(event)}:{g}:{h}"
                    found.append((key, codex_hash(event, group.get("matcher"), hook), ours(hook)))
    return found


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


class CodexTrust:
    """Your Codex config.toml, read before a hooks file changes (a file that is not
    TOML stops the change) and updated after it, keeping everything else in it; the
    caller writes :meth:`text` back."""

    def __init__(self, config: Path) -> None:
        import tomlkit  # only here: the hook command must start fast

        self.config, self._tomlkit = config, tomlkit
        try:
            text = config.read_text("utf-8") if config.exists() else ""
            self.doc = tomlkit.parse(text)
        except tomlkit.exceptions.ParseError as exc:
            raise PegasusError(f"{config} is not valid TOML ({exc}); left as it is") from exc
        hooks = self.doc.get("hooks", {})
        if not isinstance(hooks, dict) or not isinstance(hooks.get("state", {}), dict):
            raise PegasusError(f"{config}: 'hooks' or 'hooks.state' is not a table")

    def update(
        self, path: Path, before: dict[str, Any], after: dict[str, Any],
        ours: Callable[[Any], bool],
    ) -> None:  # fmt: skip
        """Trust the hooks ``ours`` picks now in ``path``, and move the trust you gave
        other hooks there along with them when their places changed (Codex files trust
        by place); trust given to what left the file goes too."""
        states = self._states()
        old, new = codex_hooks(path, before, ours), codex_hooks(path, after, ours)
        trusted = {digest: dict(states[key]) for key, digest, _ in old
                   if isinstance(states.get(key), dict)
                   and states[key].get("trusted_hash") == digest}  # fmt: skip
        now = {key for key, _, _ in new}
        for key, digest, _ in old:
            if key in states and (key not in now or digest in trusted):
                del states[key]
        for key, digest, ours in new:
            if digest in trusted:
                states[key] = self._table(trusted[digest])
            elif ours:
                states[key] = self._table({**_plain(states.get(key)), "trusted_hash": digest})

    def _states(self) -> Any:
        hooks = self.doc.get("hooks")
        if hooks is None:
            hooks = self.doc["hooks"] = self._tomlkit.table(is_super_table=True)
        if hooks.get("state") is None:
            hooks["state"] = self._tomlkit.table(is_super_table=True)
        return hooks["state"]

    def _table(self, values: dict[str, Any]) -> Any:
        table = self._tomlkit.table()
        table.update(values)
        return table

    def text(self) -> str:
        hooks = self.doc.get("hooks")
        if hooks is not None and not hooks.get("state"):
            del hooks["state"]
        if hooks is not None and not hooks:
            del self.doc["hooks"]
        return self._tomlkit.dumps(self.doc)


def _plain(state: Any) -> dict[str, Any]:
    return {key: value for key, value in state.items()} if isinstance(state, dict) else {}

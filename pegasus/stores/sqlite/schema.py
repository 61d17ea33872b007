"""The SQLite schema: the migrations in ``migrations/``, applied in the order of
their names, each once, in one transaction."""

from __future__ import annotations

import sqlite3
from importlib.resources import files


def _migrations() -> list[tuple[str, str]]:
    folder = files(__package__) / "migrations"
    scripts = sorted((p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return [(path.name.removesuffix(".sql"), path.read_text(encoding="utf-8")) for path in scripts]


MIGRATIONS = _migrations()  # (name, script), oldest first


def statements(script: str) -> list[str]:
    """A script's statements, as ``sqlite3.complete_statement`` ends them (a
    trigger's body holds semicolons of its own)."""
    found, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    if "".join(line.split("--")[0] for line in pending.splitlines()).strip():
        raise ValueError(f"a migration ends inside a statement (no ';'): {pending.strip()!r}")
    return found

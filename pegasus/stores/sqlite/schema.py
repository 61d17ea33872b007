"""The SQLite schema: the migrations in ``migrations/``, applied in the order of
their names, each once, in one transaction."""

from __future__ import annotations

import sqlite3
from importlib.resources import files


def _migrations() -> list[tuple[str, str]]:
    folder = files(__package__) / "migrations"
    scripts = sorted(p for p in folder.iterdir() if p.name.endswith(".sql"))
    return [(path.name.removesuffix(".sql"), path.read_text(encoding="utf-8")) for path in scripts]


MIGRATIONS = _migrations()  # (name, script), oldest first


def statements(script: str) -> list[str]:
    """A script's statements, as ``sqlite3.complete_statement`` ends them (a
    trigger's body holds semicolons of its own)."""
    found, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                found.append(pending.strip())
            pending = ""
    return found

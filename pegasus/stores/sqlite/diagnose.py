"""How an SQLite store stands, for ``pegasus doctor``: its file and folder
writable (or creatable), and every migration applied."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pegasus.config import Settings, data_dir
from pegasus.errors import ConfigError, PegasusError
from pegasus.paths import sqlite_file
from pegasus.stores.base import OK, PROBLEM, WARNING, Diagnosis
from pegasus.stores.sqlite.schema import MIGRATIONS


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def diagnose(store: Any, url: str, settings: Settings) -> Diagnosis:
    """How the SQLite file at ``url`` stands; ``store`` is the SQLite store's class."""
    try:
        text = sqlite_file(url)
    except ConfigError as exc:
        return Diagnosis(PROBLEM, str(exc), "use sqlite:///path/to/memory.db")
    if text == ":memory:":
        return Diagnosis(
            WARNING,
            f"{url}: in memory, so every command starts empty and nothing is kept",
            "use sqlite:///path/to/memory.db to keep memories",
        )
    path = Path(text)
    folder = path.resolve().parent
    redirect = "or point --store / PEGASUS_STORE at another file"
    if not path.exists():
        if folder.is_dir():
            if not _writable(folder):
                return Diagnosis(
                    PROBLEM,
                    f"{url}: the folder {folder} is not writable",
                    f"make it writable {redirect}",
                )
            return Diagnosis(OK, f"{path} does not exist yet: created on first use")
        if folder == data_dir().resolve():  # the default place: made on first use
            above = _nearest_existing(folder)
            if not _writable(above):
                return Diagnosis(
                    PROBLEM,
                    f"{url}: cannot create {folder}: {above} is not writable",
                    f"make {above} writable {redirect}",
                )
            message = f"{path} does not exist yet: created, with its folder, on first use"
            return Diagnosis(OK, message)
        return Diagnosis(
            PROBLEM,
            f"{url}: the folder {folder} does not exist",
            f"create it (mkdir -p {folder}) {redirect}",
        )
    if path.is_dir():
        return Diagnosis(PROBLEM, f"{url}: {path} is a folder", f"name a file {redirect}")
    if not os.access(path, os.R_OK | os.W_OK):
        return Diagnosis(PROBLEM, f"{url}: {path} is read-only", f"make it writable {redirect}")
    if not _writable(folder):
        return Diagnosis(
            PROBLEM,
            f"{url}: the folder {folder} is not writable (SQLite keeps its -wal and -shm files "
            "beside the database)",
            f"make it writable {redirect}",
        )
    try:
        opened = store.from_url(url, settings)  # pending migrations applied, as always
    except PegasusError as exc:
        return Diagnosis(
            PROBLEM,
            str(exc),
            f"if it is not a Pegasus store (or is damaged), restore a backup {redirect}",
        )
    try:
        applied = opened.applied_migrations()
    finally:
        opened.close()
    expected = [name for name, _ in MIGRATIONS]
    missing = [name for name in expected if name not in applied]
    details = {"path": str(path), "bytes": path.stat().st_size, "migrations": applied}
    if missing:
        return Diagnosis(
            PROBLEM,
            f"{path}: migrations not applied: {', '.join(missing)}",
            "check that the file is writable and not held by another program",
            details,
        )
    size = path.stat().st_size
    return Diagnosis(
        OK,
        f"{path}: {size / 1e6:.1f} MB, migrations applied ({len(applied)} of {len(expected)}), "
        "folder writable",
        details=details,
    )

"""Where Pegasus keeps its files on this machine, and where its service listens
unless told otherwise. Light on purpose: the command line and the hook commands read
these paths before anything heavy is imported."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import platformdirs

from pegasus.errors import ConfigError

APP_NAME = "pegasus"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765  # ``pegasus serve``'s address
DEFAULT_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME))


def config_file() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.env"


def service_file() -> Path:
    """Where a running ``pegasus serve`` says where it answers (removed on a clean stop)."""
    return data_dir() / "service.json"


def jobs_dir() -> Path:
    """Ingest jobs not yet done, a file each: the service's queue, kept across stops."""
    return data_dir() / "jobs"


def sqlite_file(url: str) -> str:
    """The file a ``sqlite:`` URL names, as in SQLAlchemy: sqlite:///relative.db,
    sqlite:////absolute.db, sqlite:///:memory: for a store that vanishes with the
    process. A URL with a host, or with no file, is refused."""
    example = ("use sqlite:///relative/memory.db or sqlite:////absolute/memory.db "
               "(sqlite:///:memory: for a store that vanishes when the process ends)")  # fmt: skip
    host, slash, path = url[len("sqlite://") :].partition("/")
    if host and url.lower().startswith("sqlite://"):
        raise ConfigError(f"{url!r}: an SQLite store has no host ({host!r}); {example}")
    if not url.lower().startswith("sqlite://") or not slash or not path.strip():
        raise ConfigError(f"{url!r} names no file: {example}")
    return path if path == ":memory:" else str(Path(path).expanduser())


UNSAFE_IN_NAMES = re.compile(r"[^A-Za-z0-9_-]+")


def file_name(ident: str, suffix: str) -> str:
    """A file name for an id given from outside (a conversation id): letters, digits,
    ``-`` and ``_`` as they are, and a digest of the id where anything else was, so
    that no id names a path outside its folder and two ids never share a file."""
    safe = UNSAFE_IN_NAMES.sub("_", ident)[:80].strip("_") or "_"
    if safe != ident.lower():  # "Chat" and "chat" are one file where case is ignored
        safe += "-" + hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return safe + suffix

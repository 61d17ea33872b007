"""Where Pegasus keeps its files on this machine, and where its service listens
unless told otherwise. Light on purpose: the command line and the hook commands read
these paths before anything heavy is imported."""

from __future__ import annotations

from pathlib import Path

import platformdirs

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

"""A running memory service, from the command line: found through ``PEGASUS_URL`` or
the file ``pegasus serve`` writes, and called with the standard library alone, so
that a command that only asks the service starts in a fraction of a second."""

from __future__ import annotations

import errno
import json
import os
import urllib.parse
import uuid
from http.client import HTTPConnection, HTTPException, HTTPSConnection
from pathlib import Path
from typing import Any

from pegasus import errors
from pegasus.paths import jobs_dir, service_file, sqlite_file

TIMEOUT_SECONDS = 30.0
# HTTP status -> the error a local call would have raised (the statuses are the tree's).
ERRORS: dict[int, type[errors.PegasusError]] = {
    error.http_status: error
    for error in (errors.ValidationError, errors.AuthError, errors.NotFoundError,
                  errors.LLMError, errors.StoreError, errors.TooLargeError,
                  errors.DiskFullError, errors.ForeignHostError)
}  # fmt: skip


def ingest_job(
    user: str, transcript: Any, conversation_id: str | None, now: str | None = None
) -> dict[str, Any]:
    """An ingest job as the service's queue keeps it: the transcript as given, ``now``
    as ISO text or None."""
    return {"id": uuid.uuid4().hex, "user": user, "transcript": transcript,
            "conversation_id": conversation_id, "now": now}  # fmt: skip


def queue_ingest(job: dict[str, Any], folder: Path | None = None) -> Path:
    """Writes an ingest job (:func:`ingest_job`) where the service picks it up on its
    next start; written whole or not at all."""
    folder = folder or jobs_dir()
    path = folder / f"{job['id']}.json"
    partial = path.with_suffix(f".{uuid.uuid4().hex[:8]}.partial")  # writers never share one
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(job), encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        error = errors.DiskFullError if full else errors.PegasusError
        raise error(f"cannot keep the session in {folder}: {exc.strerror or exc}") from exc
    return path


def kept_jobs(folder: Path | None = None) -> list[dict[str, Any]]:
    """The ingest jobs kept on disk, oldest first, as ``id``, ``user``,
    ``conversation_id``, ``state`` and ``why``, read without the service: a job
    never run has the state ``queued``."""
    folder = folder or jobs_dir()
    found = []
    paths = folder.glob("*.json") if folder.is_dir() else []
    for path in sorted(paths, key=lambda p: p.stat().st_mtime):
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # being written, or unreadable: the service sets it aside
        status = spec.get("status") or {}
        transcript = spec.get("transcript")
        said_id = transcript.get("id") if isinstance(transcript, dict) else None
        found.append({"id": spec.get("id", path.stem), "user": spec.get("user"),
                      "conversation_id": spec.get("conversation_id") or said_id,
                      "state": status.get("state", "queued"),
                      "why": status.get("waiting_for") or status.get("error")})  # fmt: skip
    return found


def store_key(url: str) -> str | None:
    """What names a store whoever opens it: an SQLite file's absolute path, a Neo4j
    server's host and port (no credentials); None for a store in memory, which no
    other process shares."""
    scheme = url.partition(":")[0].lower()
    if scheme == "sqlite":
        try:
            path = sqlite_file(url)
        except errors.ConfigError:
            return None  # opening it says what is wrong
        return None if path == ":memory:" else f"sqlite:{Path(path).resolve()}"
    target = urllib.parse.urlsplit(url)
    try:
        port = target.port or 7687
    except ValueError:
        return None
    host = (target.hostname or "localhost").lower()
    return f"neo4j:{'127.0.0.1' if host in ('localhost', '::1') else host}:{port}"


def running_service() -> dict[str, Any] | None:
    """What a running ``pegasus serve`` wrote about itself (``url``, ``pid``, ``store``)."""
    try:
        found = json.loads(service_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("url"), str) else None


def service_url() -> str | None:
    """``PEGASUS_URL``, else the URL a running ``pegasus serve`` wrote, else None."""
    if os.environ.get("PEGASUS_URL"):
        return os.environ["PEGASUS_URL"].rstrip("/")
    found = running_service()
    return found["url"] if found else None


def service_for(store: str | None) -> str | None:
    """The running service to ask instead of opening ``store`` in this process: with
    no store named, the one there is; with one, only a service holding that store
    (its ``service.json``, or its ``/health`` for one named by ``PEGASUS_URL``)."""
    url = service_url()
    if url is None or store is None:
        return url
    wanted = store_key(store)
    found = running_service()
    if found is not None and found["url"] == url:
        return url if wanted is not None and found.get("store") == wanted else None
    try:
        health = call(url, "/health", timeout=2.0)
    except errors.PegasusError:
        return None
    return url if health and wanted is not None and health.get("store_key") == wanted else None


def call(
    url: str,
    path: str,
    body: dict[str, Any] | None = None,
    query: dict[str, str] | None = None,
    timeout: float = TIMEOUT_SECONDS,
    method: str | None = None,
) -> Any:
    """POST ``body`` (GET without one, or ``method``) to the service; None when nothing
    answers there
    (the caller then works in-process). An answer with an error raises the error it
    names. ``http.client`` rather than ``urllib.request``: a third of the import time,
    which a hook pays on every prompt."""
    target = urllib.parse.urlsplit(url)
    connection_class = HTTPSConnection if target.scheme == "https" else HTTPConnection
    headers = {"Content-Type": "application/json"}
    if os.environ.get("PEGASUS_TOKEN"):
        headers["Authorization"] = f"Bearer {os.environ['PEGASUS_TOKEN']}"
    where = target.path.rstrip("/") + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
    connection = connection_class(target.netloc, timeout=timeout)
    try:
        connection.request(method or ("GET" if body is None else "POST"), where,
                           None if body is None else json.dumps(body), headers)  # fmt: skip
        answer = connection.getresponse()
        payload = answer.read()
    except (OSError, HTTPException):  # refused, unreachable, timed out, not HTTP
        return None
    finally:
        connection.close()
    if answer.status >= 400:
        try:
            message = json.loads(payload)["error"]
        except (ValueError, KeyError, TypeError):
            message = f"the memory service at {url} answered {answer.status}"
        raise ERRORS.get(answer.status, errors.PegasusError)(message)
    return json.loads(payload)

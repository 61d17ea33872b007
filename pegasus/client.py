"""A running memory service, from the command line: found through ``PEGASUS_URL`` or
the file ``pegasus serve`` writes, and called with the standard library alone, so
that a command that only asks the service starts in a fraction of a second."""

from __future__ import annotations

import json
import os
import urllib.parse
import uuid
from http.client import HTTPConnection, HTTPException, HTTPSConnection
from pathlib import Path
from typing import Any

from pegasus import errors
from pegasus.paths import jobs_dir, service_file

TIMEOUT_SECONDS = 30.0
# HTTP status -> the error a local call would have raised (the statuses are the tree's).
ERRORS: dict[int, type[errors.PegasusError]] = {
    error.http_status: error
    for error in (errors.ValidationError, errors.AuthError, errors.NotFoundError,
                  errors.LLMError, errors.StoreError)
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
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{job['id']}.json"
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(job), encoding="utf-8")
    os.replace(partial, path)
    return path


def service_url() -> str | None:
    """``PEGASUS_URL``, else the URL a running ``pegasus serve`` wrote, else None."""
    if os.environ.get("PEGASUS_URL"):
        return os.environ["PEGASUS_URL"].rstrip("/")
    try:
        return json.loads(service_file().read_text(encoding="utf-8"))["url"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def call(
    url: str,
    path: str,
    body: dict[str, Any] | None = None,
    query: dict[str, str] | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> Any:
    """POST ``body`` (GET without one) to the service; None when nothing answers there
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
        connection.request("GET" if body is None else "POST", where,
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

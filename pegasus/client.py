"""A running memory service, from the command line: found through ``PEGASUS_URL`` or
the file ``pegasus serve`` writes, and called with the standard library alone, so
that a command that only asks the service starts in a fraction of a second."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from pegasus import errors

APP_NAME = "pegasus"
TIMEOUT_SECONDS = 30.0
# HTTP status -> the error a local call would have raised (the statuses are the tree's).
ERRORS: dict[int, type[errors.PegasusError]] = {
    error.http_status: error
    for error in (errors.ValidationError, errors.AuthError, errors.NotFoundError,
                  errors.LLMError, errors.StoreError)
}  # fmt: skip


def service_url() -> str | None:
    """``PEGASUS_URL``, else the URL a running ``pegasus serve`` wrote, else None."""
    if os.environ.get("PEGASUS_URL"):
        return os.environ["PEGASUS_URL"].rstrip("/")
    import platformdirs

    found = Path(platformdirs.user_data_dir(APP_NAME)) / "service.json"
    try:
        return json.loads(found.read_text(encoding="utf-8"))["url"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def call(url: str, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """POST ``body`` to the service; None when nothing answers there (the caller then
    works in-process). An answer with an error raises the error it names."""
    request = urllib.request.Request(
        f"{url}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}
        | ({"Authorization": f"Bearer {os.environ['PEGASUS_TOKEN']}"}
           if os.environ.get("PEGASUS_TOKEN") else {}),
        method="POST",
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read())["error"]
        except (ValueError, KeyError, TypeError):
            message = f"the memory service at {url} answered {exc.code}"
        raise ERRORS.get(exc.code, errors.PegasusError)(message) from exc
    except (urllib.error.URLError, OSError):
        return None

"""Headless Chromium for the page tests (make test installs Debian's chromium)."""

from __future__ import annotations

import os
import shutil

import pytest


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    message = "no headless Chromium (make test installs Debian's chromium)"
    if os.environ.get("PEGASUS_REQUIRE_BROWSER") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)

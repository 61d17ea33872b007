"""Run the real ``pegasus`` entry point in-process and capture what it prints."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

from pegasus.cli.app import main


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    capsys.readouterr()
    argv = sys.argv
    sys.argv = ["pegasus", *args]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = argv
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)

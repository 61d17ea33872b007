"""``pegasus doctor``: what is set up, what is missing, and what to do about it.

The checks live in :mod:`pegasus.doctor`, imported when the command runs, so that
other commands start without them."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from pegasus.doctor import Check

out = Console(highlight=False, soft_wrap=True)
COLOURS = {"ok": "green", "warning": "yellow", "problem": "red"}


def _line(check: Check) -> str:
    status = f"[{COLOURS[check.status]}]{check.status:<8}[/]"
    text = f"{status} {check.name:<10} {escape(check.message)}"
    return text + (f" [bold]->[/bold] {escape(check.fix)}" if check.fix else "")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"


def doctor(
    ctx: typer.Context,
    llm: Annotated[
        bool, typer.Option("--llm", help="Also send the language model one short request.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The checks as one JSON object.")] = False,
) -> None:
    """Check the settings, the store, the embedding model, the language model and Neo4j,
    and say what to fix. Exits 1 if anything is a problem."""
    from pegasus.doctor import PROBLEM, WARNING, run_checks

    checks = []
    for check in run_checks(ctx.obj.store, ctx.obj.user, llm):
        checks.append(check)
        if not as_json:
            out.print(_line(check))
    problems = sum(check.status == PROBLEM for check in checks)
    warnings = sum(check.status == WARNING for check in checks)
    if as_json:
        report = {
            "ok": not problems,
            "problems": problems,
            "warnings": warnings,
            "checks": [asdict(check) for check in checks],
        }
        typer.echo(json.dumps(report, indent=2, default=str))
    elif problems:
        found = _count(problems, "problem") + (
            f", {_count(warnings, 'warning')}" if warnings else ""
        )
        out.print(f"not ready: {found}")
    else:
        out.print(
            f"ready, with {_count(warnings, 'warning')}" if warnings else "everything is ready"
        )
    if problems:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)

"""``pegasus ingest``: a finished conversation through the write path, and
``pegasus review``: the merges it made that deserve a look."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pegasus.cli.common import parse_when, summary_lines

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def ingest(
    ctx: typer.Context,
    file: Annotated[
        Path, typer.Argument(help="Transcript JSON: [{role, content}] or {id, turns}.")
    ],
    conversation_id: Annotated[
        str | None, typer.Option(help="Id for the conversation (default: the file's own id).")
    ] = None,
    now: Annotated[
        str | None, typer.Option(help="Treat as now (dates undated transcripts).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Extract a conversation into the memory. Safe to repeat; resumes if interrupted."""
    memory = ctx.obj.memory
    with err.status("ingesting") as status:
        report = memory.ingest(
            file,
            conversation_id=conversation_id,
            now=parse_when(now),
            progress=lambda text: status.update(f"ingesting: {text}"),
        )
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        for line in summary_lines(report):
            out.print(line)


def review(ctx: typer.Context) -> None:
    """List the merges made at 0.70 to 0.90 review confidence, to check by hand."""
    flagged = ctx.obj.memory.flagged_merges()
    if not flagged:
        out.print("no flagged merges")
    for line in flagged:
        out.print(line)


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("review")(review)

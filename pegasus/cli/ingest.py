"""``pegasus ingest``: a finished conversation through the write path, and
``pegasus review``: the merges it made that deserve a look."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pegasus.cli.recall import parse_when
from pegasus.write.pipeline import IngestReport

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def summary_lines(report: IngestReport) -> list[str]:
    if report.unchanged:
        return [f"{report.conversation_id}: already ingested ({report.turns} turns), nothing new"]
    counts = [
        (len(report.created), "entities created"),
        (len(report.merged), "merged into known ones"),
        (len(report.relations_added), "relations added"),
        (len(report.reinforced), "reinforced"),
        (len(report.superseded), "superseded"),
        (len(report.flagged), "merges flagged for review"),
        (len(report.dropped), "notes"),
    ]
    lines = [
        f"{report.conversation_id}: {report.new_turns} new turns",
        "  " + ", ".join(f"{count} {label}" for count, label in counts),
    ]
    lines += [f"  merged {form!r} into {node}" for form, node in report.merged]
    lines += [f"  flagged: {line}" for line in report.flagged]
    lines += [f"  note: {line}" for line in report.dropped]
    return lines


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
        typer.echo(json.dumps(vars(report), ensure_ascii=False, indent=2))
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

"""``pegasus import`` and ``pegasus export``: the interchange format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

out = Console()
err = Console(stderr=True)


def import_(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="An interchange JSON file (nodes and edges).")],
    index: Annotated[
        bool, typer.Option(help="Embed names and relations for recall (loads the model).")
    ] = True,
) -> None:
    """Import a graph file, all or nothing: one bad part and nothing is written."""
    memory = ctx.obj.memory
    with err.status(f"importing {file}" + (" and embedding its names" if index else "")):
        graph = memory.import_file(file, index=index)
    out.print(
        f"imported {len(graph.nodes)} nodes and {len(graph.edges)} edges "
        f"into {memory.user!r}", highlight=False,
    )  # fmt: skip


def export(
    ctx: typer.Context,
    file: Annotated[
        Path | None, typer.Argument(help="Where to write; standard output when left out.")
    ] = None,
) -> None:
    """Export the whole memory (every field) in the interchange format."""
    text = ctx.obj.memory.export_json()
    if file is None:
        typer.echo(text, nl=False)
    else:
        file.write_text(text, encoding="utf-8")


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
    app.command("export")(export)

"""``pegasus import`` and ``pegasus export``: the interchange format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pegasus.errors import PegasusError

out = Console()
err = Console(stderr=True)


def import_(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="An interchange JSON file (nodes and edges).")],
    index: Annotated[
        bool, typer.Option(help="Embed names and relations for recall (loads the model).")
    ] = True,
) -> None:
    """Import a graph file, all or nothing: one bad part and nothing is written. Ids the
    memory already holds are merged (aliases, conversations kept), never replaced."""
    memory = ctx.obj.memory
    with err.status(f"importing {file}" + (" and embedding its names" if index else "")):
        report = memory.import_file(file, index=index)
    merged = (
        f" ({report.merged_nodes} nodes and {report.merged_edges} edges merged into "
        "the ones stored)"
        if report.merged_nodes or report.merged_edges
        else ""
    )
    out.print(f"imported {report.nodes} nodes and {report.edges} edges into {memory.user!r}"
              + merged, highlight=False)  # fmt: skip
    if report.vectors_of:
        out.print(f"embedded the names again: the file's vectors are of {report.vectors_of}, "
                  f"not of this memory's {memory.embedder.name!r}", highlight=False)  # fmt: skip
    if report.self_kept:
        out.print(f"kept {report.self_kept} as the user's own node (the file names another)",
                  highlight=False)  # fmt: skip


def export(
    ctx: typer.Context,
    file: Annotated[
        Path | None, typer.Argument(help="Where to write; standard output when left out.")
    ] = None,
    vectors: Annotated[
        bool, typer.Option(help="Carry the keys' vectors: an import on one model embeds nothing.")
    ] = False,
) -> None:
    """Export the whole memory (every field) in the interchange format."""
    text = ctx.obj.memory.export_json(vectors)
    if file is None:
        typer.echo(text, nl=False)
    else:
        try:
            file.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise PegasusError(f"cannot write {file}: {exc.strerror or exc}") from exc


def reindex(ctx: typer.Context) -> None:
    """Rebuild the embedding keys from the graph: embed names recall cannot find yet and
    drop keys of names that are gone (after an import with --no-index, or an
    interrupted one)."""
    with err.status("embedding names"):
        added, removed = ctx.obj.memory.sync_keys()
    out.print(f"{added} keys added, {removed} removed", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
    app.command("reindex")(reindex)
    app.command("export")(export)

"""``pegasus demo``: the sample memory in a throwaway embedded store, offline."""

from __future__ import annotations

import tempfile
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pegasus.cli.inspect import stats_table
from pegasus.memory import Memory

out = Console()


def sample_graph() -> Path:
    return Path(str(resources.files("pegasus.data") / "graph.json"))


def demo(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(help="Store to use instead of a temporary embedded one."),
    ] = None,
) -> None:
    """Load the sample memory (Trevor's career conversation) and show what it holds."""
    with tempfile.TemporaryDirectory(prefix="pegasus-demo-") as tmp:
        url = store or ctx.obj.store or f"sqlite:///{Path(tmp) / 'demo.db'}"
        with Memory(url, user=ctx.obj.user) as memory:
            graph = memory.import_file(sample_graph())
            out.print(
                f"[bold]Imported the sample memory[/bold]: {len(graph.nodes)} nodes, "
                f"{len(graph.edges)} edges into {url}"
            )
            out.print(stats_table(memory.stats()))


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)

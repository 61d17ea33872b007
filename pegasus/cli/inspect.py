"""``pegasus stats``: what the memory holds."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from pegasus.stores import Stats

out = Console()


def stats_table(stats: Stats) -> Table:
    table = Table(title="memory", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for label, value in (
        ("nodes", stats.nodes),
        ("edges", stats.edges),
        ("conversations", stats.conversations),
        ("dormant edges", stats.dormant),
        ("superseded edges", stats.superseded),
        ("expired edges", stats.expired),
    ):
        table.add_row(label, str(value))
    for kind, count in sorted(stats.nodes_by_kind.items()):
        table.add_row(f"  {kind}", str(count))
    top = sorted(stats.edges_by_relation.items(), key=lambda item: (-item[1], item[0]))
    for relation, count in top[:15]:
        table.add_row(f"  {relation}", str(count))
    return table


def stats(ctx: typer.Context) -> None:
    """Counts by kind and relation, and how many edges are dormant, superseded or expired."""
    memory = ctx.obj.memory
    out.print(f"store: {memory.settings.store_url()}  user: {memory.user}", highlight=False)
    out.print(stats_table(memory.stats()))
    flagged = memory.flagged_merges()
    if flagged:
        out.print(f"{len(flagged)} merges flagged for a look: pegasus review", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("stats")(stats)

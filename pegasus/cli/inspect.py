"""``pegasus stats``, ``show`` and ``forget``: what the memory holds, and removing
parts of it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pegasus.errors import ValidationError
from pegasus.model import Edge, utcnow
from pegasus.stores import Stats
from pegasus.time.decay import DORMANT_BELOW, strength_at

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
    """Counts by kind and relation; dormant, superseded and expired edges; the strongest
    and faintest memories; flagged merges."""
    memory = ctx.obj.memory
    out.print(f"store: {memory.settings.store_url()}  user: {memory.user}", highlight=False)
    out.print(stats_table(memory.stats()))
    now = utcnow()
    for title, strongest in (("strongest memories", True), ("faintest memories", False)):
        edges = memory.store.ranked_edges(memory.user, strongest)
        if edges:
            ends = {e.source for e in edges} | {e.target for e in edges}
            names = {n.id: n.name for n in memory.store.get_nodes(memory.user, ends)}
            out.print(f"[bold]{title}[/bold]")
            for edge in edges:
                out.print("  " + _edge_line(edge, names, now).split("\n")[0], highlight=False)
    flagged = memory.flagged_merges()
    if flagged:
        out.print(f"{len(flagged)} merges flagged for a look: pegasus review", highlight=False)


def _edge_line(edge: Edge, names: dict[str, str], now: datetime) -> str:
    source, target = names.get(edge.source, edge.source), names.get(edge.target, edge.target)
    strength = strength_at(edge.strength0, edge.touched_at, edge.stability, now)
    state = []
    if edge.superseded_by:
        state.append(f"superseded by {edge.superseded_by}")
    if edge.dormant or strength < DORMANT_BELOW:
        state.append("dormant")
    if edge.expired or (edge.expires_at and edge.expires_at <= now):
        state.append("expired")
    return (
        f"{source} -[{edge.relation}]-> {target}  strength {strength:.1f}, {edge.stability.value}, "
        f"heard {edge.created_at:%Y-%m-%d}, last {edge.touched_at:%Y-%m-%d}"
        + (f"  ({'; '.join(state)})" if state else "")
        + f'\n    "{edge.snippet}"'
    )


def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="An entity's name, alias or id.")],
) -> None:
    """An entity: aliases, properties, and every claim at it with strength, dates and
    snippet, history included."""
    memory = ctx.obj.memory
    now = utcnow()
    for node, edges in memory.describe(name):
        out.print(f"[bold]{node.name}[/bold] ({node.kind.value}) {node.id}", highlight=False)
        if node.aliases:
            out.print(f"  also: {', '.join(node.aliases)}", highlight=False)
        for key, value in sorted(node.properties.items()):
            out.print(f"  {key}: {value}", highlight=False)
        out.print(f"  confidence {node.confidence:.2f}; conversations: "
                  f"{', '.join(node.conversations) or 'none'}"
                  + ("; provisional" if node.provisional else ""), highlight=False)  # fmt: skip
        ends = {e.source for e in edges} | {e.target for e in edges}
        names = {n.id: n.name for n in memory.store.get_nodes(memory.user, ends)}
        ordered = sorted(edges, key=lambda e: (not e.live, -e.strength, e.id))
        for edge in ordered:
            out.print("  " + _edge_line(edge, names, now), highlight=False)
        if not edges:
            out.print("  no claims", highlight=False)


def forget(
    ctx: typer.Context,
    target: Annotated[
        str, typer.Argument(help="Entity name or id (or an edge / conversation id).")
    ],
    edge: Annotated[bool, typer.Option("--edge", help="TARGET is an edge id.")] = False,
    conversation: Annotated[
        bool, typer.Option("--conversation", help="TARGET is a conversation id.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Remove an entity with what only it held up, one claim, or everything a
    conversation contributed. Nothing else is touched."""
    memory = ctx.obj.memory
    if edge and conversation:
        raise ValidationError("choose --edge or --conversation, not both")
    plan = memory.plan_forget(
        node=None if edge or conversation else target,
        edge=target if edge else None,
        conversation=target if conversation else None,
    )
    lines = [f"delete entity {n}" for n in plan.nodes] + [f"delete claim {e}" for e in plan.edges]
    lines += [f"update entity {n.id} (drop the citation)" for n in plan.nodes_changed]
    lines += [f"update claim {e.id}" for e in plan.edges_changed]
    if plan.conversation:
        lines.append(f"delete conversation record {plan.conversation}")
    for line in lines:
        out.print(line, highlight=False)
    if not yes and not typer.confirm(f"Forget this ({len(lines)} changes)?", default=False):
        raise typer.Abort()
    memory.forget(plan)
    out.print("forgotten", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("stats")(stats)
    app.command("show")(show)
    app.command("forget")(forget)

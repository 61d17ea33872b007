"""``pegasus stats``, ``show`` and ``forget``: what the memory holds, and removing
parts of it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from pegasus.cli.common import claim_line, stats_table
from pegasus.errors import ValidationError

out = Console()


def stats(ctx: typer.Context) -> None:
    """Counts by kind and relation; dormant, superseded and expired edges; the strongest
    and faintest memories; flagged merges."""
    memory = ctx.obj.memory
    out.print(f"store: {memory.settings.store_url()}  user: {memory.user}", highlight=False)
    out.print(stats_table(memory.stats()))
    for title, strongest in (("strongest memories", True), ("faintest memories", False)):
        claims = memory.ranked(strongest)
        if claims:
            out.print(f"[bold]{title}[/bold]")
            for claim in claims:
                out.print("  " + claim_line(claim).split("\n")[0], highlight=False)
    flagged = memory.flagged_merges()
    if flagged:
        out.print(f"{len(flagged)} merges flagged for a look: pegasus review", highlight=False)


def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="An entity's name, alias or id.")],
) -> None:
    """An entity: aliases, properties, and every claim at it with strength, dates and
    snippet, history included."""
    for description in ctx.obj.memory.describe(name):
        node = description.node
        out.print(f"[bold]{node.name}[/bold] ({node.kind.value}) {node.id}", highlight=False)
        if node.aliases:
            out.print(f"  also: {', '.join(node.aliases)}", highlight=False)
        for key, value in sorted(node.properties.items()):
            out.print(f"  {key}: {value}", highlight=False)
        out.print(f"  confidence {node.confidence:.2f}; conversations: "
                  f"{', '.join(node.conversations) or 'none'}"
                  + ("; provisional" if node.provisional else ""), highlight=False)  # fmt: skip
        ordered = sorted(
            description.claims, key=lambda c: (c.state != "live", -c.strength, c.edge.id)
        )
        for claim in ordered:
            out.print("  " + claim_line(claim), highlight=False)
        if not ordered:
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

"""``pegasus decay`` (one pass now) and ``pegasus scheduler`` (the daily daemon)."""

from __future__ import annotations

from typing import Annotated

import typer

from pegasus.cli.recall import parse_when


def decay(
    ctx: typer.Context,
    now: Annotated[str | None, typer.Option(help="Decay as of this ISO time.")] = None,
    all_users: Annotated[bool, typer.Option(help="Every memory owner in the store.")] = False,
) -> None:
    """Recompute every edge's strength; mark dormant and expired edges."""
    report = ctx.obj.memory.decay(parse_when(now), all_users=all_users)
    typer.echo(f"decayed {report.edges} edges: {report.dormant} dormant, {report.expired} expired")


def register(app: typer.Typer) -> None:
    app.command("decay")(decay)

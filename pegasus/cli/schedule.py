"""``pegasus decay`` (one pass now) and ``pegasus scheduler`` (the daily daemon)."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from pegasus.cli.common import parse_when
from pegasus.errors import ValidationError


def decay(
    ctx: typer.Context,
    now: Annotated[str | None, typer.Option(help="Decay as of this ISO time.")] = None,
    all_users: Annotated[bool, typer.Option(help="Every memory owner in the store.")] = False,
) -> None:
    """Recompute every edge's strength; mark dormant and expired edges."""
    memory = ctx.obj.memory
    when = parse_when(now)
    report = memory.core.decay(when) if all_users else memory.decay(when)
    typer.echo(f"decayed {report.edges} edges: {report.dormant} dormant, {report.expired} expired")


def scheduler(
    ctx: typer.Context,
    at: Annotated[str, typer.Option(help="Time of day for the daily pass (HH:MM).")] = "03:00",
    timezone: Annotated[str, typer.Option(help="Time zone of --at.")] = "UTC",
    all_users: Annotated[bool, typer.Option(help="Every memory owner in the store.")] = True,
) -> None:
    """Run the decay pass now, then daily, until stopped (SIGTERM or Ctrl-C)."""
    from pegasus.time.scheduler import parse_clock, run_daily

    try:
        when = parse_clock(at)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    memory = ctx.obj.memory
    run_daily(memory.core.decay if all_users else memory.decay, when, timezone)


def register(app: typer.Typer) -> None:
    app.command("decay")(decay)
    app.command("scheduler")(scheduler)

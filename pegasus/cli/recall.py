"""``pegasus recall`` and ``pegasus close``: the read path from the shell, through a
running memory service when there is one (see :meth:`Context.service`)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from pegasus.cli.common import parse_when
from pegasus.client import call
from pegasus.errors import ValidationError
from pegasus.recall.presets import PRESETS


def recall(
    ctx: typer.Context,
    message: Annotated[str, typer.Argument(help="The user's message, or - to read one per line.")],
    conversation_id: Annotated[
        str | None, typer.Option(help="Note the edges used, for reinforcement on close.")
    ] = None,
    now: Annotated[str | None, typer.Option(help="Recall as of this ISO time.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per message.")] = False,
    preset: Annotated[
        str, typer.Option(help=f"Recall settings: {', '.join(PRESETS)}.")
    ] = "default",
    why_not: Annotated[
        str | None,
        typer.Option("--why-not", help="Say which step kept this entity (name or id) out."),
    ] = None,
) -> None:
    """Print the memory block to inject for a message (empty when nothing is relevant)."""
    if preset not in PRESETS:
        raise ValidationError(f"unknown preset {preset!r}: choose one of {', '.join(PRESETS)}")
    when = parse_when(now)
    if why_not is not None:
        memory = ctx.obj.memory
        typer.echo(memory.recaller(PRESETS[preset]).why_not(memory.user, message, why_not, when))
        return
    service = ctx.obj.service()
    many = message == "-"
    lines = (line.rstrip("\n") for line in sys.stdin) if many else iter([message])
    warm = False
    for line in lines:
        if many and not line.strip():
            continue
        body = {"user": ctx.obj.user, "message": line, "conversation_id": conversation_id,
                "now": when.isoformat() if when else None, "preset": preset}  # fmt: skip
        answer = call(service, "/recall", body) if service else None
        if answer is None:  # no service, or it stopped answering: recall here
            service = None
            if many and not warm:  # a process that lives on reads what makes recall fast
                ctx.obj.memory.core.warm(ctx.obj.memory.user)
                warm = True
            result = ctx.obj.memory.recall(line, conversation_id, when, PRESETS[preset])
            answer = result.model_dump(mode="json")
        if as_json:
            typer.echo(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))
        else:
            typer.echo(answer["text"])
        sys.stdout.flush()


def close(
    ctx: typer.Context,
    conversation_id: Annotated[str, typer.Argument(help="The conversation to close.")],
    now: Annotated[str | None, typer.Option(help="Close as of this ISO time.")] = None,
) -> None:
    """Reinforce (once) the memories recall used in a conversation."""
    when = parse_when(now)
    service = ctx.obj.service()
    body = {"user": ctx.obj.user, "conversation_id": conversation_id,
            "now": when.isoformat() if when else None}  # fmt: skip
    answer = call(service, "/close", body) if service else None
    count = answer["reinforced"] if answer else ctx.obj.memory.close_conversation(
        conversation_id, when)  # fmt: skip
    typer.echo(f"reinforced {count} edges used in {conversation_id}")


def register(app: typer.Typer) -> None:
    app.command("recall")(recall)
    app.command("close")(close)

"""``pegasus hooks install|uninstall claude-code|codex``: Pegasus in an assistant's
hook settings (see :mod:`pegasus.integrations.hooks`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pegasus.errors import PegasusError, ValidationError

hooks = typer.Typer(help="Wire recall and remembering into an assistant's hooks.",
                    no_args_is_help=True)  # fmt: skip
TARGETS = ("claude-code", "codex")

Target = Annotated[str, typer.Argument(help="The assistant: claude-code or codex.")]
Scope = Annotated[
    bool,
    typer.Option(
        "--project/--user",
        help="This project's settings (.claude/settings.json, .codex/hooks.json), or yours.",
    ),
]


def _path(target: str, project: bool) -> Path:
    from pegasus.integrations.hooks import settings_path

    if target not in TARGETS:
        raise ValidationError(f"unknown assistant {target!r}: one of {', '.join(TARGETS)}")
    return settings_path(target, Path.cwd() if project else Path.home())


@hooks.command()
def install(
    ctx: typer.Context,
    target: Target,
    project: Scope = False,
    http: Annotated[
        bool,
        typer.Option(
            "--http/--command",
            help="Claude Code: post each prompt to the service (an HTTP hook, no process "
            "started), or run a command as Codex does (older Claude Code).",
        ),
    ] = True,
) -> None:
    """Recall on every prompt (UserPromptSubmit) and remember each session when it ends
    or is compacted (Claude Code: SessionEnd, PreCompact; Codex: Stop after each turn,
    PreCompact). Other hooks in the file are kept."""
    from pegasus.client import call, service_url
    from pegasus.integrations.hooks import install as write
    from pegasus.integrations.hooks import prompt_command
    from pegasus.paths import DEFAULT_URL

    path = _path(target, project)
    url = service_url() or DEFAULT_URL
    http = http and target == "claude-code"
    events = write(path, target, ctx.obj.user, url, http=http)
    typer.echo(f"installed in {path}: {', '.join(events)}")
    if not http and prompt_command(url) is None:
        typer.echo("memory reaches the prompt while `pegasus serve` runs (the hook command "
                   "finds it)")  # fmt: skip
        return
    typer.echo(f"memory reaches the prompt while the service at {url} runs")
    try:
        answers = call(url, "/health", timeout=2.0) is not None
    except PegasusError:  # it answers, with an error: the hook will reach it
        answers = True
    if not answers:
        typer.echo(f"nothing answers at {url} now: start `pegasus serve` there, or install "
                   "again where it runs", err=True)  # fmt: skip


@hooks.command()
def uninstall(target: Target, project: Scope = False) -> None:
    """Remove Pegasus's hooks, and only those."""
    from pegasus.integrations.hooks import uninstall as remove

    path = _path(target, project)
    typer.echo(f"removed {remove(path)} hooks from {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(hooks, name="hooks")

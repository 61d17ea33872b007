"""``pegasus hooks install|uninstall claude-code|codex``: Pegasus in an assistant's
hook settings (see :mod:`pegasus.integrations.hooks`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pegasus.errors import PegasusError, ValidationError

hooks = typer.Typer(help="Wire recall and remembering into an assistant's hooks.",
                    no_args_is_help=True)  # fmt: skip
TARGETS = ("claude-code", "codex")

Target = Annotated[str, typer.Argument(help="The assistant: claude-code or codex.")]
# Only --project: --user names whose memory it is (pegasus --user NAME hooks ...).
Project = Annotated[
    bool,
    typer.Option(
        "--project",
        help="For this project only (Claude Code: .claude/settings.local.json, yours alone; "
        "Codex: .codex/hooks.json), instead of for you everywhere (~/.claude/settings.json, "
        "~/.codex/hooks.json).",
    ),
]


def _paths(target: str, project: bool) -> tuple[Path, Path | None]:
    """The file the hooks go in, and a shared file where they must not be."""
    from pegasus.integrations.hooks import settings_path, shared_settings

    if target not in TARGETS:
        raise ValidationError(f"unknown assistant {target!r}: one of {', '.join(TARGETS)}")
    here = Path.cwd() if project else None
    return settings_path(target, here), shared_settings(target, here)


def _described(hook: dict[str, Any]) -> str:
    if hook.get("type") == "http":
        return f"Claude Code posts it to {hook['url']}"
    return f"runs {hook['command']}"


@hooks.command()
def install(
    ctx: typer.Context,
    target: Target,
    project: Project = False,
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
    PreCompact). Other hooks in the file are kept. Codex's hooks are trusted in your
    ~/.codex/config.toml, as Codex asks before it runs a hook."""
    from pegasus.client import call, service_url
    from pegasus.integrations.codex_trust import codex_config, codex_trusts
    from pegasus.integrations.hooks import install as write
    from pegasus.integrations.hooks import installed, prompt_command, uninstall
    from pegasus.paths import DEFAULT_URL

    path, shared = _paths(target, project)
    url = service_url() or DEFAULT_URL
    http = http and target == "claude-code"
    write(path, target, ctx.obj.user, url, http=http)
    typer.echo(f"wrote to {path}:")
    for event, hook in installed(path):
        typer.echo(f"  {event}: {_described(hook)}")
    if target == "codex":
        typer.echo(f"trusted them in {codex_config()} (Codex runs only the hooks you trust)")
    if target == "codex" and project and not codex_trusts(Path.cwd()):
        typer.echo("Codex reads .codex/ here once you trust this project (it asks when it "
                   "first starts here)")  # fmt: skip
    if shared is not None and (moved := uninstall(shared)):
        typer.echo(f"removed {moved} of Pegasus's hooks from {shared}, which is shared")
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
def uninstall(target: Target, project: Project = False) -> None:
    """Remove Pegasus's hooks, and only those (for Codex, with the trust given them)."""
    from pegasus.integrations.hooks import uninstall as remove

    path, shared = _paths(target, project)
    typer.echo(f"removed {remove(path, target)} hooks from {path}")
    if shared is not None and (moved := remove(shared)):
        typer.echo(f"removed {moved} hooks from {shared}")


def register(app: typer.Typer) -> None:
    app.add_typer(hooks, name="hooks")

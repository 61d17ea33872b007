"""Every command has help text and appears in the README."""

from __future__ import annotations

from pathlib import Path

from pegasus.cli.app import app

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_every_command_has_help_and_docs() -> None:
    names = []
    for command in app.registered_commands:
        name = command.name or command.callback.__name__
        names.append(name)
        assert (command.callback.__doc__ or "").strip(), f"{name} has no help text"
        assert f"pegasus {name}" in README, f"README does not mention 'pegasus {name}'"
    assert {"import", "export", "recall", "close", "decay", "scheduler", "stats", "demo"} <= set(
        names
    )

"""One module per LLM step: its argument or answer models and its prompt text
(kept in a ``.md`` file beside it)."""

from __future__ import annotations

from importlib import resources


def prompt_text(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")

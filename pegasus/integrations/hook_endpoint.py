"""Claude Code's HTTP hook as an endpoint the memory service mounts: its
UserPromptSubmit payload posted as it comes to ``POST /hooks/prompt``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter

from pegasus.integrations.hooks import PROMPT_PATH, as_context, prompt_of
from pegasus.memory import Memory


def prompt_router(memory_of: Callable[[str | None], Memory]) -> APIRouter:
    """The endpoint, recalling from ``memory_of(user)`` (``?user=`` of the hook's URL)."""
    router = APIRouter()

    @router.post(PROMPT_PATH)
    def prompt_posted(payload: dict[str, Any], user: str | None = None) -> dict[str, Any]:
        """Claude Code's UserPromptSubmit hook posted as it comes (an HTTP hook): the
        recall block as the context it adds, or nothing to add."""
        prompt = prompt_of(payload)
        if prompt is None:
            return {}
        session = payload.get("session_id")
        result = memory_of(user).recall(prompt, session if isinstance(session, str) else None)
        return as_context(result.text) if result.text else {}

    return router

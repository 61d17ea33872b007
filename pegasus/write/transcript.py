"""Transcripts in: an OpenAI-style ``[{role, content}]`` list, or
``{"id", "started_at", "ended_at", "turns": [...]}`` (optionally wrapped as
``{"conversation": {...}}``). Only user and assistant turns are kept."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pegasus.errors import PegasusError, ValidationError
from pegasus.model import aware, clean_text

ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Turn:
    role: str
    content: str


@dataclass(frozen=True)
class Transcript:
    id: str
    turns: tuple[Turn, ...]
    started_at: datetime | None = None
    ended_at: datetime | None = None

    @property
    def dated_at(self) -> datetime | None:
        """When its claims were made: the end, else the start (SPEC 3.5)."""
        return self.ended_at or self.started_at

    def prefix_hash(self, count: int) -> str:
        """Fingerprint of the first ``count`` turns: a rerun checks that the part
        already ingested is still the same text."""
        digest = hashlib.sha256()
        for turn in self.turns[:count]:
            digest.update(f"{turn.role}\x00{turn.content}\x00".encode())
        return digest.hexdigest()


def _content(value: Any, where: str) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):  # OpenAI content parts: keep the text ones
        text = "\n".join(
            part.get("text", "")
            for part in value
            if isinstance(part, dict) and part.get("type") in ("text", "input_text")
        )
    elif value is None:
        text = ""
    else:
        raise ValidationError(f"{where}: content must be text or a list of text parts")
    return clean_text(text)


def _when(value: Any, where: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return aware(datetime.fromisoformat(str(value)))
    except ValueError as exc:
        raise ValidationError(f"{where}: {value!r} is not an ISO 8601 time") from exc


def parse_transcript(data: Any, conversation_id: str | None = None) -> Transcript:
    """Check a decoded transcript; raise :class:`ValidationError` naming the first problem."""
    if isinstance(data, dict) and isinstance(data.get("conversation"), dict):
        data = data["conversation"]
    if isinstance(data, list):
        meta: dict[str, Any] = {}
        raw_turns = data
    elif isinstance(data, dict) and isinstance(data.get("turns", data.get("messages")), list):
        meta = data
        raw_turns = data.get("turns", data.get("messages"))
    else:
        raise ValidationError(
            'a transcript is a list of {"role", "content"} turns or an object with "turns"'
        )
    turns: list[Turn] = []
    for index, raw in enumerate(raw_turns):
        where = f"turn {index + 1}"
        if not isinstance(raw, dict) or not isinstance(raw.get("role"), str):
            raise ValidationError(f'{where}: each turn needs a "role" and a "content"')
        if raw["role"] not in ROLES:
            continue  # system prompts and tool traffic are not the user's words
        content = _content(raw.get("content"), where)
        if content:
            turns.append(Turn(raw["role"], content))
    started = _when(meta.get("started_at"), "started_at")
    ended = _when(meta.get("ended_at"), "ended_at")
    ident = conversation_id or meta.get("id")
    if ident is not None and (not isinstance(ident, str) or not ident.strip()):
        raise ValidationError("the conversation id must be non-empty text")
    if not ident:
        # Stable across a growing transcript: derived from its opening turn.
        opening = turns[0].content if turns else ""
        ident = "conv-" + hashlib.sha256(opening.encode()).hexdigest()[:12]
    return Transcript(ident.strip(), tuple(turns), started, ended)


def read_transcript(path: str | Path, conversation_id: str | None = None) -> Transcript:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PegasusError(f"cannot read {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        return parse_transcript(data, conversation_id)
    except ValidationError as exc:
        raise ValidationError(f"{path}: {exc}") from exc

"""Transcripts in: an OpenAI-style ``[{role, content}]`` list, or
``{"id", "started_at", "ended_at", "turns": [...]}`` (optionally wrapped as
``{"conversation": {...}}``).

A conversation among people (the user and friends, a meeting) gives each person's
turns the role ``user`` and the speaker's ``name``, as OpenAI's chat format does:
every person's words are then evidence about themselves, and the extractor is told
who said what.

Every turn is kept, dropped with a note, or refused: user and assistant turns (under
their usual other names too) are kept, system and tool turns are dropped with a note
(they are not the user's words), and any other role refuses the whole transcript
with a message, so that nothing said is lost silently. A turn longer than one
extraction can read is split into parts at paragraph or sentence ends, with a note."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pegasus.errors import PegasusError, TooLargeError, ValidationError
from pegasus.model import MAX_NAME_CHARS, aware, clean_name, clean_text

ROLES = ("user", "assistant")
# Other names clients give the two speakers, and the roles that are not a speaker.
ROLE_NAMES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
              "bot": "assistant", "model": "assistant", "chatbot": "assistant"}  # fmt: skip
NOT_SPOKEN = frozenset({"system", "developer", "tool", "function", "ipython"})
MAX_TURN_CHARS = 24_000  # what one extraction reads of user text
# Bytes of JSON a character of a turn can take (a character beyond the BMP is a
# pair of "\uXXXX" escapes): a file larger than this many times the limit cannot hold
# a transcript within it, and is not read.
BYTES_PER_CHAR = 12


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    speaker: str = ""  # a person's name, when the conversation is among people


@dataclass(frozen=True)
class Transcript:
    id: str
    turns: tuple[Turn, ...]
    started_at: datetime | None = None
    ended_at: datetime | None = None
    notes: tuple[str, ...] = ()  # turns dropped or split on the way in

    @property
    def dated_at(self) -> datetime | None:
        """When its claims were made: the end, else the start (SPEC 3.5)."""
        return self.ended_at or self.started_at

    def prefix_hash(self, count: int) -> str:
        """Fingerprint of the first ``count`` turns: a rerun checks that the part
        already ingested is still the same text."""
        digest = hashlib.sha256()
        for turn in self.turns[:count]:
            who = f"{turn.role}:{turn.speaker}" if turn.speaker else turn.role
            digest.update(f"{who}\x00{turn.content}\x00".encode())
        return digest.hexdigest()


TEXT_PARTS = ("text", "input_text", "output_text")  # content parts that hold words


def _content(value: Any, where: str) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):  # content parts: keep the text ones
        text = "\n".join(
            part["text"]
            for part in value
            if isinstance(part, dict)
            and part.get("type") in TEXT_PARTS
            and isinstance(part.get("text"), str)
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
    notes: list[str] = []
    for index, raw in enumerate(raw_turns):
        where = f"turn {index + 1}"
        if not isinstance(raw, dict) or not isinstance(raw.get("role"), str):
            raise ValidationError(f'{where}: each turn needs a "role" and a "content"')
        role = ROLE_NAMES.get(raw["role"].strip().casefold())
        if role is None:
            if raw["role"].strip().casefold() in NOT_SPOKEN:
                notes.append(f"{where}: a {raw['role'].strip()} turn, not the user's words")
                continue
            raise ValidationError(
                f"{where}: role {raw['role']!r} is neither the user nor the assistant "
                "(user, human, assistant or ai); nothing was ingested"
            )
        # Some clients keep a turn's words under "text" rather than "content".
        content = _content(raw["content"] if raw.get("content") is not None else raw.get("text"),
                           where)  # fmt: skip
        if not content and not (raw.get("tool_calls") or raw.get("function_call")):
            keys = ", ".join(sorted(map(str, raw)))
            notes.append(f"{where}: a {role} turn with no text found in it (keys: {keys}); "
                         "nothing read from it")  # fmt: skip
        speaker = raw.get("name")
        if speaker is not None and not isinstance(speaker, str):
            raise ValidationError(f'{where}: "name" must be the speaker\'s name as text')
        speaker = " ".join(clean_name(speaker or "").replace("[", "(").replace("]", ")").split())
        if len(speaker) > MAX_NAME_CHARS:
            raise ValidationError(
                f"{where}: a speaker's name has at most {MAX_NAME_CHARS} characters"
            )
        parts = split_long(content) if role == "user" else [content]
        if len(parts) > 1:
            notes.append(f"{where}: {len(content):,} characters, read in {len(parts)} parts")
        turns += [Turn(role, part, speaker) for part in parts if part]
    if raw_turns and not turns:
        raise ValidationError("no turn of the user or the assistant has any text")
    started = _when(meta.get("started_at"), "started_at")
    ended = _when(meta.get("ended_at"), "ended_at")
    ident = conversation_id or meta.get("id")
    if ident is not None and (not isinstance(ident, str) or not ident.strip()):
        raise ValidationError("the conversation id must be non-empty text")
    if not ident:
        # Stable across a growing transcript: derived from its opening turn.
        opening = turns[0].content if turns else ""
        ident = "conv-" + hashlib.sha256(opening.encode()).hexdigest()[:12]
    return Transcript(ident.strip(), tuple(turns), started, ended, tuple(notes))


def split_long(text: str, limit: int = MAX_TURN_CHARS) -> list[str]:
    """``text`` in parts of at most ``limit`` characters, cut at the last paragraph,
    line or sentence end that keeps a part at least half full. Linear in the text:
    each cut is looked for in one window, and the rest is never copied."""
    parts: list[str] = []
    start, end = 0, len(text)
    while True:
        while start < end and text[start].isspace():
            start += 1
        if end - start <= limit:
            break
        window = start + limit
        cut = max(text.rfind(mark, start + limit // 2, window) for mark in ("\n\n", "\n", ". "))
        cut = window if cut < 0 else cut + 1
        parts.append(text[start:cut].strip())
        start = cut
    return [*parts, text[start:end].strip()]


def within_limit(transcript: Transcript, limit: int) -> Transcript:
    """``transcript``, unless its turns hold more than ``limit`` characters."""
    size = sum(len(turn.content) for turn in transcript.turns)
    if size > limit:
        raise TooLargeError(f"the transcript holds {size:,} characters, over the limit of "
                            f"{limit:,} (PEGASUS_MAX_TRANSCRIPT_CHARS)")  # fmt: skip
    return transcript


def read_transcript(
    path: str | Path, conversation_id: str | None = None, max_chars: int | None = None
) -> Transcript:
    """The transcript in a JSON file; with ``max_chars``, one too large is refused,
    a file too large to hold one within it before it is read."""
    try:
        size = Path(path).stat().st_size
        if max_chars is not None and size > BYTES_PER_CHAR * max_chars:
            raise TooLargeError(f"{path}: {size:,} bytes, too large for "
                                f"a transcript of {max_chars:,} characters at most "
                                "(PEGASUS_MAX_TRANSCRIPT_CHARS)")  # fmt: skip
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PegasusError(f"cannot read {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        parsed = parse_transcript(data, conversation_id)
    except ValidationError as exc:
        raise ValidationError(f"{path}: {exc}") from exc
    return parsed if max_chars is None else within_limit(parsed, max_chars)

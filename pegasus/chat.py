"""A chat with memory: every user turn is recalled and the block goes into the
system prompt; when the chat ends, the conversation goes through the write path
(which also reinforces what recall used). If the memory fails, the chat goes on
without it and says so once."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from pegasus.errors import PegasusError
from pegasus.llm import LLM
from pegasus.memory import Memory
from pegasus.model import utcnow
from pegasus.paths import file_name
from pegasus.recall.engine import RecallResult
from pegasus.write.pipeline import IngestReport
from pegasus.write.transcript import parse_transcript

log = logging.getLogger(__name__)

SYSTEM = (
    "You are a helpful assistant with a long-term memory of this user. Use what you "
    "remember when it helps, naturally and without reciting it; never invent memories."
)


class ChatSession:
    def __init__(
        self,
        memory: Memory | None,
        llm: LLM,
        conversation_id: str | None = None,
        notice: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.memory, self.llm, self.notice = memory, llm, notice
        self.conversation_id = conversation_id or f"chat-{uuid.uuid4().hex[:12]}"
        self.started_at: datetime = utcnow()
        self.turns: list[dict[str, str]] = []
        self.last: RecallResult | None = None
        self.failure: str | None = None if memory is not None else "no store"
        self._told = False

    def _recall(self, text: str) -> RecallResult | None:
        if self.memory is not None and self.failure is None:
            try:
                return self.memory.recall(text, self.conversation_id)
            except Exception as exc:  # any failure of store or model: chat on without memory
                log.debug("recall failed", exc_info=True)
                self.failure = str(exc)
        if not self._told:
            self._told = True
            self.notice(f"memory unavailable, chatting without it ({self.failure})")
        return None

    def say(self, text: str) -> Iterator[str]:
        """Send a user turn; yields the reply as it streams."""
        self.last = self._recall(text)
        system = SYSTEM
        if self.last is not None and self.last.text:
            system += "\n\nWhat you remember that may matter now:\n" + self.last.text
        self.turns.append({"role": "user", "content": text})
        pieces: list[str] = []
        try:
            for piece in self.llm.stream([{"role": "system", "content": system}, *self.turns]):
                pieces.append(piece)
                yield piece
        finally:
            self.turns.append({"role": "assistant", "content": "".join(pieces)})

    def why(self) -> list[str]:
        """Why each node of the last recall fired: seed words and scores, hop, path."""
        if self.last is None or not self.last.fired:
            return ["nothing was recalled for the last message"]
        lines = [
            f"{fired.name} ({fired.kind}) score {fired.score:.2f}: {fired.why}"
            for fired in self.last.fired
        ]
        for claim in self.last.shown:
            reached = f"reached by {claim.cue}" if claim.cue else "between fired entities"
            about = f", about {claim.about}" if claim.about else ""
            lines.append(f"  {claim.claim}: {reached}, strength {claim.strength:.0f}, "
                         f"said {claim.said}{about}")  # fmt: skip
        return lines

    def transcript(self) -> dict:
        return {
            "id": self.conversation_id,
            "started_at": self.started_at.isoformat(),
            "ended_at": utcnow().isoformat(),
            "turns": self.turns,
        }

    def save(self, folder: Path) -> Path:
        """Keep the transcript as a file, so a failed ingest loses nothing."""
        path = folder / file_name(self.conversation_id, ".json")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.transcript(), ensure_ascii=False, indent=1), "utf-8")
        except OSError as exc:
            raise PegasusError(f"cannot keep the chat in {path}: {exc.strerror or exc}") from exc
        return path

    def end(self) -> IngestReport | None:
        """Ingest what was said (ingestion also closes the conversation); None when
        the memory is unavailable."""
        if self.memory is None or self.failure is not None:
            return None
        return self.memory.ingest(parse_transcript(self.transcript()), llm=self.llm)

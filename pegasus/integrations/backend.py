"""One memory, reached the fastest way there is: the running service when one answers
(no model to load), else this process's own core, loaded once on first use."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from pegasus.client import call, service_for


class Backend:
    """What the MCP tools do, as plain JSON-ready values, for one owner."""

    def __init__(self, user: str, store: str | None = None, local: bool = False) -> None:
        self.user, self._store, self._local = user, store, local
        self._core = None
        self._lock = threading.Lock()

    def _remote(self, path: str, body: dict | None = None, query: dict | None = None) -> Any:
        """The service's answer; None when none runs holding the store named, or when
        told to work here (``local``), the caller then working in this process."""
        url = None if self._local else service_for(self._store)
        return call(url, path, body, query) if url else None

    def _memory(self):  # noqa: ANN202 (pegasus.memory is imported only when needed)
        with self._lock:
            if self._core is None:
                from pegasus.memory import Pegasus

                self._core = Pegasus(self._store)
            return self._core.for_user(self.user)

    def recall(self, message: str, conversation_id: str | None = None) -> dict[str, Any]:
        body = {"user": self.user, "message": message, "conversation_id": conversation_id}
        answer = self._remote("/recall", body)
        if answer is None:
            answer = self._memory().recall(message, conversation_id).model_dump(mode="json")
        return answer

    def remember(self, text: str | list[dict[str, Any]], conversation_id: str | None) -> dict:
        """A statement (the user's words) or a whole transcript, through the write path."""
        turns = [{"role": "user", "content": text}] if isinstance(text, str) else text
        conversation_id = conversation_id or f"mcp-{uuid.uuid4().hex[:12]}"
        body = {"user": self.user, "transcript": turns, "conversation_id": conversation_id}
        answer = self._remote("/ingest", body)
        if answer is None:
            from pegasus.write.transcript import parse_transcript

            report = self._memory().ingest(parse_transcript(turns, conversation_id))
            answer = {"state": "done", "report": report.model_dump(mode="json")}
        return answer

    def forget(self, name: str) -> dict[str, Any]:
        answer = self._remote("/forget", {"user": self.user, "node": name})
        if answer is None:
            memory = self._memory()
            plan = memory.plan_forget(name)
            memory.forget(plan)
            answer = plan.model_dump(mode="json")
        return answer

    def show(self, name: str) -> list[dict[str, Any]]:
        answer = self._remote("/show", query={"user": self.user, "name": name})
        if answer is None:
            answer = [d.model_dump(mode="json") for d in self._memory().describe(name)]
        return answer

    def stats(self) -> dict[str, Any]:
        answer = self._remote("/stats", query={"user": self.user})
        if answer is None:
            answer = self._memory().stats().model_dump(mode="json")
        return answer

    def close(self) -> None:
        if self._core is not None:
            self._core.close()

"""A model server for Claude Code and Codex themselves, at the HTTP boundary: Anthropic's
Messages API and OpenAI's Responses API, both streamed as server-sent events, each
answer from a script. Every request is kept (path and body) for assertions."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The answer to one model request, from its body.
Answer = Callable[[dict[str, Any]], str]


def saying(text: str) -> Answer:
    return lambda body: text


def messages_events(text: str, model: str, used: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Anthropic's stream for one text answer, ``used`` tokens of context."""
    usage = {"input_tokens": used, "output_tokens": 0}
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}  # fmt: skip
    yield "content_block_start", {"type": "content_block_start", "index": 0,
                                  "content_block": {"type": "text", "text": ""}}  # fmt: skip
    for piece in pieces(text):
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": piece}}  # fmt: skip
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": len(text.split())}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}


def responses_events(text: str, model: str, used: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """OpenAI's Responses stream for one text answer, ``used`` tokens of context."""
    item = {"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
    response = {"id": "resp_scripted", "object": "response", "model": model, "output": []}
    yield "response.created", {"type": "response.created",
                               "response": response | {"status": "in_progress"}}  # fmt: skip
    started = item | {"status": "in_progress", "content": []}
    yield "response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                         "item": started}  # fmt: skip
    for piece in pieces(text):
        yield "response.output_text.delta", {"type": "response.output_text.delta",
                                             "item_id": "msg_scripted", "output_index": 0,
                                             "content_index": 0, "delta": piece}  # fmt: skip
    yield "response.output_item.done", {"type": "response.output_item.done",
                                        "output_index": 0, "item": item}  # fmt: skip
    usage = {"input_tokens": used, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": used + 2}  # fmt: skip
    yield "response.completed", {"type": "response.completed", "response": response | {
        "status": "completed", "output": [item], "usage": usage}}  # fmt: skip


def pieces(text: str) -> list[str]:
    """The text in a few chunks, as a real stream sends it."""
    words = text.split(" ")
    return [" ".join(words[:1]), *(" " + word for word in words[1:])]


STREAMS = {"/v1/messages": messages_events, "/v1/responses": responses_events}


class ClientModel:
    """``with ClientModel(answer) as model: ... model.base_url ... model.requests``:
    Claude Code's ``POST /v1/messages`` and Codex's ``POST /v1/responses``, streamed.
    Anything else (a token count, a model list) gets an empty JSON object."""

    def __init__(self, answer: Answer, used: int = 10) -> None:
        self.answer, self.used = answer, used
        self.requests: list[tuple[str, dict[str, Any]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner.requests.append((self.path, {}))
                self._json({"data": [], "models": []})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?")[0]
                owner.requests.append((path, body))
                stream = STREAMS.get(path)
                if stream is None or not body.get("stream"):
                    self._json({"input_tokens": 10} if path.endswith("count_tokens") else {})
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for event, data in stream(owner.answer(body), body.get("model", "m"), owner.used):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

            def _json(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def bodies(self, path: str) -> list[dict[str, Any]]:
        """The bodies of the streamed model requests sent to ``path``."""
        return [body for at, body in self.requests if at == path and body.get("stream")]

    def __enter__(self) -> ClientModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

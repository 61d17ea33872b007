"""A local OpenAI-compatible chat server that answers from a script.

The demo replays the recorded extraction of the sample conversation through it,
and the tests drive the real ``openai`` client against it: tool calls, broken
arguments, errors, slow answers. A *responder* turns each request body into one
:class:`Step`.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    """One answer: tool calls and/or text, or an HTTP error, or raw bytes."""

    tool_calls: list[tuple[str, Any]] = field(default_factory=list)  # (name, args or JSON text)
    content: str = ""
    status: int = 200
    retry_after_ms: int | None = None
    raw: str | None = None  # sent as the body instead of a completion
    sleep: float = 0.0  # seconds to wait before answering


Responder = Callable[[dict[str, Any]], Step]


def sequence(steps: Sequence[Step], then: Step | None = None) -> Responder:
    """Answer with ``steps`` in order, then with ``then`` (default: a bare stop)."""
    queue = list(steps)
    lock = threading.Lock()

    def respond(_: dict[str, Any]) -> Step:
        with lock:
            return queue.pop(0) if queue else (then or Step(content="done"))

    return respond


def by_round(rounds: Sequence[Step], then: Step | None = None) -> Responder:
    """Answer by how far the conversation has got: the n-th assistant turn gets
    ``rounds[n]``. A client that resumes with the same history gets the same next
    answer, which is what replaying a recorded extraction needs."""

    def respond(body: dict[str, Any]) -> Step:
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return rounds[done] if done < len(rounds) else (then or Step(content="done"))

    return respond


def completion(step: Step, model: str, asked: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion answering ``asked`` (the request), with a token count as an
    endpoint reports it: here, a quarter of the characters each way."""
    calls = [
        {
            "id": f"call_{i}_{zlib.crc32(f'{name}{args}'.encode()):08x}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(step.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": step.content or None}
    if calls:
        message["tool_calls"] = calls
    prompt = len(json.dumps((asked or {}).get("messages", []))) // 4
    answer = len(json.dumps(message)) // 4
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        },  # fmt: skip
    }


class ScriptedServer:
    """``with ScriptedServer(responder) as server: ... server.base_url ...``

    Every request body is kept in ``requests`` for assertions."""

    def __init__(self, responder: Responder, host: str = "127.0.0.1", port: int = 0) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                owner.requests.append(body)
                step = owner.responder(body)
                if step.sleep:
                    time.sleep(step.sleep)
                if body.get("stream") and step.status == 200 and step.raw is None:
                    self._stream(step, body.get("model", "scripted"))
                    return
                if step.raw is not None:
                    payload = step.raw.encode()
                elif step.status != 200:
                    error = {"message": step.content or f"scripted error {step.status}"}
                    payload = json.dumps({"error": error}).encode()
                else:
                    payload = json.dumps(
                        completion(step, body.get("model", "scripted"), body)
                    ).encode()
                try:
                    self.send_response(step.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    if step.retry_after_ms is not None:
                        self.send_header("retry-after-ms", str(step.retry_after_ms))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

            def _stream(self, step: Step, model: str) -> None:
                """Server-sent events, a few words per chunk, as streaming clients expect."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                words = step.content.split(" ")
                pieces = [" ".join(words[i : i + 3]) + " " for i in range(0, len(words), 3)]
                pieces[-1] = pieces[-1].rstrip(" ")
                for piece, last in [(p, False) for p in pieces] + [("", True)]:
                    chunk = {
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [{"index": 0, "delta": {"content": piece} if piece else {},
                                     "finish_reason": "stop" if last else None}],
                    }  # fmt: skip
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def recorded_rounds(recording: dict[str, Any]) -> list[Step]:
    """A recorded extraction (``{"rounds": [[{"name", "arguments"}, ...], ...]}``) as steps."""
    return [
        Step(tool_calls=[(call["name"], call["arguments"]) for call in calls])
        for calls in recording["rounds"]
    ]

"""A thin client over the ``openai`` package: one method, ``chat``, with retries on
transient failures and every failure translated into :class:`LLMError` that names
the endpoint."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import openai
from tenacity import (
    RetryCallState,
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from pegasus.errors import ConfigError, LLMError, LLMRequestError
from pegasus.model import Usage

log = logging.getLogger(__name__)

# Worth another try: the endpoint was busy, slow, or briefly unreachable.
TRANSIENT = (
    openai.APIConnectionError,  # includes APITimeoutError
    openai.RateLimitError,
    openai.InternalServerError,
    openai.ConflictError,
)


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = "not-needed"  # local servers often take any key
    timeout: float = 120.0  # seconds per request
    retries: int = 4  # further attempts after a transient failure
    retry_wait: float = 1.0  # first backoff in seconds, doubling, with jitter

    @classmethod
    def from_settings(cls, settings: Any) -> LLMConfig:
        if not settings.llm_base_url or not settings.llm_model:
            raise ConfigError(
                "no language model configured: set PEGASUS_LLM_BASE_URL and PEGASUS_LLM_MODEL"
            )
        return cls(
            base_url=settings.llm_base_url,
            model=settings.llm_model,
            api_key=settings.llm_api_key or "not-needed",
            timeout=settings.llm_timeout,
            retries=settings.llm_retries,
        )


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it (it may be broken)

    def as_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Reply:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)

    def as_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [call.as_message() for call in self.tool_calls]
        return message

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "tool_calls": [vars(c) for c in self.tool_calls]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:
        return cls(data.get("content") or "", [ToolCall(**c) for c in data.get("tool_calls", [])])


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    log.warning("LLM request failed (%s); attempt %d, retrying", exc, state.attempt_number)


class LLM:
    """Chat completions against one OpenAI-compatible endpoint; :attr:`usage` adds up
    what they cost."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._spent = threading.local()
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key,
            timeout=config.timeout,
            max_retries=0,  # retries are ours, so they are logged and bounded alike
        )

    def close(self) -> None:
        self._client.close()

    @property
    def where(self) -> str:
        return f"{self.config.base_url} (model {self.config.model})"

    def _create(self, **kwargs: Any) -> Any:
        """``chat.completions.create`` with retries on transient failures."""
        return retry(
            retry=retry_if_exception_type(TRANSIENT),
            stop=stop_after_attempt(self.config.retries + 1),
            wait=wait_exponential_jitter(
                multiplier=self.config.retry_wait, max=30, jitter=self.config.retry_wait
            ),
            before_sleep=_log_retry,
            reraise=True,
        )(self._client.chat.completions.create)(model=self.config.model, **kwargs)

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """The ``openai`` package's errors as :class:`LLMError` naming the endpoint."""
        try:
            yield
        except openai.APITimeoutError as exc:
            raise LLMError(f"{self.where} timed out after {self.config.timeout:g} s") from exc
        except openai.APIConnectionError as exc:
            raise LLMError(f"cannot reach the language model at {self.where}: {exc}") from exc
        except openai.APIStatusError as exc:
            # A 400 is about the request itself (often: no tool calling), which a
            # caller may answer by asking differently.
            error = LLMRequestError if isinstance(exc, openai.BadRequestError) else LLMError
            raise error(
                f"{self.where} refused the request: {exc.status_code} {_detail(exc)}"
            ) from exc
        except (openai.OpenAIError, ValueError) as exc:  # ValueError: a body that is not JSON
            raise LLMError(f"{self.where} answered unusably: {exc}") from exc

    def chat(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        json_mode: bool = False,
    ) -> Reply:
        """One completion. Transient failures are retried with backoff; anything else
        (and retries run out) raises :class:`LLMError`."""
        kwargs: dict[str, Any] = {"messages": list(messages)}
        if tools:
            kwargs["tools"] = list(tools)
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        started, completion = time.monotonic(), None
        try:
            with self._translated():
                completion = self._create(**kwargs)
        finally:  # a failed call cost time, and maybe tokens
            self._count(getattr(completion, "usage", None), started)
        if not getattr(completion, "choices", None):
            raise LLMError(f"{self.where} answered with no choices")
        message = completion.choices[0].message
        calls = [
            ToolCall(call.id or f"call_{i}", call.function.name, call.function.arguments or "")
            for i, call in enumerate(message.tool_calls or [])
            if getattr(call, "function", None) is not None
        ]
        return Reply(message.content or "", calls)

    @property
    def usage(self) -> Usage:
        """What the completions this thread asked for cost so far: an ingest runs in
        one thread, so ingests sharing the client count apart."""
        return getattr(self._spent, "usage", Usage())

    def _count(self, usage: Any, started: float) -> None:
        self._spent.usage = self.usage + Usage(
            calls=1, seconds=time.monotonic() - started,
            prompt_tokens=getattr(usage, "prompt_tokens", None) or 0,
            completion_tokens=getattr(usage, "completion_tokens", None) or 0,
        )  # fmt: skip

    def stream(self, messages: Sequence[dict[str, Any]]) -> Iterator[str]:
        """A plain reply, piece by piece as the model writes it."""
        with self._translated():
            for chunk in self._create(messages=list(messages), stream=True):
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        return json.dumps(body)[:300]
    return str(exc.message)[:300]

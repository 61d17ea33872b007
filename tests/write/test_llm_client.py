"""The LLM client against a scripted OpenAI-compatible server, through the real
``openai`` package: tool calls, retries, errors and timeouts."""

from __future__ import annotations

import socket

import pytest

from pegasus.config import load_settings
from pegasus.errors import ConfigError, LLMError, LLMRequestError
from pegasus.llm import LLM, LLMConfig
from pegasus.llm.scripted import Step, sequence
from tests.write.conftest import llm_for

HELLO = [{"role": "user", "content": "hi"}]


def test_tool_calls_come_back_with_their_arguments(serve) -> None:
    server = serve(sequence([Step(tool_calls=[("add_entity", {"name": "Ann", "kind": "PERSON"}),
                                              ("finish", "{not json")])]))  # fmt: skip
    reply = llm_for(server).chat(HELLO, tools=[])
    assert [c.name for c in reply.tool_calls] == ["add_entity", "finish"]
    assert reply.tool_calls[0].arguments == '{"name": "Ann", "kind": "PERSON"}'
    assert reply.tool_calls[1].arguments == "{not json"  # kept as written, checked later
    assert server.requests[0]["model"] == "scripted-model"


def test_transient_errors_are_retried(serve) -> None:
    server = serve(sequence([Step(status=500), Step(status=429, retry_after_ms=1),
                             Step(content="fine")]))  # fmt: skip
    assert llm_for(server).chat(HELLO).content == "fine"
    assert len(server.requests) == 3


def test_retries_run_out_with_a_clear_error(serve) -> None:
    server = serve(sequence([Step(status=503)] * 5))
    with pytest.raises(LLMError, match=r"refused the request: 503"):
        llm_for(server, retries=1).chat(HELLO)
    assert len(server.requests) == 2


def test_a_refusal_is_not_retried(serve) -> None:
    server = serve(sequence([Step(status=401, content="bad key")]))
    with pytest.raises(LLMError, match=r"127\.0\.0\.1.*401 bad key"):
        llm_for(server).chat(HELLO)
    assert len(server.requests) == 1


def test_a_bad_request_is_its_own_error(serve) -> None:
    server = serve(sequence([Step(status=400, content="tools are not supported")]))
    with pytest.raises(LLMRequestError, match=r"400 tools are not supported"):
        llm_for(server).chat(HELLO, tools=[{"type": "function"}])
    server = serve(sequence([Step(status=401, content="bad key")]))
    with pytest.raises(LLMError) as caught:
        llm_for(server).chat(HELLO)
    assert not isinstance(caught.value, LLMRequestError)


def test_a_slow_endpoint_times_out(serve) -> None:
    server = serve(sequence([Step(sleep=0.4, content="late")] * 2))
    with pytest.raises(LLMError, match="timed out after 0.1 s"):
        llm_for(server, timeout=0.1, retries=1).chat(HELLO)


def test_garbage_instead_of_a_completion(serve) -> None:
    server = serve(sequence([Step(raw="<html>proxy error</html>")]))
    with pytest.raises(LLMError, match="unusabl|no choices"):
        llm_for(server).chat(HELLO)


def test_an_unreachable_endpoint_is_named() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    llm = LLM(LLMConfig(f"http://127.0.0.1:{port}/v1", "m", retries=0))
    with pytest.raises(
        LLMError, match=f"cannot reach the language model at http://127.0.0.1:{port}"
    ):
        llm.chat(HELLO)


def test_missing_configuration_says_what_to_set(monkeypatch) -> None:
    monkeypatch.delenv("PEGASUS_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("PEGASUS_LLM_MODEL", raising=False)
    with pytest.raises(ConfigError, match="PEGASUS_LLM_BASE_URL"):
        LLMConfig.from_settings(load_settings())


def test_settings_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_LLM_BASE_URL", "http://llm.local/v1")
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "m1")
    monkeypatch.delenv("PEGASUS_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fallback")
    monkeypatch.setenv("PEGASUS_LLM_TIMEOUT", "7.5")
    config = LLMConfig.from_settings(load_settings())
    assert (config.base_url, config.model, config.api_key, config.timeout) == (
        "http://llm.local/v1", "m1", "sk-fallback", 7.5)  # fmt: skip

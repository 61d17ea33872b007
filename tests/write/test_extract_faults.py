"""Extraction against a misbehaving model: broken arguments, no finish, endless
calls, no tool support, garbage JSON, timeouts midway (then a resumed run)."""

from __future__ import annotations

import pytest

from pegasus.errors import LLMError
from pegasus.llm.scripted import Step, by_round, sequence
from pegasus.memory import Memory
from pegasus.write import extract
from tests.write.conftest import FINISH, calls, chat, entity, ingest_steps, llm_for, relation, said


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_broken_arguments_are_explained_and_can_be_fixed(memory: Memory, serve) -> None:
    broken = [
        ("add_entity", "{name: Ann"),
        ("add_entity", {"name": "Ann", "kind": "HUMAN"}),
        ("add_relation", {"source": "Ann", "relation": "KNOWS", "target": "Bob"}),
        ("forget_everything", {}),
    ]
    fixed = calls(entity("Ann"), entity("Bob"), relation("Ann", "KNOWS", "Bob"))
    server = serve(sequence([Step(tool_calls=broken), fixed, calls(FINISH)]))
    report = memory.ingest(chat("Ann knows Bob."), llm=llm_for(server))
    results = tool_results(server.requests[1])
    assert "not valid JSON" in results[0]
    assert "kind 'HUMAN' is not one of PERSON" in results[1]
    assert "snippet: Field required" in results[2]
    assert "unknown tool 'forget_everything'" in results[3]
    assert report.created == ["PERSON::ann", "PERSON::bob"] and len(report.relations_added) == 1
    assert sum("refused" in note for note in report.dropped) == 4


def test_tool_results_say_what_is_known(memory: Memory, serve) -> None:
    ingest_steps(memory, serve, [calls(entity("Ann"), FINISH)])
    server = serve(
        sequence([calls(entity("Ann"), relation("Ann", "LIKES", "Jazz")), calls(FINISH)])
    )
    memory.ingest(chat("Ann likes jazz", conversation_id="c2"), llm=llm_for(server))
    first, second = tool_results(server.requests[1])
    assert "matches the known PERSON::ann 'Ann'" in first
    assert "'Jazz' is not a known entity yet" in second


def test_a_model_that_never_calls_finish_is_nudged_then_stopped(memory: Memory, serve) -> None:
    server = serve(sequence([calls(entity("Ann"), entity("Oslo", kind="PLACE"),
                                   relation("Ann", "LIVES_IN", "Oslo")),
                             Step(content="All done!"), Step(content="Really done.")]))  # fmt: skip
    report = memory.ingest(chat("Ann lives in Oslo"), llm=llm_for(server))
    assert len(server.requests) == 3
    assert server.requests[2]["messages"][-1]["content"] == extract.NUDGE
    assert len(report.relations_added) == 1  # what it wrote is kept
    assert "extraction stopped: the model never called finish" in report.dropped


def test_calls_are_capped(memory: Memory, serve, monkeypatch) -> None:
    monkeypatch.setattr(extract, "MAX_CALLS", 6)
    server = serve(lambda body: calls(*(entity(f"P{len(body['messages'])}x{i}") for i in range(4))))
    named = " ".join(f"P{n}x{i}" for n in range(20) for i in range(4))
    report = memory.ingest(chat(f"many people: {named}"), llm=llm_for(server))
    assert len(server.requests) == 2 and len(report.created) == 6
    assert any("limit of 6 calls" in note for note in report.dropped)


def json_answer(entities: list, relations: list) -> str:
    import json

    return json.dumps({"entities": entities, "relations": relations, "summary": "s"})


ANN = {"name": "Ann", "kind": "PERSON"}
OSLO = {"name": "Oslo", "kind": "PLACE"}
LIVES = {"source": "Ann", "relation": "lives in", "target": "Oslo", "snippet": "I live in Oslo"}


def test_a_model_without_tools_answers_in_json(memory: Memory, serve) -> None:
    memory.core.settings = memory.settings.model_copy(update={"llm_tools": False})
    server = serve(sequence([Step(content="Sure! " + json_answer([ANN, OSLO], [LIVES]))]))
    report = memory.ingest(chat("I live in Oslo"), llm=llm_for(server))
    assert "tools" not in server.requests[0]
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert report.relations_added == ["PERSON::ann::LIVES_IN::PLACE::oslo"]


def test_a_refusal_of_tools_falls_back_to_json(memory: Memory, serve) -> None:
    def respond(body: dict) -> Step:
        if "tools" in body:
            return Step(status=400, content="this model does not support tools")
        return Step(content=json_answer([ANN, OSLO], [LIVES]))

    server = serve(respond)
    report = memory.ingest(chat("I live in Oslo"), llm=llm_for(server))
    assert len(report.relations_added) == 1 and len(server.requests) == 2


def test_garbage_json_twice_is_an_error_and_stores_nothing(memory: Memory, serve) -> None:
    memory.core.settings = memory.settings.model_copy(update={"llm_tools": False})
    server = serve(sequence([Step(content="{'not': json"), Step(content="still [not json")]))
    with pytest.raises(LLMError, match="no usable JSON"):
        memory.ingest(chat("I live in Oslo"), llm=llm_for(server))
    assert memory.export().nodes == []
    good = serve(sequence([Step(content=json_answer([ANN, OSLO], [LIVES]))]))
    assert len(memory.ingest(chat("I live in Oslo"), llm=llm_for(good)).relations_added) == 1


ROUNDS = [
    calls(entity("Ann"), entity("Oslo", kind="PLACE")),
    calls(relation("Ann", "LIVES_IN", "Oslo")),
    calls(entity("Bob"), relation("Ann", "KNOWS", "Bob")),
    calls(FINISH),
]


def test_a_timeout_midway_loses_nothing_and_the_rerun_resumes(memory: Memory, serve) -> None:
    slow = serve(sequence([ROUNDS[0], ROUNDS[1], *[Step(sleep=0.4, content="late")] * 3]))
    with pytest.raises(LLMError, match="timed out"):
        memory.ingest(chat("...", *said(ROUNDS)), llm=llm_for(slow, timeout=0.1, retries=1))
    assert memory.export().nodes == []  # nothing half-written into the graph
    record = memory.store.get_conversation(memory.user, "c1")
    assert record.turns_ingested == 0 and len(record.journal) > 3  # the work so far is kept

    resumed = serve(by_round(ROUNDS))
    report = memory.ingest(chat("...", *said(ROUNDS)), llm=llm_for(resumed))
    # The rerun continued the chat where it stopped instead of starting over.
    first = resumed.requests[0]["messages"]
    assert sum(m["role"] == "assistant" for m in first) == 2
    assert len(resumed.requests) == 2
    assert sorted(report.created) == ["PERSON::ann", "PERSON::bob", "PLACE::oslo"]
    assert len(report.relations_added) == 2


def test_server_errors_are_retried_transparently(memory: Memory, serve) -> None:
    busy = Step(status=429, retry_after_ms=1)
    steps = [Step(status=500), ROUNDS[0], Step(status=502), ROUNDS[1], ROUNDS[2], busy, ROUNDS[3]]
    server = serve(sequence(steps))
    report = memory.ingest(chat("...", *said(ROUNDS)), llm=llm_for(server))
    assert len(report.relations_added) == 2


def test_odd_unicode_and_huge_turns(memory: Memory, serve, monkeypatch) -> None:
    from pegasus.write import pipeline

    monkeypatch.setattr(pipeline, "MAX_SEGMENT_CHARS", 500)
    name = "Zoë\u0301 王伟"
    server = serve(lambda body: calls(entity(name), relation("me", "KNOWS", name), FINISH))
    text = "x" * 400
    report = memory.ingest(chat(f"{text}\x00\u200b I know {name}", text, text), llm=llm_for(server))
    assert report.new_turns == 6 and len(server.requests) == 3  # three bounded segments
    (node,) = [n for n in memory.export().nodes if n.name != "User"]
    assert "王伟" in node.name and "\x00" not in str(server.requests[0])

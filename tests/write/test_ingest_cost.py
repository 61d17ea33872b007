"""Every ingest says what it cost: model calls, the tokens the endpoint counted, and
seconds, in the report, the conversation's record and the owner's totals."""

from __future__ import annotations

import json

from pegasus.llm.scripted import sequence
from pegasus.memory import Memory
from tests.cli_helpers import run_cli
from tests.write.conftest import FINISH, calls, chat, entity, llm_for, relation, said

TOLD = relation("Ann", "LIVES_IN", "Oslo", "Ann lives in Oslo")
STEPS = [calls(entity("Ann"), entity("Oslo", "PLACE"), TOLD), calls(FINISH)]


def counted(requests: list[dict]) -> tuple[int, int]:
    """The prompt tokens the scripted endpoint reports for these requests."""
    return len(requests), sum(len(json.dumps(body["messages"])) // 4 for body in requests)


def test_the_cost_is_in_the_report_the_record_and_the_totals(memory: Memory, serve) -> None:
    first = serve(sequence(STEPS))
    report = memory.ingest(chat(*said(STEPS)), llm=llm_for(first))
    calls_made, prompt = counted(first.requests)
    assert (report.cost.calls, report.cost.prompt_tokens) == (calls_made, prompt) == (2, prompt)
    assert report.cost.completion_tokens > 0 and report.cost.seconds > 0
    record = memory.store.get_conversation(memory.user, "c1")
    assert (record.model_calls, record.prompt_tokens) == (2, prompt)

    second = serve(sequence(STEPS))
    again = memory.ingest(chat(*said(STEPS), conversation_id="c2"), llm=llm_for(second))
    totals = memory.stats().cost
    assert totals.calls == 4
    assert totals.prompt_tokens == report.cost.prompt_tokens + again.cost.prompt_tokens
    assert totals.completion_tokens == (report.cost.completion_tokens
                                        + again.cost.completion_tokens)  # fmt: skip
    # Ingesting it again asks the model nothing and costs nothing.
    assert memory.ingest(chat(*said(STEPS)), llm=llm_for(serve(sequence([])))).cost.calls == 0
    assert memory.stats().cost.calls == 4


def test_the_command_line_prints_the_cost(tmp_path, serve, capsys, monkeypatch) -> None:
    model = serve(sequence(STEPS))
    monkeypatch.setenv("PEGASUS_LLM_BASE_URL", model.base_url)
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "scripted")
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps([{"role": "user", "content": text} for text in said(STEPS)]))
    store = f"sqlite:///{tmp_path / 'memory.db'}"
    done = run_cli(capsys, "--store", store, "ingest", str(transcript))
    assert done.code == 0 and "cost: 2 model calls, " in done.out, done.out
    stats = run_cli(capsys, "--store", store, "stats")
    assert "model calls" in stats.out and "prompt tokens" in stats.out

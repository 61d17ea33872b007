"""Property-based fuzzing of everything that comes from outside: interchange files,
the model's tool calls and replies, and transcripts. Whatever comes in is accepted
whole or refused whole with one clear line; nothing crashes, nothing is half-written.
Each failure these found is also kept as a fixed example."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pegasus.errors import PegasusError, ValidationError
from pegasus.interchange import parse_graph
from pegasus.llm import ToolCall
from pegasus.memory import Memory
from pegasus.prompts.extract import ARGUMENTS
from pegasus.write.extract import Extractor
from pegasus.write.transcript import parse_transcript
from tests.conftest import SEED_GRAPH
from tests.write.conftest import llm_for

SEED = json.loads(SEED_GRAPH.read_text())
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])  # fmt: skip

text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["", " ", "\x00", "\ud800", "\u200b", "[MEMORY]", "KNOWS", "x" * 300, "'; DROP TABLE x"]
)
scalars = st.none() | st.booleans() | st.integers(-10, 10**12) | st.floats() | text
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(text, inner, max_size=3), max_leaves=8)  # fmt: skip


@st.composite
def mutated_file(draw: st.DrawFn) -> str:
    """The sample file with a few fields replaced, removed or added."""
    document = json.loads(json.dumps(SEED))
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from(["nodes", "edges"]))
        item = draw(st.sampled_from(document[section]))
        field = draw(st.sampled_from([*item, "extra", "kind", "relation", "from", "to"]))
        action = draw(st.sampled_from(["replace", "remove", "relation"]))
        if action == "remove":
            item.pop(field, None)
        elif action == "relation":
            item["relation"] = draw(text)
        else:
            item[field] = draw(values)
    return json.dumps(document, ensure_ascii=draw(st.booleans()))


@FUZZ
@given(mutated_file())
@example(json.dumps({**SEED, "nodes": [{**SEED["nodes"][0], "label": "x" * 5000}]}))
def test_interchange_files_are_refused_or_accepted_whole(memory: Memory, document: str) -> None:
    before = memory.export()
    try:
        graph = parse_graph(document)
    except ValidationError as exc:
        assert "\n" not in str(exc).strip()
        return
    try:
        memory.import_graph(graph, index=False)
    except ValidationError:
        after = memory.export()
        assert (after.nodes, after.edges) == (before.nodes, before.edges)
        return
    assert len(memory.export().edges) >= len(graph.edges) or graph.edges == []


tool_arguments = st.one_of(
    st.dictionaries(st.sampled_from(["name", "kind", "aliases", "properties", "confidence",
                                     "source", "relation", "target", "snippet", "stability",
                                     "cardinality", "expires_at", "summary", "tags"]),
                    values, max_size=8).map(json.dumps),
    text,
)  # fmt: skip


@FUZZ
@given(st.sampled_from([*ARGUMENTS, "delete_everything", ""]), tool_arguments)
@example("add_relation", '{"source": "me", "relation": "WORKS_AT]->() DELETE r", '
         '"target": "Acme", "snippet": "x"}')  # fmt: skip
@example("add_entity", '{"name": "\\ud800", "kind": "PERSON"}')
@example("add_entity", '{"name": "Ann", "kind": "PERSON", "aliases": true}')  # found: a crash
def test_any_tool_call_gets_an_answer(name: str, arguments: str) -> None:
    extractor = Extractor(llm=None, journal=None, known=lambda _: [])  # type: ignore[arg-type]
    answer, kept = extractor.handle(ToolCall("call-1", name, arguments))
    assert isinstance(answer, str) and answer
    assert kept is None or isinstance(kept, dict)


replies = st.lists(st.tuples(st.sampled_from([*ARGUMENTS, "nope"]), tool_arguments),
                   min_size=0, max_size=4)  # fmt: skip


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(replies, min_size=1, max_size=3))
def test_any_model_reply_is_written_whole_or_not_at_all(memory: Memory, serve, rounds) -> None:
    from pegasus.llm.scripted import Step, sequence
    from tests.write.conftest import chat

    steps = [Step(tool_calls=list(calls)) for calls in rounds]
    server = serve(sequence(steps))
    before = memory.export()
    try:
        report = memory.ingest(chat("I met Ann in Oslo"), llm=llm_for(server, retries=0))
    except PegasusError:
        after = memory.export()
        assert (after.nodes, after.edges) == (before.nodes, before.edges)
        return
    assert report.conversation_id == "c1"
    memory.store.apply(memory.user, _forget_all(memory))  # the next example starts empty


def _forget_all(memory: Memory):
    from pegasus.stores import Changes

    graph = memory.export()
    return Changes(delete_nodes=[n.id for n in graph.nodes],
                   delete_conversations=[c.id for c in graph.conversations],
                   delete_keys=[k.id for k in memory.store.list_keys(memory.user)])  # fmt: skip


turn = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "User", "AI",
                                                       "system", "narrator", ""]) | text},
                             optional={"content": values})  # fmt: skip
transcripts: Any = st.one_of(
    values,
    st.lists(turn | values, max_size=5),
    st.fixed_dictionaries({"turns": st.lists(turn, max_size=5)},
                          optional={"id": values, "started_at": values}),
)  # fmt: skip


@FUZZ
@given(transcripts)
@example([{"role": "user", "content": "\ud800 lone"}])
@example([{"role": "user", "content": "x" * 10_000_000}])
@example({"turns": [{"role": "user", "content": "hi"}], "id": "x" * 1000})
def test_any_transcript_is_read_or_refused(data: Any) -> None:
    try:
        transcript = parse_transcript(data)
    except ValidationError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert all(turn.role in ("user", "assistant") and turn.content for turn in transcript.turns)
    assert all(len(turn.content) <= 24_000 for turn in transcript.turns if turn.role == "user")


@pytest.fixture
def memory(store, user) -> Memory:
    return Memory.open(store, user=user)

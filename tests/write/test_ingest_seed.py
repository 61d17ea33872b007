"""The recorded extraction of the sample conversation, replayed through the whole
write path into each store, yields the sample graph; ingest is idempotent and
picks up only the new turns of a grown transcript."""

from __future__ import annotations

import json

from pegasus.errors import ConfigError
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Memory
from pegasus.write.transcript import parse_transcript, read_transcript
from tests.cli_helpers import run_cli
from tests.conftest import SEED_CONVERSATION, SEED_GRAPH
from tests.write.conftest import FINISH, RECORDING, calls, entity, llm_for, relation

EXPECTED = json.loads(SEED_GRAPH.read_text())


def replay(serve):
    return llm_for(serve(by_round(recorded_rounds(RECORDING))))


def test_the_recorded_extraction_yields_the_sample_graph(memory: Memory, serve) -> None:
    report = memory.ingest(SEED_CONVERSATION, llm=replay(serve))
    graph = memory.export()
    nodes = {n.id: n for n in graph.nodes}
    assert set(nodes) == {n["id"] for n in EXPECTED["nodes"]}
    # What the recording adds but nobody said (the alias "entrepreneurship" for
    # founding a company) is dropped with a note; the rest of each node is the sample's.
    unsaid = [note for note in report.dropped if "said in no turn" in note]

    def noted(label: str, words: str) -> bool:
        return any(repr(label) in note and words in note for note in unsaid)

    for want in EXPECTED["nodes"]:
        node = nodes[want["id"]]
        assert (node.name, node.kind.value) == (want["label"], want["kind"])
        assert node.aliases == [a for a in want["aliases"] if not noted(want["label"], repr(a))]
        assert node.properties == {key: value for key, value in want["properties"].items()
                                   if not noted(want["label"], f"{key}={value!r}")}  # fmt: skip
        assert node.conversations == ["seed-trevor-1"]
    edges = {e.id: e for e in graph.edges}
    assert set(edges) == {e["id"] for e in EXPECTED["edges"]}
    said = " ".join(" ".join(t.content.split()) for t in read_transcript(SEED_CONVERSATION).turns)
    for want in EXPECTED["edges"]:
        edge = edges[want["id"]]
        assert (edge.relation, edge.stability.value, edge.cardinality.value) == (
            want["relation"], want["stability"], want["cardinality"])  # fmt: skip
        # The recording retells some of Trevor's words, as the writeup's extractor did:
        # those snippets are stored as the sentences he said, noted in the report.
        if edge.snippet != want["snippet"]:
            assert " ".join(edge.snippet.split()) in said
            assert any(f"-{edge.relation}->" in n and "retold" in n for n in report.dropped)
        assert edge.properties["said_by"] == "user"
        assert edge.strength0 == 100.0 and edge.superseded_by is None
        # Dated by the conversation's own end, not by when it was ingested.
        assert edge.touched_at.isoformat() == "2026-09-14T18:10:00+00:00"
    assert graph.self_id == "PERSON::trevor"
    assert len(report.created) == 16 and len(report.relations_added) == 21
    assert len(unsaid) == 8  # notes on 10 of its 55 aliases and properties
    assert all("retold" in n or n in unsaid for n in report.dropped) and report.flagged == []
    record = memory.store.get_conversation(memory.user, "seed-trevor-1")
    assert record.turns_ingested == 4 and record.journal == []
    assert record.summary.startswith("Trevor, a Deloitte consultant")


def test_the_same_transcript_twice_changes_nothing(memory: Memory, serve) -> None:
    llm = replay(serve)
    memory.ingest(SEED_CONVERSATION, llm=llm)
    before = memory.export_json()
    report = memory.ingest(SEED_CONVERSATION, llm=llm)
    assert report.unchanged and report.created == [] and report.reinforced == []
    assert memory.export_json() == before


def test_a_grown_transcript_is_ingested_for_its_new_turns_only(memory: Memory, serve) -> None:
    data = json.loads(SEED_CONVERSATION.read_text())["conversation"]
    memory.ingest(parse_transcript(data), llm=replay(serve))
    data["turns"].append(
        {"role": "user", "content": "Update: I accepted the Nova AI CFO offer today."},
    )
    said = "I accepted the Nova AI CFO offer today."
    accepted = relation("Trevor", "ACCEPTED", "Nova AI CFO offer", said, stability="stable")
    server = serve(lambda body: calls(accepted, FINISH))
    report = memory.ingest(parse_transcript(data), llm=llm_for(server))
    assert report.new_turns == 1 and report.relations_added == [
        "PERSON::trevor::ACCEPTED::THING::nova_ai_cfo_offer"]  # fmt: skip
    # The model saw only the new turn, with the known memory around it.
    prompt = server.requests[0]["messages"][1]["content"]
    assert "I accepted the Nova AI CFO offer today." in prompt
    assert "bureaucracy at a big bank" not in prompt
    assert "Nova AI CFO offer (THING" in prompt
    assert memory.store.get_conversation(memory.user, "seed-trevor-1").turns_ingested == 5


def test_changed_history_is_refused(memory: Memory, serve) -> None:
    data = json.loads(SEED_CONVERSATION.read_text())["conversation"]
    memory.ingest(parse_transcript(data), llm=replay(serve))
    before = memory.export_json()
    data["turns"][0]["content"] = "Something else entirely."
    try:
        memory.ingest(parse_transcript(data), llm=replay(serve))
    except Exception as exc:  # noqa: BLE001 - the message is what matters
        assert "first 4 turns are not the ones ingested before" in str(exc)
    else:
        raise AssertionError("a rewritten transcript was accepted")
    assert memory.export_json() == before


def test_pegasus_ingest_prints_a_summary(capsys, tmp_path, serve, monkeypatch) -> None:
    server = serve(by_round(recorded_rounds(RECORDING)))
    monkeypatch.setenv("PEGASUS_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("PEGASUS_LLM_MODEL", "scripted")
    store = f"sqlite:///{tmp_path / 'm.db'}"
    result = run_cli(capsys, "--store", store, "ingest", str(SEED_CONVERSATION))
    assert result.code == 0, result.err
    assert "16 entities created" in result.out and "21 relations added" in result.out
    again = run_cli(capsys, "--store", store, "ingest", str(SEED_CONVERSATION))
    assert again.code == 0 and "already ingested" in again.out
    exported = run_cli(capsys, "--store", store, "export")
    assert len(json.loads(exported.out)["edges"]) == 21


def test_pegasus_ingest_without_a_model_says_what_to_set(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("PEGASUS_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("PEGASUS_LLM_MODEL", raising=False)
    result = run_cli(capsys, "--store", f"sqlite:///{tmp_path / 'm.db'}", "ingest",
                     str(SEED_CONVERSATION))  # fmt: skip
    assert result.code == ConfigError.exit_code and "PEGASUS_LLM_BASE_URL" in result.err
    assert read_transcript(SEED_CONVERSATION).id == "seed-trevor-1"


def test_no_user_words_no_model_call(memory: Memory, serve) -> None:
    server = serve(lambda body: calls(entity("Nobody"), FINISH))
    transcript = parse_transcript([{"role": "assistant", "content": "Hello, how can I help?"}])
    report = memory.ingest(transcript, llm=llm_for(server))
    assert server.requests == [] and report.new_turns == 1 and report.created == []

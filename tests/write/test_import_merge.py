"""An import over live data merges into what is stored: the README's order (ingest,
then import the same memory) keeps every citation, so forgetting the conversation
still removes what it contributed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pegasus.interchange import Graph
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Memory
from pegasus.model import Conversation, Edge, Node
from pegasus.write.imports import merge_import
from tests.conftest import SEED_CONVERSATION, SEED_GRAPH
from tests.write.conftest import RECORDING, llm_for

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_merging_keeps_what_the_memory_had() -> None:
    stored = Node(
        id="PERSON::ann",
        name="Ann",
        kind="PERSON",
        aliases=["Annie"],
        properties={"city": "Oslo"},
        conversations=["c1"],
        created_at=T0,
    )
    incoming = Node(
        id="PERSON::ann",
        name="Ann Berg",
        kind="PERSON",
        properties={"job": "nurse"},
        conversations=["c9"],
    )
    bo = Node(id="PERSON::bo", name="Bo", kind="PERSON")
    claim = Edge(
        id="e", source=bo.id, target=stored.id, relation="KNOWS", snippet="x", conversations=["c1"]
    )
    again = claim.evolve(strength=40, strength0=40, conversations=[])
    record = Conversation(id="c1", turns_ingested=4, content_hash="h", notes=["n"])
    graph = Graph(nodes=[incoming, bo], edges=[again],
                  conversations=[Conversation(id="c1", summary="from the file")],
                  self_id=bo.id)  # fmt: skip
    merged, report = merge_import(graph, {stored.id: stored}, {claim.id: claim},
                                  {record.id: record}, self_id="PERSON::me")  # fmt: skip
    ann = merged.nodes[0]
    assert (ann.name, ann.aliases) == ("Ann Berg", ["Ann", "Annie"])
    assert ann.properties == {"city": "Oslo", "job": "nurse"}
    assert ann.conversations == ["c1", "c9"]
    assert ann.created_at == T0
    assert merged.edges[0].strength0 == 40 and merged.edges[0].conversations == ["c1"]
    kept = merged.conversations[0]
    assert (kept.summary, kept.turns_ingested, kept.content_hash) == ("from the file", 4, "h")
    assert merged.self_id is None and report.self_kept == "PERSON::me"
    assert (report.merged_nodes, report.merged_edges, report.nodes) == (1, 1, 2)


def test_ingest_then_import_keeps_the_citations(memory: Memory, serve) -> None:
    memory.ingest(SEED_CONVERSATION, llm=llm_for(serve(by_round(recorded_rounds(RECORDING)))))
    report = memory.import_file(SEED_GRAPH)
    assert report.merged_nodes == 16 and report.merged_edges == 21
    graph = memory.export()
    assert all(e.conversations == ["seed-trevor-1"] for e in graph.edges)
    assert memory.store.get_conversation(memory.user, "seed-trevor-1").turns_ingested == 4
    plan = memory.plan_forget(conversation="seed-trevor-1")
    memory.forget(plan)
    assert memory.export().edges == []


def test_an_import_whose_embedding_fails_writes_nothing(memory: Memory, monkeypatch) -> None:
    from pegasus.errors import ConfigError

    def broken(texts):
        raise ConfigError("cannot load embedding model")

    monkeypatch.setattr(memory.embedder, "embed_batch", broken)
    with pytest.raises(ConfigError):
        memory.import_file(SEED_GRAPH)
    assert memory.export().nodes == [] and memory.store.list_keys(memory.user) == []

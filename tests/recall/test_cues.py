"""Claims found by what they say (by meaning, by words, fused), with the real
embedding model, on both stores; and the claim keys kept in step with the graph."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from pegasus.interchange import Graph
from pegasus.memory import Memory
from pegasus.model import Edge, Node, edge_id
from pegasus.recall.cues import MEANING, WORDS, claims_meant, claims_worded, fused, telling_words
from pegasus.recall.presets import DEFAULT
from pegasus.stores import Changes, Store

NOW = datetime(2024, 5, 1, tzinfo=UTC)
SAID = datetime(2024, 4, 20, tzinfo=UTC)


def _node(name: str, kind: str = "PERSON") -> Node:
    return Node(id=f"{kind}::{name.lower().replace(' ', '_')}", name=name, kind=kind)


LENA, OMAR, INES = _node("Lena"), _node("Omar"), _node("Ines")
PEPPER = _node("Pepper", "OTHER")
WORKSHOP = _node("Pottery workshop in Leeds", "EVENT")
LIBRARY = _node("Harbour Library", "ORG")
RACE = _node("Bristol half marathon", "EVENT")


def _claim(source: Node, relation: str, target: Node, snippet: str, **extra) -> Edge:
    return Edge(id=edge_id(source.id, relation, target.id), source=source.id,
                target=target.id, relation=relation, snippet=snippet, touched_at=SAID,
                created_at=SAID, **extra)  # fmt: skip


ADOPTED = _claim(LENA, "ADOPTED", PEPPER,
                 "Yesterday I adopted a greyhound called Pepper from the rescue centre.",
                 properties={"date": "2024-04-19"})  # fmt: skip
ATTENDED = _claim(LENA, "ATTENDED", WORKSHOP,
                  "I spent Saturday at a pottery workshop in Leeds, my first time "
                  "at the wheel.")  # fmt: skip
SISTER = _claim(LENA, "HAS_SISTER", INES, "My sister Ines gave me the workshop as a present.")
WORKS = _claim(OMAR, "WORKS_AT", LIBRARY, "The library job is going well so far.")
TRAINS = _claim(OMAR, "TRAINING_FOR", RACE, "I am training for the Bristol half marathon in June.")
GRAPH = Graph(
    nodes=[LENA, OMAR, INES, PEPPER, WORKSHOP, LIBRARY, RACE],
    edges=[ADOPTED, ATTENDED, SISTER, WORKS, TRAINS],
)


@pytest.fixture
def memory(store: Store, user: str) -> Memory:
    memory = Memory.open(store, user=user)
    memory.import_graph(GRAPH)
    store.apply(user, Changes(self_id=LENA.id))
    return memory


def cues_for(memory: Memory, message: str) -> dict:
    """The claim cues as a recall finds them: both searches, fused."""
    store, user = memory.store, memory.user
    return fused(
        claims_meant(store, user, memory.embedder.embed(message), message, DEFAULT),
        claims_worded(store, user, message, DEFAULT),
    )


def test_a_claim_is_found_by_meaning_without_naming_anything(memory: Memory) -> None:
    # No name or alias of the graph in the message, and no uncommon word.
    message = "Tell me about the dog you adopted"
    cues = cues_for(memory, message)
    assert cues[ADOPTED.id].kinds == [MEANING] and cues[ADOPTED.id].meaning >= 0.45
    result = memory.recall(message, now=NOW)
    assert ADOPTED.id in result.used_edges
    assert PEPPER.id in {f.id for f in result.fired}
    # Names and relation words alone find nothing here.
    names_only = replace(DEFAULT, claim_cues=False)
    assert memory.recall(message, now=NOW, settings=names_only).used_edges == []


def test_a_claim_is_found_by_an_uncommon_word_it_holds(memory: Memory) -> None:
    cues = cues_for(memory, "Does the greyhound like long walks?")
    assert cues[ADOPTED.id].words == ["greyhound"] and WORDS in cues[ADOPTED.id].kinds
    result = memory.recall("Any news on the marathon?", now=NOW)
    assert result.used_edges[0] == TRAINS.id


def test_both_cues_rank_a_claim_above_either_alone(memory: Memory) -> None:
    cues = cues_for(memory, "What happened at the pottery workshop?")
    best = max(cues.values(), key=lambda cue: cue.score)
    assert best.edge_id == ATTENDED.id and set(best.kinds) == {MEANING, WORDS}
    assert all(c.score < best.score for c in cues.values() if c.edge_id != ATTENDED.id)


@pytest.mark.parametrize(
    "message",
    [
        "Can you recommend a good pasta recipe?",
        "What's the weather like today?",
        "What is the capital of France?",
        "I was thinking about what they said; do you understand?",
        "Tell me a joke about penguins.",
    ],
)
def test_ordinary_messages_reach_no_claim(memory: Memory, message: str) -> None:
    assert cues_for(memory, message) == {}
    assert memory.recall(message, now=NOW).fired == []


def test_everyday_words_are_no_cue() -> None:
    assert telling_words("What good things happened today at work?", 5.0) == []
    told = telling_words("The greyhound was good at the pottery wheel", 5.0)
    assert {"greyhound", "pottery"} <= set(told) and not {"good", "the"} & set(told)


def test_claim_keys_follow_forget_and_reindex(memory: Memory, store: Store, user: str) -> None:
    claims = {k.ref for k in store.list_keys(user) if k.kind == "claim"}
    assert claims == {e.id for e in GRAPH.edges}
    memory.forget(memory.plan_forget(node=PEPPER.id))
    assert ADOPTED.id not in {k.ref for k in store.list_keys(user) if k.kind == "claim"}
    assert store.search_words(user, ["greyhound"]) == []
    # A snippet replaced outside the write path is embedded again by a reindex.
    store.apply(user, Changes(edges=[WORKS.evolve(snippet="I shelve rare atlases all day.")]))
    assert memory.sync_keys()[0] == 1
    assert store.search_words(user, ["atlases"])[0][0].ref == WORKS.id


def test_a_nickname_reaches_the_person_under_the_formal_name(store: Store, user: str) -> None:
    william = _node("William Okafor")
    memory = Memory.open(store, user=user)
    memory.import_graph(
        Graph(nodes=[LENA, william], edges=[_claim(LENA, "PLAYS_GOLF_WITH", william,
                                                  "William Okafor and I play golf on Sundays.")])
    )  # fmt: skip
    result = memory.recall("Bill called me this morning", now=NOW)
    assert william.id in {f.id for f in result.fired}


def test_my_relation_reaches_whoever_the_users_claim_points_at(memory: Memory) -> None:
    result = memory.recall("I'm seeing my sister tonight", now=NOW)
    assert INES.id in {f.id for f in result.fired}
    assert SISTER.id in result.used_edges


def test_a_reindex_writes_in_batches(memory: Memory, store: Store, user: str, monkeypatch) -> None:
    from pegasus.recall import keys

    monkeypatch.setattr(keys, "SYNC_BATCH", 2)
    writes: list[int] = []
    apply = store.apply
    monkeypatch.setattr(
        store, "apply", lambda who, changes: (writes.append(len(changes.keys)), apply(who, changes))
    )
    store.apply(user, Changes(delete_keys=[k.id for k in store.list_keys(user)]))
    writes.clear()
    added, removed = memory.sync_keys()
    assert added == sum(writes) == len(store.list_keys(user)) and removed == 0
    assert max(writes) == 2 and len(writes) == (added + 1) // 2
    assert store.search_words(user, ["greyhound"])[0][0].ref == ADOPTED.id

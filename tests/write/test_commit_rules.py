"""Commit (SPEC 3.5) on both stores: reinforcement, snippets, supersession with
history, self-loops after merging, and claims dated by the conversation."""

from __future__ import annotations

import math
from datetime import datetime

import pytest

from pegasus.memory import Memory
from tests.write.conftest import FINISH, calls, chat, entity, llm_for, relation, said
from tests.write.test_merge_review import extraction_then_review

WORKS = "PERSON::ann::WORKS_AT::ORG::acme"


def say(memory: Memory, serve, *tool_calls, at: str, conversation_id: str):
    server = serve(extraction_then_review([calls(*tool_calls, FINISH)], "{}"))
    transcript = chat("...", *said([calls(*tool_calls)]), conversation_id=conversation_id, at=at)
    return memory.ingest(transcript, llm=llm_for(server))


def edge(memory: Memory, edge_id: str):
    (found,) = memory.store.get_edges(memory.user, [edge_id])
    return found


@pytest.fixture
def ann(memory: Memory, serve) -> Memory:
    say(memory, serve, entity("Ann"), entity("Acme", kind="ORG"),
        relation("Ann", "WORKS_AT", "Acme", "I work at Acme", stability="mutable",
                 cardinality="one_to_one", confidence=0.9),
        at="2026-01-01T00:00:00+00:00", conversation_id="first")  # fmt: skip
    return memory


def test_a_relation_heard_again_is_reinforced_once(ann: Memory, serve) -> None:
    said = relation("Ann", "WORKS_AT", "Acme", "Still at Acme", stability="mutable",
                    cardinality="one_to_one", confidence=0.5)  # fmt: skip
    report = say(ann, serve, said, said, at="2026-01-31T00:00:00+00:00", conversation_id="second")
    assert report.reinforced == [WORKS] and report.relations_added == []
    again = edge(ann, WORKS)
    expected = 100 * math.exp(-0.020 * 30) + 15  # mutable, 30 days, +15 once
    assert again.strength0 == pytest.approx(expected) and again.strength == pytest.approx(expected)
    assert again.touched_at == datetime.fromisoformat("2026-01-31T00:00:00+00:00")
    assert again.snippet == "I work at Acme"  # the surer telling stays
    assert again.conversations == ["first", "second"]


def test_reinforcement_is_capped_and_a_surer_snippet_wins(ann: Memory, serve) -> None:
    said = relation("Ann", "WORKS_AT", "Acme", "I do work at Acme, yes", stability="mutable",
                    cardinality="one_to_one", confidence=0.95)  # fmt: skip
    say(ann, serve, said, at="2026-01-01T01:00:00+00:00", conversation_id="second")
    again = edge(ann, WORKS)
    assert again.strength0 == 100.0
    assert (again.snippet, again.confidence) == ("I do work at Acme, yes", 0.95)


def test_a_new_one_to_one_claim_supersedes_and_keeps_history(ann: Memory, serve) -> None:
    report = say(ann, serve, entity("Globex", kind="ORG"),
                 relation("Ann", "WORKS_AT", "Globex", "I moved to Globex", stability="mutable",
                          cardinality="one_to_one"),
                 at="2026-03-01T00:00:00+00:00", conversation_id="second")  # fmt: skip
    new = "PERSON::ann::WORKS_AT::ORG::globex"
    assert report.superseded == [WORKS]
    assert edge(ann, WORKS).superseded_by == new  # still there, as history
    assert edge(ann, new).superseded_by is None
    # Back at Acme: the old claim revives and the Globex one becomes history.
    say(ann, serve, relation("Ann", "WORKS_AT", "Acme", "Back at Acme", stability="mutable",
                             cardinality="one_to_one"),
        at="2026-06-01T00:00:00+00:00", conversation_id="third")  # fmt: skip
    assert edge(ann, WORKS).superseded_by is None and edge(ann, new).superseded_by == WORKS


def test_one_to_many_claims_do_not_supersede(ann: Memory, serve) -> None:
    report = say(ann, serve, entity("Globex", kind="ORG"),
                 relation("Ann", "WORKS_AT", "Globex", "I also consult for Globex"),
                 at="2026-03-01T00:00:00+00:00", conversation_id="second")  # fmt: skip
    assert report.superseded == [] and edge(ann, WORKS).superseded_by is None
    # Nor does a one_to_one sighting retire claims that were stored as one_to_many.
    report = say(ann, serve, entity("Initech", kind="ORG"),
                 relation("Ann", "WORKS_AT", "Initech", "I work at Initech",
                          cardinality="one_to_one"),
                 at="2026-04-01T00:00:00+00:00", conversation_id="third")  # fmt: skip
    assert report.superseded == [WORKS]
    assert edge(ann, "PERSON::ann::WORKS_AT::ORG::globex").superseded_by is None


def test_a_backfilled_older_claim_does_not_replace_a_newer_one(ann: Memory, serve) -> None:
    say(ann, serve, entity("Initech", kind="ORG"),
        relation("Ann", "WORKS_AT", "Initech", "I work at Initech", stability="mutable",
                 cardinality="one_to_one"),
        at="2025-01-01T00:00:00+00:00", conversation_id="old")  # fmt: skip
    old = edge(ann, "PERSON::ann::WORKS_AT::ORG::initech")
    assert old.superseded_by == WORKS and edge(ann, WORKS).superseded_by is None
    assert old.touched_at == datetime.fromisoformat("2025-01-01T00:00:00+00:00")


def test_a_self_loop_after_merging_is_dropped(ann: Memory, serve) -> None:
    report = say(ann, serve, entity("Annie", aliases=["Ann"]),
                 relation("Ann", "IS_SAME_AS", "ann"), relation("Annie", "KNOWS", "Ann"),
                 at="2026-02-01T00:00:00+00:00", conversation_id="second")  # fmt: skip
    assert report.relations_added == []
    assert any("cannot relate to itself" in n for n in report.dropped)
    assert any("same entity after merging" in n for n in report.dropped)

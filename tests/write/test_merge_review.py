"""Merge and review through the whole pipeline, on both stores: the deterministic
rules, the LLM review and its banding, the user's placeholders and the self node."""

from __future__ import annotations

import json

import pytest

from pegasus.interchange import Graph
from pegasus.llm.scripted import Step
from pegasus.memory import Memory
from pegasus.model import Edge, Node
from tests.write.conftest import FINISH, calls, chat, entity, llm_for, relation, said

T0 = "2026-09-01T10:00:00+00:00"


@pytest.fixture
def known(memory: Memory) -> Memory:
    """Trevor (the user), William Smith whom he knows, Jonathan Miller, and an ORG Acme."""
    nodes = [
        Node(id="PERSON::trevor", name="Trevor", kind="PERSON"),
        Node(id="PERSON::william_smith", name="William Smith", kind="PERSON"),
        Node(id="PERSON::jonathan_miller", name="Jonathan Miller", kind="PERSON"),
        Node(id="ORG::acme", name="Acme", kind="ORG"),
    ]
    edges = [
        Edge(id="PERSON::trevor::KNOWS::PERSON::william_smith", source="PERSON::trevor",
             target="PERSON::william_smith", relation="KNOWS", snippet="I know William Smith",
             touched_at=T0, created_at=T0),
        Edge(id="PERSON::jonathan_miller::WORKS_AT::ORG::acme", source="PERSON::jonathan_miller",
             target="ORG::acme", relation="WORKS_AT", snippet="Jonathan Miller works at Acme",
             touched_at=T0, created_at=T0),
    ]  # fmt: skip
    memory.import_graph(Graph(nodes=nodes, edges=edges, self_id="PERSON::trevor"))
    return memory


def extraction_then_review(steps: list[Step], review: str):
    """Extraction requests (they carry tools) get ``steps`` in turn; reviews get ``review``."""
    queue = list(steps)

    def respond(body: dict) -> Step:
        if "tools" in body:
            return queue.pop(0) if queue else calls(FINISH)
        return Step(content=review)

    return respond


def review_answer(node_id: str, confidence: float) -> str:
    return json.dumps({"candidates": [{"id": node_id, "confidence": confidence, "reason": "r"}]})


def ingest(memory: Memory, serve, steps: list[Step], review: str = "{}", text: str = "hello"):
    server = serve(extraction_then_review(steps, review))
    # Each call is a conversation of its own, as the next chat would be.
    number = len(memory.store.list_conversations(memory.user)) + 1
    transcript = chat(text, *said(steps), conversation_id=f"c{number}")
    report = memory.ingest(transcript, llm=llm_for(server))
    return report, server


def node(memory: Memory, node_id: str) -> Node | None:
    found = memory.store.get_nodes(memory.user, [node_id])
    return found[0] if found else None


def test_a_nickname_merges_without_review(known: Memory, serve) -> None:
    golf = relation("me", "PLAYS_GOLF_WITH", "Bill Smith")
    report, server = ingest(known, serve, [calls(entity("Bill Smith"), golf, FINISH)])
    assert report.merged == [("Bill Smith", "PERSON::william_smith")] and report.created == []
    assert not any("response_format" in r for r in server.requests)  # no review asked
    william = node(known, "PERSON::william_smith")
    assert "Bill Smith" in william.aliases and william.conversations == ["c1"]
    assert report.relations_added == ["PERSON::trevor::PLAYS_GOLF_WITH::PERSON::william_smith"]
    # The new alias is searchable at once.
    assert known.recall("Any news from Bill Smith?").fired


def test_a_person_and_an_org_with_one_name_never_merge(known: Memory, serve) -> None:
    report, _ = ingest(known, serve, [calls(
        entity("Acme"), relation("User", "IS_FRIENDS_WITH", "Acme"), FINISH)])  # fmt: skip
    assert report.created == ["PERSON::acme"] and report.merged == []
    assert node(known, "ORG::acme").aliases == []


@pytest.mark.parametrize(
    ("confidence", "merged", "flagged"),
    [(0.95, True, False), (0.85, True, True), (0.5, False, False)],
)
def test_review_banding(known: Memory, serve, confidence, merged, flagged) -> None:
    report, server = ingest(
        known,
        serve,
        [calls(entity("Jonathan Millar"), relation("Jonathan Millar", "WORKS_AT", "Acme"), FINISH)],
        review=review_answer("PERSON::jonathan_miller", confidence),
        text="Jonathan Millar from Acme called.",
    )
    (review,) = [r for r in server.requests if "tools" not in r]
    prompt = review["messages"][1]["content"]
    # The reviewer sees the candidate's neighbourhood and the conversation.
    assert "Jonathan Miller -WORKS_AT-> Acme" in prompt and "from Acme called" in prompt
    if merged:
        assert report.merged == [("Jonathan Millar", "PERSON::jonathan_miller")]
        assert report.reinforced == ["PERSON::jonathan_miller::WORKS_AT::ORG::acme"]
    else:
        assert report.created == ["PERSON::jonathan_millar"]
        assert node(known, "PERSON::jonathan_miller").aliases == []
    assert bool(report.flagged) == flagged
    assert bool(known.flagged_merges()) == flagged
    if flagged:
        assert "'Jonathan Millar' (PERSON) merged into PERSON::jonathan_miller" in report.flagged[0]
        assert "0.85" in known.flagged_merges()[0]


@pytest.mark.parametrize("answer", ["no idea", '{"candidates": [{"id": "x"}]}', ""])
def test_an_unusable_review_keeps_them_separate(known: Memory, serve, answer) -> None:
    report, _ = ingest(known, serve, [calls(entity("Jonathan Millar"), FINISH)], review=answer)
    assert report.created == ["PERSON::jonathan_millar"] and report.merged == []
    assert any("unusable answer" in note for note in report.dropped)


def test_a_new_node_never_takes_an_existing_id(known: Memory, serve) -> None:
    # "ACME" resembles "Acme" -> review says different -> a new node, numbered.
    report, _ = ingest(known, serve, [calls(entity("Acme!", kind="ORG"), FINISH)],
                       review=review_answer("ORG::acme", 0.1))  # fmt: skip
    assert report.created == ["ORG::acme_2"]
    assert node(known, "ORG::acme").name == "Acme"


def test_placeholders_go_to_the_self_node(known: Memory, serve) -> None:
    report, _ = ingest(known, serve, [calls(
        entity("User", properties={"age": "41"}), relation("me", "LIVES_IN", "Oslo"),
        relation("myself", "LIKES", "Oslo"), FINISH)])  # fmt: skip
    assert node(known, "PERSON::trevor").properties == {"age": "41"}
    assert "PERSON::trevor::LIVES_IN::OTHER::oslo" in report.relations_added
    assert not node(known, "PERSON::user")


def test_the_self_node_is_fixed_by_the_first_relation(memory: Memory, serve) -> None:
    ingest(memory, serve, [calls(entity("Maya"), entity("Oslo", kind="PLACE"),
                                 relation("Maya", "LIVES_IN", "Oslo"), FINISH)])  # fmt: skip
    assert memory.store.get_self(memory.user) == "PERSON::maya"
    ingest(memory, serve, [calls(entity("Lund", kind="PLACE"),
                                 relation("Lund", "NEAR", "Oslo"), FINISH)])  # fmt: skip
    assert memory.store.get_self(memory.user) == "PERSON::maya"  # kept


def test_a_placeholder_user_until_the_name_is_known(memory: Memory, serve) -> None:
    ingest(memory, serve, [calls(entity("Oslo", kind="PLACE"), relation("I", "LIVES_IN", "Oslo"),
                                 FINISH)])  # fmt: skip
    assert memory.store.get_self(memory.user) == "PERSON::user"
    assert node(memory, "PERSON::user").name == "User"

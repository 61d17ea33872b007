"""The deterministic merge rules (SPEC 3.3) and the review banding (SPEC 3.4)."""

from __future__ import annotations

from pegasus.model import Kind, Node
from pegasus.write.merge import Action, decide, edit_similarity, words_overlap
from pegasus.write.review import band, parse_answer


def node(name: str, kind: str = "PERSON", aliases=(), ident: str | None = None) -> Node:
    return Node(id=ident or f"{kind}::{name.lower()}", name=name, kind=kind, aliases=list(aliases))


def test_exact_name_merges_only_within_the_kind() -> None:
    sam_org = node("Sam", "ORG")
    assert decide("sam", Kind.PERSON, [sam_org]).action == Action.NEW
    assert decide("Sam", Kind.ORG, [sam_org]).target == sam_org.id


def test_alias_merges_unless_two_nodes_claim_it() -> None:
    one = node("Robert Smith", aliases=["Bobby"])
    two = node("Roberta Jones", aliases=["Bobby"], ident="PERSON::rj")
    assert decide("Bobby", Kind.PERSON, [one]).target == one.id
    held = decide("Bobby", Kind.PERSON, [one, two])
    assert held.action == Action.REVIEW and set(held.candidates) == {one.id, two.id}


def test_william_bill_and_will() -> None:
    william = node("William")
    assert decide("Bill", Kind.PERSON, [william]).target == william.id
    assert decide("Will", Kind.PERSON, [william]).target == william.id
    assert decide("Billy", Kind.PERSON, [william]).rule == "nickname"
    bill = node("Bill")
    assert decide("William", Kind.PERSON, [bill]).target == bill.id


def test_nicknames_need_the_same_surname_and_are_ambiguous_when_shared() -> None:
    smith = node("William Smith")
    assert decide("Bill Smith", Kind.PERSON, [smith]).target == smith.id
    assert decide("Bill Jones", Kind.PERSON, [smith]).action != Action.MERGE
    willis = node("Will", ident="PERSON::will2")
    both = decide("Bill", Kind.PERSON, [node("William"), willis])
    assert both.action == Action.REVIEW


def test_nicknames_are_for_people_only() -> None:
    assert decide("Bill", Kind.ORG, [node("William", "ORG")]).action != Action.MERGE


def test_resemblance_only_nominates_for_review() -> None:
    jon = node("Jonathan Miller")
    assert edit_similarity("Jonathan Millar", "Jonathan Miller") > 0.8
    assert decide("Jonathan Millar", Kind.PERSON, [jon]).action == Action.REVIEW
    assert words_overlap("Nova", "Nova AI") and words_overlap("Bank of Oslo", "Oslo Bank")
    assert not words_overlap("Bank of Oslo", "Museum of Art")
    assert decide("Nova", Kind.ORG, [node("Nova AI", "ORG")]).action == Action.REVIEW
    assert decide("Acme", Kind.ORG, [node("Nova AI", "ORG")]).action == Action.NEW


def test_an_extractor_hint_can_only_send_to_review() -> None:
    boss = node("Joshua")
    decision = decide("my manager", Kind.PERSON, [boss], hints=["Joshua"])
    assert decision.action == Action.REVIEW and decision.candidates == (boss.id,)


def test_banding() -> None:
    assert band({"a": 0.95, "b": 0.5}) == ("a", 0.95, False)
    assert band({"a": 0.85}) == ("a", 0.85, True)
    assert band({"a": 0.70}) == ("a", 0.70, True)
    assert band({"a": 0.5}) == (None, 0.5, False)
    assert band({"a": 0.80, "b": 0.92}) == ("b", 0.92, False)  # the best qualifying wins
    assert band({}) == (None, 0.0, False)


def test_unusable_review_answers() -> None:
    ids = ["PERSON::a"]
    assert parse_answer("I think so!", ids) is None
    assert parse_answer('{"candidates": [{"id": "PERSON::a", "confidence": 7}]}', ids) is None
    assert parse_answer('{"candidates": "yes"}', ids) is None
    unknown = parse_answer('{"candidates": [{"id": "PERSON::zz", "confidence": 0.99}]}', ids)
    assert unknown is not None and unknown.target is None
    fenced = parse_answer(
        '```json\n{"candidates": [{"id": "PERSON::a", "confidence": 0.95}]}\n```', ids
    )
    assert fenced is not None and fenced.target == "PERSON::a"

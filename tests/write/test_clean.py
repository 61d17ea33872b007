"""Cleaning rules (SPEC 3.2), each with its note."""

from __future__ import annotations

from datetime import UTC, datetime

from pegasus.model import Kind, Stability
from pegasus.prompts.extract import AddEntity, AddRelation
from pegasus.write.clean import PROVISIONAL_CONFIDENCE, clean_batch, relation_label


def rel(source="Ann", label="KNOWS", target="Bob", **extra) -> AddRelation:
    return AddRelation(source=source, relation=label, target=target, snippet="said so", **extra)


def ent(name, kind="PERSON", **extra) -> AddEntity:
    return AddEntity(name=name, kind=kind, **extra)


def nothing_known(_: str) -> bool:
    return False


def test_labels_are_repaired_or_dropped() -> None:
    assert relation_label("works at") == "WORKS_AT"
    assert relation_label("worksAt") == "WORKS_AT"
    assert relation_label(" has-Boss ") == "HAS_BOSS"
    assert relation_label("is the younger sister of") is None  # five words
    assert relation_label("!!!") is None
    assert relation_label("2nd_job") is None
    # Only spacing and case are repaired: hostile text is dropped, never made a label.
    assert relation_label("WORKS_AT]->() DELETE r //") is None
    assert relation_label("KNOWS`) DETACH DELETE n") is None
    assert relation_label("likes'; DROP TABLE edges;--") is None


def test_repairs_are_noted() -> None:
    batch = clean_batch(
        [ent("ann"), ent("Bob")],
        [
            rel(
                label="works with",
                stability="forever",
                cardinality="several",
                expires_at="2027-01-01",
            )
        ],  # fmt: skip
        nothing_known,
    )
    (relation,) = batch.relations
    assert batch.entities[0].name == "Ann"
    assert relation.relation == "WORKS_WITH" and relation.stability == Stability.STABLE
    assert relation.expires_at is None  # expiry only on temporary relations
    assert any("unknown stability 'forever'" in n for n in batch.notes)
    assert any("expiry removed from a stable relation" in n for n in batch.notes)


def test_expiry_stays_on_temporary_relations() -> None:
    temporary = rel(stability="time_bound", expires_at="2027-01-01")
    batch = clean_batch([ent("Ann"), ent("Bob")], [temporary], nothing_known)
    assert batch.relations[0].expires_at == datetime(2027, 1, 1, tzinfo=UTC)


def test_what_cannot_be_repaired_is_dropped_with_a_note() -> None:
    batch = clean_batch(
        [ent("Ann")],
        [
            rel(target="ann"),
            rel(label="is the younger sister of"),
            rel("Zed", "KNOWS", "Yan"),
            rel("me", "KNOWS", "I"),
        ],  # fmt: skip
        nothing_known,
    )
    assert batch.relations == []
    assert len(batch.notes) == 4
    assert any("cannot relate to itself" in n for n in batch.notes)
    assert any("neither end is a known entity" in n for n in batch.notes)


def test_one_unknown_end_becomes_a_provisional_node() -> None:
    batch = clean_batch([ent("Ann")], [rel("Ann", "OWNS", "Rex")], nothing_known)
    rex = batch.entity_named("rex")
    assert rex is not None and rex.provisional and rex.kind == Kind.OTHER
    assert rex.confidence == PROVISIONAL_CONFIDENCE
    assert len(batch.relations) == 1 and "provisional" in batch.notes[0]


def test_ends_known_to_the_memory_or_the_user_need_no_entity() -> None:
    batch = clean_batch([], [rel("User", "WORKS_AT", "Acme")], lambda name: name == "Acme")
    assert len(batch.relations) == 1 and batch.entities == [] and batch.notes == []


def test_repeated_entities_are_combined() -> None:
    batch = clean_batch(
        [
            ent("Ann", aliases=["Annie"], properties={"age": "30"}, confidence=0.6),
            ent("ann", aliases=["A."], properties={"city": "Oslo"}, confidence=0.9),
            ent("Ann", kind="ORG"),
        ],  # fmt: skip
        [],
        nothing_known,
    )
    person, org = batch.entities
    assert person.aliases == ["Annie", "A."] and person.confidence == 0.9
    assert person.properties == {"age": "30", "city": "Oslo"} and org.kind == Kind.ORG


def test_an_empty_batch_is_valid() -> None:
    batch = clean_batch([], [], nothing_known)
    assert (batch.entities, batch.relations, batch.notes) == ([], [], [])

"""What was said: snippets checked against the transcript, with who said them, and
entities, aliases and properties kept only where the conversation says them."""

from __future__ import annotations

from pegasus.memory import Memory
from pegasus.model import Kind
from pegasus.write.clean import Batch, Entity, Relation
from pegasus.write.provenance import SAID_BY, Heard, attribute, ground, said_where
from pegasus.write.transcript import parse_transcript
from tests.write.conftest import FINISH, calls, entity, ingest_steps, relation

TURNS = parse_transcript(
    [
        {"role": "user", "content": "I adopted a greyhound called Pepper last week."},
        {"role": "assistant", "content": "Greyhounds are gentle. Do you also run with her?"},
        {"role": "user", "content": "Yes, every morning before work."},
        {"role": "assistant", "content": "So you live near the river park, I think."},
        {"role": "user", "content": "Anyway, work has been busy."},
    ]
).turns


def _relation(snippet: str) -> Relation:
    return Relation("User", "ADOPTED", "Pepper", snippet)


def test_a_snippet_said_by_the_user_is_kept_and_attributed() -> None:
    kept, notes = attribute([_relation("I adopted a greyhound called Pepper")], TURNS)
    assert notes == [] and kept[0].properties[SAID_BY] == "user"


def test_a_corrected_typo_still_counts_as_said() -> None:
    # The model fixed "greyhund" to "greyhound" and folded the spacing.
    turns = parse_transcript([{"role": "user", "content": "I adopted  a greyhund called Pepper"}])
    assert said_where("I adopted a greyhound called Pepper", turns.turns) is not None


def test_a_snippet_nobody_said_is_dropped_with_a_note() -> None:
    kept, notes = attribute([_relation("I have owned dogs all my life.")], TURNS)
    assert kept == [] and "said in no turn" in notes[0]


def test_the_assistants_words_count_only_when_the_user_confirms_them() -> None:
    confirmed = _relation("Do you also run with her?")
    unconfirmed = _relation("So you live near the river park")
    kept, notes = attribute([confirmed, unconfirmed], TURNS)
    assert [r.snippet for r in kept] == ["Do you also run with her?"]
    assert kept[0].properties[SAID_BY] == "assistant, confirmed by the user"
    assert notes == [
        "relation User -ADOPTED-> Pepper: dropped, only the assistant said it"
    ]  # fmt: skip


def test_passages_joined_by_an_ellipsis_must_each_be_said() -> None:
    assert said_where("I adopted a greyhound ... every morning before work", TURNS) is not None
    assert said_where("I adopted a greyhound ... every evening after dinner", TURNS) is None


def test_the_speaker_of_a_conversation_among_people_is_recorded(memory: Memory, serve) -> None:
    transcript = parse_transcript(
        {"id": "friends", "turns": [
            {"role": "user", "name": "Lena", "content": "I just adopted a greyhound."},
            {"role": "user", "name": "Omar", "content": "I am training for a marathon."},
        ]}
    )  # fmt: skip
    steps = [
        calls(
            entity("Lena"), entity("Omar"), entity("Greyhound", kind="OTHER"),
            entity("Marathon", kind="EVENT"),
            relation("Lena", "ADOPTED", "Greyhound", "I just adopted a greyhound."),
            relation("Omar", "TRAINING_FOR", "Marathon", "I am training for a marathon."),
            relation("Omar", "OWNS", "Greyhound", "Omar owns three greyhounds."),
            FINISH,
        )
    ]  # fmt: skip
    report = ingest_steps(memory, serve, steps, transcript=transcript)
    edges = {e.relation: e for e in memory.export().edges}
    assert edges["ADOPTED"].properties[SAID_BY] == "Lena"
    assert edges["TRAINING_FOR"].properties[SAID_BY] == "Omar"
    assert "OWNS" not in edges
    assert any("Omar -OWNS-> Greyhound: dropped" in note for note in report.dropped)


def _batch(*entities: Entity, relations: tuple[Relation, ...] = ()) -> Batch:
    return Batch(entities=list(entities), relations=list(relations))


def test_an_entity_is_kept_when_said_even_with_a_typo_or_used_by_a_kept_claim() -> None:
    batch = _batch(Entity("Pepper", Kind.PERSON), Entity("Greyhund", Kind.OTHER),
                   Entity("River Park", Kind.PLACE), Entity("Lisbon", Kind.PLACE),
                   Entity("Dr. Rui Almeida", Kind.PERSON))  # fmt: skip
    notes = ground(batch, TURNS)
    # The assistant alone spoke of the river park; nobody of Lisbon or Dr. Almeida.
    assert [e.name for e in batch.entities] == ["Pepper", "Greyhund"]
    assert notes == [f"entity {name!r}: dropped, no turn names it and no claim uses it"
                     for name in ("River Park", "Lisbon", "Dr. Rui Almeida")]  # fmt: skip
    used = _batch(
        Entity("River Park", Kind.PLACE),
        relations=(Relation("User", "RUNS_IN", "river park", "every morning"),),
    )
    assert ground(used, TURNS) == [] and used.entities[0].name == "River Park"


def test_aliases_and_properties_nobody_said_are_dropped_with_a_note() -> None:
    pepper = Entity("Pepper", Kind.PERSON, aliases=["Pep", "the greyhound", "Pepper Pots"],
                    properties={"breed": "greyhound", "adopted": "last week (as of 2026-10)",
                                "age": "7 years", "owner": "Marta Souza"})  # fmt: skip
    notes = ground(_batch(pepper), TURNS)
    assert pepper.aliases == ["the greyhound"]
    assert pepper.properties == {"breed": "greyhound", "adopted": "last week (as of 2026-10)"}
    assert len(notes) == 3 and all("said in no turn" in note for note in notes)


def test_a_name_or_number_nobody_said_is_not_passed_off_by_a_near_one() -> None:
    """Close is not said: another name sharing letters, a value whose name or number
    is new, beside ones said in other words."""
    heard = Heard(parse_transcript([{"role": "user", "content": (
        "My friend Martin lives in Porto. I'm a nurse, and the clinic made "
        "almost a million dollars last year.")}]).turns)  # fmt: skip
    assert heard.name("Martin") and not heard.name("Martha") and not heard.name("Portland")
    assert heard.value("nurse") and heard.value("lives in Porto")
    assert heard.value("almost $1M a year (as of 2026)")  # "a million", in other words
    for invented in ("nurse at Siemens", "lives in Lisbon", "5000", "34", "$2M a year"):
        assert not heard.value(invented), invented


def test_a_provisional_end_of_a_dropped_claim_goes_with_it() -> None:
    batch = _batch(Entity("Pepper", Kind.PERSON),
                   Entity("Porto", Kind.OTHER, provisional=True))  # fmt: skip
    assert ground(batch, TURNS) == [
        "entity 'Porto': dropped, no turn names it and no claim uses it"
    ]


def test_a_model_answering_from_another_conversation_stores_nothing(memory: Memory, serve) -> None:
    """The model's calls are about other people, with their aliases and properties:
    nothing of them is stored, and the report says why each went."""
    elsewhere = [
        entity("Joshua", aliases=["Josh"], properties={"employer": "Deloitte", "title": "partner"}),
        entity("Nova AI", "ORG", properties={"offer": "CFO role at $500k"}),
        entity("Ana", properties={"job": "architect at Siza studio", "age": "34"}),
        relation("Joshua", "WORKS_AT", "Nova AI", "Joshua joined Nova AI as a partner"),
        FINISH,
    ]
    chat_turns = parse_transcript({"id": "porto", "turns": [
        {"role": "user", "content": "Ana is in Porto this week."},
        {"role": "assistant", "content": "Lovely city. Is she there for work?"},
        {"role": "user", "content": "Just visiting friends."}]})  # fmt: skip
    report = ingest_steps(memory, serve, [calls(*elsewhere)], chat_turns)
    graph = memory.export()
    assert [node.name for node in graph.nodes if node.id != graph.self_id] == ["Ana"]
    assert all(not node.properties and not node.aliases for node in graph.nodes)
    assert graph.edges == []
    for what in ("'Joshua': dropped", "'Nova AI': dropped", "job='architect at Siza studio'",
                 "age='34'", "said in no turn"):  # fmt: skip
        assert any(what in note for note in report.dropped), what

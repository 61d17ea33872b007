"""Snippets that were said: checked against the transcript, with who said them."""

from __future__ import annotations

from pegasus.memory import Memory
from pegasus.write.clean import Relation
from pegasus.write.provenance import SAID_BY, attribute, said_where
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

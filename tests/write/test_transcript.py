"""What comes in: every turn is kept, dropped with a note, or refused with a message."""

from __future__ import annotations

import pytest

from pegasus.errors import ValidationError
from pegasus.memory import Memory
from pegasus.write.transcript import MAX_TURN_CHARS, parse_transcript, split_long
from tests.write.conftest import FINISH, calls, entity, llm_for


@pytest.mark.parametrize(
    ("role", "kept"),
    [("User", "user"), ("Human", "user"), ("AI", "assistant"), (" assistant ", "assistant")],
)
def test_other_names_of_the_two_speakers(role: str, kept: str) -> None:  # fmt: skip
    transcript = parse_transcript([{"role": role, "content": "I moved to Oslo"}])
    assert [(t.role, t.content) for t in transcript.turns] == [(kept, "I moved to Oslo")]


def test_system_and_tool_turns_are_dropped_with_a_note() -> None:
    transcript = parse_transcript(
        [{"role": "system", "content": "be nice"}, {"role": "user", "content": "hi"},
         {"role": "tool", "content": "{}"}]
    )  # fmt: skip
    assert [t.role for t in transcript.turns] == ["user"]
    assert transcript.notes == ("turn 1: a system turn, not the user's words",
                                "turn 3: a tool turn, not the user's words")  # fmt: skip


@pytest.mark.parametrize("role", ["narrator", "Trevor", ""])
def test_an_unknown_role_refuses_the_transcript(role: str) -> None:
    with pytest.raises(ValidationError, match="neither the user nor the assistant"):
        parse_transcript([{"role": "user", "content": "hi"}, {"role": role, "content": "x"}])


def test_words_under_other_keys_and_part_types_are_read() -> None:
    transcript = parse_transcript([
        {"role": "user", "text": "I moved to Oslo"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Welcome!"}]},
        {"role": "user", "content": [{"type": "input_text", "text": "Thanks"},
                                     {"type": "image_url", "image_url": "x.png"}]},
    ])  # fmt: skip
    assert [t.content for t in transcript.turns] == ["I moved to Oslo", "Welcome!", "Thanks"]
    assert transcript.notes == ()


def test_a_turn_whose_words_are_not_found_is_noted() -> None:
    transcript = parse_transcript([
        {"role": "user", "content": "I moved to Oslo"},
        {"role": "assistant", "tool_calls": [{"id": "1"}], "content": None},  # no words: fine
        {"role": "user", "body": "Where I met Ana"},
        {"role": "user", "content": [{"type": "audio", "data": "..."}]},
    ])  # fmt: skip
    assert [t.content for t in transcript.turns] == ["I moved to Oslo"]
    assert transcript.notes == (
        "turn 3: a user turn with no text found in it (keys: body, role); nothing read from it",
        "turn 4: a user turn with no text found in it (keys: content, role); nothing read from it",
    )


def test_a_transcript_without_words_is_refused() -> None:
    with pytest.raises(ValidationError, match="no turn"):
        parse_transcript([{"role": "user", "content": "  "}, {"role": "system", "content": "x"}])


def test_long_turns_are_split_at_sentence_ends_and_lose_nothing() -> None:
    sentence = "I went to the market with Ann and we bought apples. "
    text = (sentence * (3 * MAX_TURN_CHARS // len(sentence))).strip()
    parts = split_long(text)
    assert len(parts) == 4 and all(len(part) <= MAX_TURN_CHARS for part in parts)
    assert all(part.endswith(".") for part in parts)
    assert " ".join(parts) == text
    assert split_long("x" * (MAX_TURN_CHARS + 5)) == ["x" * MAX_TURN_CHARS, "x" * 5]


def test_a_huge_turn_is_read_whole(memory: Memory, serve) -> None:
    tail = "My sister Maren lives in Bergen."
    text = "Nothing much. " * (MAX_TURN_CHARS // 14) + tail
    server = serve(lambda body: calls(entity("Maren"), FINISH))
    report = memory.ingest(parse_transcript([{"role": "user", "content": text}]),
                           llm=llm_for(server))  # fmt: skip
    sent = "".join(str(request) for request in server.requests)
    assert tail in sent  # the tail reached the model
    assert any("read in 2 parts" in note for note in report.dropped)
    assert any("read in 2 parts" in note for note in memory.export().conversations[0].notes)

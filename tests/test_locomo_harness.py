"""The LoCoMo harness on a two-session conversation of the same shape written for the
tests, with its recorded extraction replayed through the write path over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.locomo import __main__ as harness
from bench.locomo.data import load
from pegasus.write.provenance import SAID_BY

MINI = Path(__file__).parent / "fixtures" / "locomo_mini"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[dict, dict, Path]:
    out = tmp_path_factory.mktemp("locomo") / "mini"
    summary = harness.main(
        ["--data", str(MINI / "conversations.json"), "--recorded", str(MINI / "recorded"),
         "--workdir", str(out.parent / "stores"), "--out", str(out)]
    )  # fmt: skip
    written = json.loads(out.with_suffix(".json").read_text())
    assert out.with_suffix(".png").stat().st_size > 0
    assert "| overall | 5 |" in out.with_suffix(".md").read_text()
    return summary, written, out.parent / "stores" / "mini-1.db"


def test_the_conversation_becomes_dated_transcripts_among_people() -> None:
    (conversation,) = load(MINI / "conversations.json")
    assert conversation.owner == "Lena" and len(conversation.sessions) == 2
    first = conversation.sessions[0].transcript(conversation.sample)
    assert first.id == "mini-1-s01" and first.started_at.isoformat() == "2024-03-04T10:05:00+00:00"
    assert [(t.role, t.speaker) for t in first.turns[:2]] == [("user", "Lena"), ("user", "Omar")]
    assert first.turns[2].content.endswith(
        "[shares a photo: a photo of a clay bowl on a pottery wheel]"
    )
    # The never-asked question (category 5) is not scored.
    assert len(conversation.questions) == 5 and {q.category for q in conversation.questions} == {
        1,
        2,
        3,
        4,
    }


def test_snippets_are_traced_to_the_turn_that_said_them() -> None:
    (conversation,) = load(MINI / "conversations.json")
    assert conversation.locate("my first time at the wheel") == "D1:3"
    assert conversation.locate("Yesterday I adoptd a greyhound called Pepper") == "D2:2"  # a typo
    assert conversation.locate("I have never owned a dog") is None


def test_every_question_is_scored_against_the_baselines(run) -> None:
    summary, written, _ = run
    overall = summary["overall"]
    assert overall["questions"] == 5 and overall["empty_blocks"] == 0
    assert overall["ceiling"] == 1.0  # every evidence turn is some claim's snippet
    assert overall["hit"]["pegasus"] == 1.0 and overall["full"]["pegasus"] == 1.0
    assert set(overall["hit"]) == {"pegasus", "writeup", "bm25", "dense", "fused", "claims-bm25"}
    assert 0 < overall["tokens_mean"] <= 400
    assert {group for group in summary} == {
        "overall", "1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"
    }  # fmt: skip
    for row in written["questions"]:
        # The raw baselines were given the block's own budget.
        assert row["budget"] == row["tokens"] > 0
    multi = next(r for r in written["questions"] if r["category"] == 1)
    assert multi["evidence"] == ["D1:6", "D2:5"] and multi["full"]["pegasus"]


def test_the_replay_went_through_the_write_path(run) -> None:
    from pegasus.memory import Memory

    with Memory.open(f"sqlite:///{run[2]}", user="Lena") as memory:
        edges = {e.relation: e for e in memory.export().edges}
        assert edges["ADOPTED"].properties[SAID_BY] == "Lena"
        assert edges["ADOPTED"].properties["date"] == "2024-04-19"
        assert edges["BUILT"].properties[SAID_BY] == "Omar"
        assert memory.store.get_self(memory.user) == "PERSON::lena"


def test_a_missing_data_file_says_where_to_point(tmp_path) -> None:
    with pytest.raises(SystemExit, match="pass --data PATH"):
        load(tmp_path / "nowhere.json")

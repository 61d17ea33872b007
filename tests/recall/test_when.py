"""Time words as windows of dates, and claims ranked by the time they are about."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from pegasus.interchange import Graph
from pegasus.memory import Memory
from pegasus.recall.when import claim_window, overlaps, window
from pegasus.stores import Changes, Store
from tests.recall.test_cues import LENA, _claim, _node

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("What did she do in May?", (date(2024, 5, 1), date(2024, 5, 31))),
        ("What happened in July 2022?", (date(2022, 7, 1), date(2022, 7, 31))),
        ("Where was I in September?", (date(2023, 9, 1), date(2023, 9, 30))),
        ("the trip two weeks ago", (date(2024, 4, 14), date(2024, 4, 20))),
        ("yesterday's match", (date(2024, 4, 30), date(2024, 4, 30))),
        ("last summer", (date(2023, 6, 1), date(2023, 8, 31))),
        ("this spring", (date(2024, 3, 1), date(2024, 5, 31))),
        ("back in 2021", (date(2021, 1, 1), date(2021, 12, 31))),
        ("I may go later", None),
        ("When did he go?", None),
    ],
)
def test_time_words_become_windows(message: str, expected) -> None:
    assert window(message, NOW) == expected


def test_a_claim_is_about_its_stored_date_else_the_day_it_was_said() -> None:
    said = datetime(2024, 4, 20, tzinfo=UTC)
    assert claim_window("2023-05-07", said) == (date(2023, 5, 7), date(2023, 5, 7))
    assert claim_window("2023-05", said) == (date(2023, 5, 1), date(2023, 5, 31))
    assert claim_window("the week before 2023-05-25", said)[0] == date(2023, 5, 25)
    assert claim_window("", said) == (date(2024, 4, 20), date(2024, 4, 20))
    assert overlaps(claim_window("2023-05", said), window("in May 2023", NOW))


def test_the_claim_about_the_named_time_ranks_first(store: Store, user: str) -> None:
    lisbon, rome = _node("Lisbon trip", "EVENT"), _node("Rome trip", "EVENT")
    memory = Memory.open(store, user=user)
    memory.import_graph(Graph(nodes=[LENA, lisbon, rome], edges=[
        _claim(LENA, "WENT_ON", lisbon, "We went to Lisbon for a long weekend.",
               properties={"date": "2023-07"}),
        _claim(LENA, "WENT_ON", rome, "We went to Rome for a long weekend.",
               properties={"date": "2023-03"}),
    ]))  # fmt: skip
    store.apply(user, Changes(self_id=LENA.id))
    march = memory.recall("Where did we go for a long weekend in March 2023?", now=NOW)
    july = memory.recall("Where did we go for a long weekend in July 2023?", now=NOW)
    assert march.shown[0].claim == "Lena -WENT_ON-> Rome trip"
    assert july.shown[0].claim == "Lena -WENT_ON-> Lisbon trip"
    assert '(about "2023-03", said 2024-04-20)' in march.memory[0]

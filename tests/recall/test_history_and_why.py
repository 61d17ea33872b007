"""History the message asks about, and why a memory was or was not recalled."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from pegasus.interchange import Graph
from pegasus.memory import Memory
from pegasus.recall.presets import DEFAULT
from pegasus.stores import Changes, Store
from tests.recall.test_cues import GRAPH, LENA, LIBRARY, OMAR, RACE, _claim, _node

NOW = datetime(2024, 5, 1, tzinfo=UTC)
LISBON = _node("Lisbon", "PLACE")
PORTO = _node("Porto", "PLACE")
TRIP = _claim(OMAR, "PLANS_TO_VISIT", LISBON, "In April I plan to visit Lisbon with my brother.",
              stability="time_bound", expires_at=datetime(2024, 4, 25, tzinfo=UTC))  # fmt: skip
OLD_HOME = _claim(OMAR, "LIVES_IN", PORTO, "I live in Porto near the river.",
                  superseded_by=f"{OMAR.id}::LIVES_IN::{LISBON.id}")  # fmt: skip
NEW_HOME = _claim(OMAR, "LIVES_IN", LISBON, "We moved to Lisbon last month.")


@pytest.fixture
def memory(store: Store, user: str) -> Memory:
    memory = Memory.open(store, user=user)
    memory.import_graph(
        Graph(nodes=[*GRAPH.nodes, LISBON, PORTO], edges=[*GRAPH.edges, TRIP, OLD_HOME, NEW_HOME])
    )
    store.apply(user, Changes(self_id=LENA.id))
    return memory


def test_an_ended_plan_is_history_when_asked_about(memory: Memory) -> None:
    result = memory.recall("When was Omar planning to visit Lisbon with his brother?", now=NOW)
    assert TRIP.id in result.used_edges
    line = next(line for line in result.memory if "PLANS_TO_VISIT" in line)
    assert "(past, until 2024-04-25, said 2024-04-20)" in line


def test_a_replaced_claim_is_history_never_a_current_fact(memory: Memory) -> None:
    result = memory.recall("Did Omar live in Porto near the river?", now=NOW)
    line = next(line for line in result.memory if '"Porto"' in line)
    assert "past, since replaced" in line


def test_history_stays_out_when_the_message_is_not_about_it(memory: Memory) -> None:
    result = memory.recall("Omar says hello", now=NOW)
    assert OMAR.id in {f.id for f in result.fired}
    assert not {TRIP.id, OLD_HOME.id} & set(result.used_edges)
    assert "past," not in result.text


def test_every_fired_memory_and_shown_claim_says_why(memory: Memory) -> None:
    result = memory.recall("How is the Harbour Library job going?", now=NOW)
    library = next(f for f in result.fired if f.id == LIBRARY.id)
    assert "matched node 'Harbour Library'" in library.why or "claim reached" in library.why
    shown = {s.edge_id: s for s in result.shown}
    works = shown[f"{OMAR.id}::WORKS_AT::{LIBRARY.id}"]
    assert works.claim == "Omar -WORKS_AT-> Harbour Library" and works.said == "2024-04-20"
    assert works.strength > 0 and works.score > 0


def test_why_not_names_the_step_that_stopped_an_entity(memory: Memory) -> None:
    recaller = memory.recaller()
    user = memory.user
    assert recaller.why_not(user, "How is the library job?", "Harbour Library", NOW) == (
        "Harbour Library is in the block"
    )
    quiet = recaller.why_not(user, "What's the weather like today?", "Pepper", NOW)
    assert quiet.startswith("no cue reached Pepper: best name match")
    assert "best claim match" in quiet
    nobody = recaller.why_not(user, "anything", "Nobody", NOW)
    assert nobody == "nothing in memory is called 'Nobody'"
    tight = memory.recaller(replace(DEFAULT, max_tokens=20))
    cut = tight.why_not(user, "How is the library job?", "Harbour Library", NOW)
    assert "fired, but none of its claims fit in the block" in cut
    # Names only, and no snippets (Omar's would bring in his marathon claim).
    names_only = memory.recaller(replace(DEFAULT, claim_cues=False, context_threshold=2.0))
    far = names_only.why_not(user, "Harbour Library", RACE.name, NOW)
    assert far.startswith("Bristol half marathon was reached (hop 2 from Omar through")
    assert far.endswith("under the fire threshold 0.30")
    crowded = memory.recaller(
        replace(DEFAULT, claim_cues=False, context_threshold=2.0, max_fired=1)
    )
    assert crowded.why_not(user, "Harbour Library", OMAR.name, NOW).endswith(
        "above the fire threshold, but 1 nodes scored higher"
    )

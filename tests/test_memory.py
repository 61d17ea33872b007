"""The facade: one core per process shared by owners and threads, and verbs that
answer with models of a stable JSON form."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from pegasus.errors import ValidationError
from pegasus.memory import Memory, Pegasus
from pegasus.recall.presets import DEFAULT
from pegasus.stores import Store
from tests.conftest import SEED_GRAPH

NOW = datetime(2026, 9, 20, 9, 0, tzinfo=UTC)
QUESTION = "My boss Joshua wants to talk about the Nova AI offer"


def test_recallers_are_kept_per_settings_and_share_one_reference(store: Store) -> None:
    core = Pegasus(store)
    narrow = replace(DEFAULT, max_fired=3)  # same preset name, other settings
    assert core.recaller(narrow) is not core.recaller(DEFAULT)
    assert core.recaller(narrow).settings.max_fired == 3
    assert core.recaller(replace(DEFAULT, max_fired=3)) is core.recaller(narrow)
    assert core.recaller(narrow).ordinariness is core.recaller(DEFAULT).ordinariness


def test_owners_share_a_core_and_never_each_other_s_memory(
    store: Store, users: tuple[str, str]
) -> None:
    core = Pegasus(store)
    alice, bob = (core.for_user(name) for name in users)
    alice.import_file(SEED_GRAPH)
    results: dict[str, list[set[str]]] = {"alice": [], "bob": []}
    failures: list[BaseException] = []

    def ask(name: str, memory: Memory) -> None:
        try:
            for _ in range(5):
                found = memory.recall(QUESTION, conversation_id="c", now=NOW)
                results[name].append({f.id for f in found.fired})
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=ask, args=pair)
               for pair in (("alice", alice), ("bob", bob)) * 2]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert all("PERSON::joshua" in fired for fired in results["alice"])
    assert results["bob"] == [set()] * 10
    assert bob.export().nodes == [] and bob.store.get_conversation(bob.user, "c") is None
    used = alice.store.get_conversation(alice.user, "c").used_edges
    assert used and len(used) == len(set(used))  # ten notes from four threads, merged
    assert alice.close_conversation("c", NOW) == len(used)
    assert alice.close_conversation("c", NOW) == 0  # reinforced once, not again


def test_every_verb_answers_with_a_model(store: Store, user: str) -> None:
    memory = Pegasus(store).for_user(user)
    memory.import_file(SEED_GRAPH)
    recalled = memory.recall(QUESTION, now=NOW)
    assert set(recalled.model_dump()) == {"message", "seeds", "fired", "memory", "context",
                                          "text", "used_edges", "shown"}  # fmt: skip
    stats = memory.stats()
    assert (stats.nodes, stats.edges) == (16, 21)
    joshua = memory.describe("Joshua", NOW)[0]
    assert joshua.node.id == "PERSON::joshua" and joshua.claims
    assert {c.source_name for c in joshua.claims} >= {"Trevor"}
    plan = memory.plan_forget(node="Joshua")
    assert "PERSON::joshua" in plan.nodes
    report = memory.decay(NOW)
    assert report.edges == 21
    for result in (recalled, stats, joshua, plan, report, *memory.ranked(True, 2, NOW)):
        assert type(result).model_validate_json(result.model_dump_json()) == result


@pytest.mark.parametrize("name", ["", "   "])
def test_an_owner_must_be_named(store: Store, name: str) -> None:
    with pytest.raises(ValidationError, match="owner"):
        Pegasus(store).for_user(name)

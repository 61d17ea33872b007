"""SIGKILL at many points of an import, a close, a forget and a decay pass, on both
stores: afterwards the store holds exactly what it held before the operation or
exactly what the whole operation leaves, never a part of it (the decay pass commits
in bounded transactions: there, each edge is before or after).

The operation runs in a forked child (everything is imported already, so a run
costs a fraction of a second) with a connection of its own; the parent kills it
after a delay drawn from ``PEGASUS_TEST_SEED`` (default 0) across the operation's
measured duration."""

from __future__ import annotations

import os
import random
import signal
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from pegasus.interchange import Graph
from pegasus.memory import Memory
from pegasus.model import Conversation, Edge, Node
from pegasus.stores import Changes, Store
from tests.conftest import neo4j_uri, wipe

POINTS = 20
SEED = int(os.environ.get("PEGASUS_TEST_SEED", "0"))
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def memory_graph(size: int = 600) -> Graph:
    people = [
        Node(
            id=f"PERSON::p{i}",
            name=f"Person {i}",
            kind="PERSON",
            conversations=["c-a"] if i % 2 else ["c-a", "c-b"],
        )
        for i in range(size // 3)
    ]
    edges = [
        Edge(
            id=f"e{i}",
            source=people[i % len(people)].id,
            target=people[(i * 7 + 1) % len(people)].id,
            relation="KNOWS",
            snippet=f"claim {i}",
            touched_at=T0,
            stability="mutable",
            conversations=["c-a"] if i % 3 else ["c-a", "c-b"],
        )
        for i in range(size)
    ]
    return Graph(nodes=people, edges=[e for e in edges if e.source != e.target],
                 conversations=[Conversation(id="c-a", used_edges=[f"e{i}" for i in range(1, 300)]),
                                Conversation(id="c-b")])  # fmt: skip


GRAPH = memory_graph()


def snapshot(store: Store, user: str) -> tuple:
    graph = store.export(user)
    return (
        sorted(n.model_dump_json() for n in graph.nodes),
        sorted(e.model_dump_json() for e in graph.edges),
        sorted(c.model_dump_json() for c in graph.conversations),
        graph.self_id,
    )


def settled(store: Store, user: str) -> tuple:
    """The state once the server is done with the dead client: on Neo4j a commit it
    had sent may still be landing, and an export is several reads. (A dead SQLite
    writer's commit has either happened or not.)"""
    state = snapshot(store, user)
    while type(store).__name__ == "Neo4jStore":
        time.sleep(0.1)
        again = snapshot(store, user)
        if again == state:
            break
        state = again
    return state


OPERATIONS: dict[str, tuple[bool, Callable[[Memory], object]]] = {
    # name: (whether the memory is there before, the operation)
    "import": (False, lambda m: m.import_graph(GRAPH, index=False)),
    "close": (True, lambda m: m.close_conversation("c-a", T0 + timedelta(days=30))),
    "forget": (True, lambda m: m.forget(m.plan_forget(conversation="c-a"))),
    # Transactions of 50 edges: a pass cut short is before or after edge by edge.
    "decay": (True, lambda m: m.store.decay(T0 + timedelta(days=300), m.rule, m.user, 50)),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_killed_operation_leaves_before_or_after(store: Store, tmp_path, operation: str) -> None:
    url = neo4j_uri() if type(store).__name__ == "Neo4jStore" else None
    if url is None:
        url = f"sqlite:///{tmp_path / 'kill.db'}"
        store.close()
    prepared, work = OPERATIONS[operation]
    owner = f"kill-{uuid.uuid4().hex[:8]}"
    memory = Memory.open(url, user=owner)

    def reset() -> None:
        wipe(memory.store, owner)
        if prepared:
            memory.store.apply(owner, Changes.of_graph(GRAPH))

    try:
        reset()
        before = snapshot(memory.store, owner)
        start = time.perf_counter()
        work(memory)
        duration = time.perf_counter() - start
        after = snapshot(memory.store, owner)
        assert after != before
        rng = random.Random(f"{SEED}-{operation}-{url[:6]}")
        outcomes = {"before": 0, "after": 0}
        for _ in range(POINTS):
            reset()
            child = os.fork()
            if child == 0:  # the child: its own connection, the operation, no cleanup
                try:
                    with Memory.open(url, user=owner) as own:
                        work(own)
                finally:
                    os._exit(0)
            time.sleep(rng.uniform(0.0, duration * 1.5))
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            state = settled(memory.store, owner)
            if operation == "decay":
                assert state[0] == before[0] and state[2:] == before[2:]
                assert set(state[1]) <= set(before[1]) | set(after[1]), "an edge half-written"
            else:
                assert state in (before, after), f"{operation}: a part of it was left"
            outcomes["before" if state == before else "after"] += 1
        assert outcomes["before"] >= 1, outcomes  # some kills landed inside the operation
    finally:
        wipe(memory.store, owner)
        memory.close()

"""Kill ``pegasus ingest`` (a real SIGKILL) at deterministic points, rerun it, and the
graph equals the one an uninterrupted ingest builds.

A point is the N-th request to the model (the process dies waiting for the answer)
or the N-th write of the store, just before it or just after it commits. The points
come from a seed: ``PEGASUS_TEST_SEED`` (default 0) reproduces a run."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import uuid

import pytest

from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Memory
from pegasus.stores import Store
from tests.conftest import SEED_CONVERSATION, neo4j_uri, wipe
from tests.write.conftest import RECORDING, llm_for

ROUNDS = recorded_rounds(RECORDING)
SEED = int(os.environ.get("PEGASUS_TEST_SEED", "0"))

# The child: every store write counts, and the one named by CRASH_AT kills the process.
CHILD = """
import os, signal
from pegasus.stores.neo4j import Neo4jStore
from pegasus.stores.sqlite import SQLiteStore
when, nth = os.environ.get("CRASH_AT", "none:0").split(":")
seen = [0]
def counting(real):
    def apply(self, user, changes):
        seen[0] += 1
        if (when, seen[0]) == ("before", int(nth)):
            os.kill(os.getpid(), signal.SIGKILL)
        real(self, user, changes)
        if (when, seen[0]) == ("after", int(nth)):
            os.kill(os.getpid(), signal.SIGKILL)
    return apply
for store in (SQLiteStore, Neo4jStore):
    store.apply = counting(store.apply)
from pegasus.cli.app import main
main()
"""


def snapshot(store: Store, user: str) -> tuple:
    graph = store.export(user)
    nodes = sorted((n.model_dump() for n in graph.nodes), key=lambda n: n["id"])
    edges = sorted((e.model_dump() for e in graph.edges), key=lambda e: e["id"])
    keys = sorted(k.id for k in store.list_keys(user))
    return nodes, edges, keys, graph.self_id


def start_ingest(store_url: str, user: str, base_url: str, crash_at: str) -> subprocess.Popen:
    env = os.environ | {"PEGASUS_LLM_BASE_URL": base_url, "PEGASUS_LLM_MODEL": "scripted",
                        "PEGASUS_LLM_RETRIES": "0", "CRASH_AT": crash_at}  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, "--store", store_url, "--user", user,
         "ingest", str(SEED_CONVERSATION)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def finished(process: subprocess.Popen) -> int:
    code = process.wait(timeout=300)
    assert code in (0, -signal.SIGKILL), process.stderr.read()
    return code


@pytest.mark.parametrize("schedule", ["model", "store"])
def test_killed_ingests_resume_to_the_same_graph(
    store: Store, serve, tmp_path, monkeypatch, schedule: str
) -> None:
    store_url = neo4j_uri() if type(store).__name__ == "Neo4jStore" else None
    if store_url is None:
        store_url = f"sqlite:///{tmp_path / 'memory.db'}"
        store.close()
    reference_user, user = f"ref-{uuid.uuid4().hex[:8]}", f"crash-{uuid.uuid4().hex[:8]}"
    replay = by_round(ROUNDS)
    kill_at_request: list[int] = []
    served = [0]
    child: list[int] = []

    def respond(body: dict):
        served[0] += 1
        if kill_at_request and served[0] == kill_at_request[0]:
            os.kill(child[0], signal.SIGKILL)  # dies waiting for this answer
        return replay(body)

    server = serve(respond)
    memory = Memory.open(store_url, user=user)
    try:
        writes = [0]
        real_apply = memory.store.apply

        def counted(*args, **kwargs):
            writes[0] += 1
            return real_apply(*args, **kwargs)

        monkeypatch.setattr(memory.store, "apply", counted)
        Memory(memory.core, reference_user).ingest(SEED_CONVERSATION, llm=llm_for(server))
        monkeypatch.undo()
        rng = random.Random(f"{SEED}-{schedule}")
        if schedule == "model":
            points = [("request", rng.randint(1, len(ROUNDS))) for _ in range(2)]
        else:
            points = [("before", rng.randint(1, writes[0])),
                      ("after", rng.randint(1, max(1, writes[0] // 2)))]  # fmt: skip
        killed = 0
        for kind, nth in points:
            served[0] = 0
            kill_at_request[:] = [nth] if kind == "request" else []
            crash_at = f"{kind}:{nth}" if kind != "request" else "none:0"
            process = start_ingest(store_url, user, server.base_url, crash_at)
            child[:] = [process.pid]
            code = finished(process)
            killed += code == -signal.SIGKILL
        kill_at_request.clear()
        assert finished(start_ingest(store_url, user, server.base_url, "none:0")) == 0
        assert killed >= 1, f"{points}: no run was killed"
        assert snapshot(memory.store, user) == snapshot(memory.store, reference_user), points
        record = memory.store.get_conversation(user, "seed-trevor-1")
        assert record.turns_ingested == 4 and record.journal == []
    finally:
        for owner in (user, reference_user):
            wipe(memory.store, owner)
        memory.close()

"""Kill ``pegasus ingest`` at random points (a real SIGKILL, several times), rerun it,
and the graph equals the one an uninterrupted ingest builds."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import uuid

from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Memory
from pegasus.stores import Store
from tests.conftest import SEED_CONVERSATION, neo4j_uri, wipe
from tests.write.conftest import RECORDING, llm_for

KILLS = 3
ROUNDS = recorded_rounds(RECORDING)


def snapshot(store: Store, user: str) -> tuple:
    graph = store.export(user)
    nodes = sorted((n.model_dump() for n in graph.nodes), key=lambda n: n["id"])
    edges = sorted((e.model_dump() for e in graph.edges), key=lambda e: e["id"])
    keys = sorted(k.id for k in store.list_keys(user))
    return nodes, edges, keys, graph.self_id


def start_ingest(store_url: str, user: str, base_url: str) -> subprocess.Popen:
    env = os.environ | {"PEGASUS_LLM_BASE_URL": base_url, "PEGASUS_LLM_MODEL": "scripted",
                        "PEGASUS_LLM_RETRIES": "0"}  # fmt: skip
    command = "from pegasus.cli.app import main; main()"
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            command,
            "--store",
            store_url,
            "--user",
            user,
            "ingest",
            str(SEED_CONVERSATION),
        ],  # fmt: skip
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_ingests_resume_to_the_same_graph(store: Store, serve, tmp_path) -> None:
    store_url = neo4j_uri() if type(store).__name__ == "Neo4jStore" else None
    if store_url is None:
        store_url = f"sqlite:///{tmp_path / 'memory.db'}"
        store.close()
    reference_user, user = f"ref-{uuid.uuid4().hex[:8]}", f"crash-{uuid.uuid4().hex[:8]}"
    seed = random.randrange(10**6)
    rng = random.Random(seed)
    replay = by_round(ROUNDS)
    process: dict[str, subprocess.Popen] = {}
    kill_at: dict[str, tuple[int, float]] = {}
    served = [0]

    def respond(body: dict):
        served[0] += 1
        if "at" in kill_at and served[0] == kill_at["at"][0]:
            victim, delay = process["p"], kill_at["at"][1]
            if delay == 0:  # dies waiting for this answer
                os.kill(victim.pid, signal.SIGKILL)
            else:  # dies somewhere after it: extracting, merging, embedding or writing
                threading.Timer(
                    delay, lambda: victim.poll() is None and os.kill(victim.pid, signal.SIGKILL)
                ).start()
        return replay(body)

    server = serve(respond)
    memory = Memory(store_url, user=user)
    try:
        Memory(store_url, user=reference_user).ingest(SEED_CONVERSATION, llm=llm_for(server))
        killed = 0
        for run in range(KILLS):
            served[0] = 0
            delay = 0.0 if run == 0 else rng.choice([0.0, rng.uniform(0.0, 2.0)])
            kill_at["at"] = (rng.randint(1, len(ROUNDS)), delay)
            process["p"] = start_ingest(store_url, user, server.base_url)
            code = process["p"].wait(timeout=300)
            assert code in (0, -signal.SIGKILL), process["p"].stderr.read()
            killed += code == -signal.SIGKILL
        kill_at.clear()
        process["p"] = start_ingest(store_url, user, server.base_url)
        assert process["p"].wait(timeout=300) == 0, process["p"].stderr.read()
        assert killed >= 1, f"seed {seed}: no run was killed"
        assert snapshot(memory.store, user) == snapshot(memory.store, reference_user), seed
        record = memory.store.get_conversation(user, "seed-trevor-1")
        assert record.turns_ingested == 4 and record.journal == []
    finally:
        for owner in (user, reference_user):
            wipe(memory.store, owner)
        memory.close()

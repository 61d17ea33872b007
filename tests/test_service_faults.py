"""The service under faults: a store that goes away and comes back, a stop in the
middle of an ingest, and many clients recalling while an ingest writes."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from dataclasses import replace
from datetime import datetime
from urllib.parse import urlparse

import httpx
from fastapi.testclient import TestClient

from bench.faults import Relay
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Pegasus
from pegasus.service import create_app
from pegasus.stores import Store
from pegasus.stores.neo4j import Neo4jStore
from pegasus.write.transcript import parse_transcript
from tests.conftest import SEED_CONVERSATION, SEED_GRAPH, neo4j_uri, wipe
from tests.integrations.conftest import running_service, wait_for
from tests.test_serve import answering, free_port, serve_process
from tests.write.conftest import RECORDING, llm_for

QUESTION = "My boss Joshua wants to talk about the Nova AI offer"
NOW = "2026-10-02T12:00:00+00:00"


def graph_of(store: Store, user: str) -> tuple[set, set]:
    """What an ingest wrote, without the times it wrote it at."""
    graph = store.export(user)
    return ({(n.id, n.name) for n in graph.nodes},
            {(e.id, e.relation, e.snippet) for e in graph.edges})  # fmt: skip


def test_a_store_that_goes_away_is_a_503_until_it_comes_back() -> None:
    target = urlparse(neo4j_uri())
    relay = Relay((target.hostname, target.port or 7687))
    relay.mend()
    user = f"relay-{uuid.uuid4().hex[:8]}"
    store = Neo4jStore(f"bolt://127.0.0.1:{relay.port}")
    core = Pegasus(store)
    core.for_user(user).import_file(SEED_GRAPH)
    try:
        with TestClient(create_app(core), base_url="http://127.0.0.1") as client:
            ask = {"user": user, "message": QUESTION}
            assert "Joshua" in client.post("/recall", json=ask).json()["text"]
            relay.cut()
            # The request's deadline ends the wait, not the store's 30 s of patience.
            for method, path, body in [("POST", "/recall", ask), ("GET", "/health", None),
                                       ("POST", "/recall", ask | {"conversation_id": "c"}),
                                       ("GET", "/stats", None)]:  # fmt: skip
                began = time.monotonic()
                down = client.request(method, path, json=body, params={"user": user})
                assert down.status_code == 503 and "Neo4j" in down.json()["error"], path
                assert time.monotonic() - began < 3, path
            relay.mend()  # no restart of the service
            assert wait_for(lambda: client.get("/health").status_code == 200, 30)
            assert "Joshua" in client.post("/recall", json=ask).json()["text"]
    finally:
        relay.cut()
        store.close()
        direct = Neo4jStore(neo4j_uri())
        wipe(direct, user)
        direct.close()


def test_a_stop_during_an_ingest_resumes_on_the_next_start(tmp_path, monkeypatch, serve) -> None:
    rounds = recorded_rounds(RECORDING)
    replay = by_round(rounds)
    llm = serve(lambda body: replace(replay(body), sleep=0.4))  # slow enough to stop it
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    env = dict(os.environ) | {"PEGASUS_LLM_BASE_URL": llm.base_url,
                              "PEGASUS_LLM_MODEL": "scripted",
                              "PEGASUS_LLM_API_KEY": "none"}  # fmt: skip
    store_url = f"sqlite:///{tmp_path / 'served.db'}"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    transcript = json.loads(SEED_CONVERSATION.read_text())
    process = serve_process(store_url, port, env)
    try:
        answering(url)
        job = httpx.post(f"{url}/ingest", json={"user": "u", "transcript": transcript,
                                                 "now": NOW}).json()  # fmt: skip
        assert wait_for(lambda: len(llm.requests) >= 2, 60)  # under way
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    assert process.returncode == 0
    assert (tmp_path / "data" / "pegasus" / "jobs" / f"{job['id']}.json").exists()
    with Pegasus(store_url) as core:
        assert core.for_user("u").stats().edges < 21  # cut short

    process = serve_process(store_url, port, env)
    try:
        answering(url)
        status = f"{url}/jobs/{job['id']}?user={job['user']}"
        assert wait_for(lambda: httpx.get(status).json()["state"] in ("done", "failed"), 120)
        resumed = httpx.get(status).json()
        assert resumed["state"] == "done" and resumed["resumed"] is True, resumed
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    assert not list((tmp_path / "data" / "pegasus" / "jobs").iterdir())

    # The graph equals an uninterrupted run's.
    with Pegasus(f"sqlite:///{tmp_path / 'whole.db'}") as whole:
        whole.for_user("u").ingest(parse_transcript(transcript), now=datetime.fromisoformat(NOW),
                                   llm=llm_for(serve(by_round(rounds))))  # fmt: skip
        with Pegasus(store_url) as resumed:
            assert graph_of(resumed.store, "u") == graph_of(whole.store, "u")


def test_sixteen_recalling_clients_and_an_ingest(store: Store, users, serve, tmp_path) -> None:
    """30 s of 16 clients recalling over HTTP while an ingest writes: no error, and the
    ingest's graph is the one it writes alone."""
    reader, writer = users
    core = Pegasus(store)
    core.for_user(reader).import_file(SEED_GRAPH)
    rounds = recorded_rounds(RECORDING)
    replay = by_round(rounds)
    slow = serve(lambda body: replace(replay(body), sleep=2.0))  # the ingest spans the run
    transcript = json.loads(SEED_CONVERSATION.read_text())
    failures: list[str] = []
    answered = [0] * 16
    with running_service(core, llm_for(slow, timeout=30.0)) as url:
        job = httpx.post(f"{url}/ingest", json={"user": writer, "transcript": transcript,
                                                 "now": NOW}).json()  # fmt: skip
        deadline = time.monotonic() + 30

        def client(index: int) -> None:
            with httpx.Client(base_url=url, timeout=30) as http:
                while time.monotonic() < deadline:
                    message = f"{QUESTION} ({index})" if index % 2 else "What about Trevor?"
                    user = reader if index % 4 else writer
                    answer = http.post(
                        "/recall",
                        json={"user": user, "message": message, "conversation_id": f"c{index}"},
                    )
                    if answer.status_code != 200:
                        failures.append(f"{answer.status_code} {answer.text}")
                    answered[index] += 1

        threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        status = f"{url}/jobs/{job['id']}?user={job['user']}"
        assert wait_for(lambda: httpx.get(status).json()["state"] in ("done", "failed"), 120)
        assert httpx.get(status).json()["state"] == "done"
    assert failures == [] and min(answered) > 0

    with Pegasus(f"sqlite:///{tmp_path / 'alone.db'}") as alone:
        alone.for_user(writer).ingest(
            parse_transcript(transcript), now=datetime.fromisoformat(NOW),
            llm=llm_for(serve(by_round(rounds))),
        )  # fmt: skip
        assert graph_of(store, writer) == graph_of(alone.store, writer)
    assert graph_of(store, reader)[1] and len(graph_of(store, reader)[1]) == 21

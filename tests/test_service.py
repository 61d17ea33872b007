"""The memory service's HTTP API end to end, on both stores, through FastAPI's test
client (the real app, the real store, the real embedding model)."""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from pegasus.integrations.hooks import prompt_hook
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Pegasus
from pegasus.service import create_app
from pegasus.stores import Store
from tests.conftest import SEED_CONVERSATION, SEED_GRAPH
from tests.write.conftest import RECORDING, llm_for

QUESTION = "My boss Joshua wants to talk about the Nova AI offer"


@pytest.fixture
def client(store: Store, users, serve) -> TestClient:
    core = Pegasus(store)
    core.for_user(users[0]).import_file(SEED_GRAPH)
    llm = llm_for(serve(by_round(recorded_rounds(RECORDING))))  # the recorded extraction
    with TestClient(
        create_app(core, token="s3cret-token-for-tests", llm=llm), base_url="http://127.0.0.1"
    ) as client:
        client.headers["Authorization"] = "Bearer s3cret-token-for-tests"
        yield client


def test_recall_and_what_the_memory_holds(client: TestClient, users) -> None:
    alice, bob = users
    found = client.post("/recall", json={"user": alice, "message": QUESTION,
                                         "conversation_id": "c1"})  # fmt: skip
    assert found.status_code == 200
    assert "PERSON::joshua" in {f["id"] for f in found.json()["fired"]}
    assert found.json()["text"].splitlines()[1] == "[MEMORY]"
    assert client.post("/close", json={"user": alice, "conversation_id": "c1"}).json()[
        "reinforced"] == len(found.json()["used_edges"])  # fmt: skip
    assert client.get("/stats", params={"user": alice}).json()["edges"] == 21
    shown = client.get("/show", params={"user": alice, "name": "Joshua"}).json()
    assert shown[0]["node"]["id"] == "PERSON::joshua" and shown[0]["claims"]
    assert len(json.loads(client.get("/export", params={"user": alice}).text)["nodes"]) == 16
    # Another owner sees none of it.
    nothing = client.post("/recall", json={"user": bob, "message": QUESTION}).json()
    assert nothing["fired"] == [] and nothing["text"] == ""
    assert client.get("/stats", params={"user": bob}).json()["nodes"] == 0
    assert client.get("/show", params={"user": bob, "name": "Joshua"}).status_code == 404


def test_ingest_is_a_job(client: TestClient, users) -> None:
    transcript = json.loads(SEED_CONVERSATION.read_text())
    started = client.post("/ingest", json={"user": users[1], "transcript": transcript})
    assert started.status_code == 202
    job = started.json()
    for _ in range(600):
        job = client.get(f"/jobs/{job['id']}", params={"user": users[1]}).json()
        if job["state"] in ("done", "failed"):
            break
        time.sleep(0.1)
    assert job["state"] == "done", job
    assert job["report"]["new_turns"] == 4
    assert client.get("/stats", params={"user": users[1]}).json()["nodes"] == 16
    forgotten = client.post("/forget", json={"user": users[1], "conversation": "seed-trevor-1"})
    assert forgotten.status_code == 200 and forgotten.json()["edges"]
    assert client.get("/stats", params={"user": users[1]}).json()["edges"] == 0
    bad = client.post("/ingest", json={"user": users[1], "transcript": [{"role": "narrator"}]})
    assert bad.status_code == 400 and "narrator" in bad.json()["error"]


@pytest.mark.parametrize(
    ("request_kwargs", "status", "says"),
    [
        (
            {"content": b"{not json", "headers": {"Content-Type": "application/json"}},
            400,
            "not valid JSON: Expecting property name",
        ),
        ({"json": {"user": "a"}}, 400, "message"),
        ({"json": {"user": "", "message": "hi"}}, 400, "user"),
        ({"json": {"user": "a", "message": "hi", "preset": "nope"}}, 400, "preset"),
    ],
)
def test_bad_requests_say_what_is_wrong(client: TestClient, request_kwargs, status, says) -> None:
    answer = client.post("/recall", **request_kwargs)
    assert answer.status_code == status and says in answer.json()["error"]


def test_the_token_is_required(client: TestClient, users) -> None:
    assert client.get("/health").json()["ok"] is True
    refused = client.get("/health", headers={"Authorization": "Bearer wrong"})
    assert refused.status_code == 401 and "token" in refused.json()["error"]
    assert client.get("/openapi.json").json()["info"]["title"] == "Pegasus memory"
    assert client.get("/jobs/none", params={"user": users[0]}).status_code == 404


def test_claude_codes_http_hook_gets_the_block(client: TestClient, users) -> None:
    alice, bob = users
    # The hook as `pegasus hooks install claude-code` writes it, sent as Claude Code
    # sends it: the hook's JSON as the body, the token put into the header it names.
    hook = prompt_hook("http://127.0.0.1/", alice)
    target = urlsplit(hook["url"])
    path = f"{target.path}?{target.query}"
    token = {
        k: v.replace("$PEGASUS_TOKEN", "s3cret-token-for-tests") for k, v in hook["headers"].items()
    }
    payload = {"session_id": "s1", "transcript_path": "/tmp/s1.jsonl", "cwd": "/tmp",
               "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
               "prompt": QUESTION}  # fmt: skip
    answer = client.post(path, json=payload, headers=token)
    assert answer.status_code == 200
    context = answer.json()["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert "[MEMORY]" in context["additionalContext"] and "Joshua" in context["additionalContext"]
    # The edges it injected are the session's, reinforced when it closes.
    assert client.post("/close", json={"user": alice, "conversation_id": "s1"}).json()[
        "reinforced"] > 0  # fmt: skip
    # Nothing to add is an empty object: plain text would be added as context.
    quiet = {**payload, "prompt": "How do I reverse a list in Python?"}
    assert client.post(path, json=quiet, headers=token).json() == {}
    assert client.post(path, json={**payload, "prompt": " "}, headers=token).json() == {}
    assert client.post(target.path, params={"user": bob}, json=payload).json() == {}
    not_an_object = client.post(path, content=b"[]", headers=token)
    assert not_an_object.status_code == 400 and "dictionary" in not_an_object.json()["error"]
    # Claude Code without PEGASUS_TOKEN in its environment sends the header empty.
    assert client.post(path, json=payload, headers={"Authorization": "Bearer "}).status_code == 401

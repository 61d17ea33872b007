"""The memory service as a local daemon holding private data: only this machine's
clients get in, a prompt never waits on bookkeeping, big and broken inputs are a
4xx with one JSON shape (the real app, the real stores, the real embedding model)."""

from __future__ import annotations

import errno
import json
import sqlite3
import time
from pathlib import Path

import neo4j
import pytest
from fastapi.testclient import TestClient

import pegasus.guard
from pegasus.chat import ChatSession
from pegasus.client import ingest_job, queue_ingest
from pegasus.errors import ConfigError, DiskFullError, TooLargeError, ValidationError
from pegasus.guard import MIN_TOKEN_CHARS, bearer, check_exposure, host_name
from pegasus.integrations.backend import Backend
from pegasus.integrations.mcp_server import build_server, http_app
from pegasus.memory import Pegasus
from pegasus.paths import sqlite_file
from pegasus.service import create_app
from pegasus.stores import Store, open_store
from pegasus.stores.neo4j import REQUEST_WRITE_SECONDS
from pegasus.stores.sqlite import SQLiteStore
from pegasus.write.transcript import split_long
from tests.conftest import SEED_GRAPH, neo4j_uri
from tests.test_serve import cli

QUESTION = "My boss Joshua wants to talk about the Nova AI offer"
TOKEN = "a-token-long-enough-for-tests"
LOCAL = "http://127.0.0.1"


@pytest.fixture
def core(store: Store, users) -> Pegasus:
    core = Pegasus(store)
    core.for_user(users[0]).import_file(SEED_GRAPH)
    return core


def routes(app) -> list[tuple[str, str]]:
    """Every (method, path) the app answers, path parameters filled in."""
    found = [("GET", "/docs"), ("GET", "/redoc"), ("GET", "/openapi.json"), ("GET", "/nope")]
    for route in app.routes:
        for method in getattr(route, "methods", None) or ():
            if method != "HEAD":
                found.append((method, route.path.replace("{job_id}", "j1")))
    return sorted(set(found))


def test_a_foreign_host_is_refused_on_every_route(tmp_path: Path) -> None:
    app = create_app(Pegasus(f"sqlite:///{tmp_path / 'm.db'}"))
    with TestClient(app, base_url="http://evil.example") as client:
        for method, path in routes(app):
            refused = client.request(method, path, params={"user": "u"}, json={})
            assert refused.status_code == 403, (method, path)
            assert "not reached as 'evil.example'" in refused.json()["error"]
    # A page whose name was rebound to 127.0.0.1 still sends its own name, port and all.
    with TestClient(app, base_url="http://evil.example:8765") as client:
        assert client.get("/export", params={"user": "u"}).status_code == 403
    for local in ("http://127.0.0.1:8765", "http://localhost", "http://[::1]:8765"):
        with TestClient(app, base_url=local) as client:
            assert client.get("/health").status_code == 200, local


def test_names_beyond_this_machine_are_taken_only_when_allowed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_ALLOWED_HOSTS", "memory.lan, other.lan")
    core = Pegasus(f"sqlite:///{tmp_path / 'm.db'}")
    app = create_app(core, token=TOKEN, host="0.0.0.0")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for base, status in [("http://memory.lan:8765", 200), ("http://192.168.1.20:8765", 200),
                         ("http://[fe80::1]:8765", 200), ("http://evil.example", 403)]:  # fmt: skip
        with TestClient(app, base_url=base) as client:
            assert client.get("/health", headers=auth).status_code == status, base


def test_one_token_rule(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(ValidationError, match="beyond this machine"):
        check_exposure("0.0.0.0", None)
    with pytest.raises(ConfigError, match=f"at least {MIN_TOKEN_CHARS}"):
        check_exposure("127.0.0.1", "t")
    check_exposure("::1", None)
    assert bearer("bearer abc") == bearer("BEARER  abc ") == "abc"
    assert bearer("Basic abc") is None and bearer("Bearer ") is None and bearer(None) is None

    compared: list[tuple[bytes, bytes]] = []
    real = pegasus.guard.hmac.compare_digest

    def compare_digest(given: bytes, expected: bytes) -> bool:
        compared.append((given, expected))
        return real(given, expected)

    monkeypatch.setattr(pegasus.guard.hmac, "compare_digest", compare_digest)
    app = create_app(Pegasus(f"sqlite:///{tmp_path / 'm.db'}"), token=TOKEN)
    with TestClient(app, base_url=LOCAL) as client:
        for path in ("/docs", "/redoc", "/openapi.json", "/health"):
            assert client.get(path).status_code == 401, path
            wrong = client.get(path, headers={"Authorization": f"Bearer {TOKEN[:-1]}x"})
            assert wrong.status_code == 401
        for scheme in ("Bearer", "bearer", "BEARER"):
            told = client.get("/openapi.json", headers={"Authorization": f"{scheme} {TOKEN}"})
            assert told.status_code == 200, scheme
    assert (TOKEN.encode(), TOKEN.encode()) in compared  # every check went through it
    with pytest.raises(ConfigError):
        create_app(Pegasus(f"sqlite:///{tmp_path / 'm.db'}"), token="short")


def test_mcp_over_http_has_the_same_door(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_TOKEN", TOKEN)
    from pegasus.config import load_settings

    backend = Backend("u", f"sqlite:///{tmp_path / 'm.db'}", local=True)
    app = http_app(build_server(backend), "127.0.0.1", load_settings())
    start = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "probe", "version": "0"}}}  # fmt: skip
    kinds = {"Accept": "application/json, text/event-stream"}
    with TestClient(app, base_url=LOCAL) as client:
        assert client.post("/mcp", json=start, headers=kinds).status_code == 401
        told = kinds | {"Authorization": f"bearer {TOKEN}"}
        assert client.post("/mcp", json=start, headers=told).status_code == 200
        foreign = client.post("/mcp", json=start, headers=told | {"Host": "evil.example"})
        assert foreign.status_code == 403 and "error" in foreign.json()
    backend.close()
    monkeypatch.delenv("PEGASUS_TOKEN")
    refused = cli("mcp", "--transport", "http", "--host", "0.0.0.0")
    assert refused.returncode == 2 and "set PEGASUS_TOKEN" in refused.stderr
    monkeypatch.setenv("PEGASUS_TOKEN", "short")
    refused = cli("mcp", "--transport", "http")
    assert refused.returncode == 2 and "at least 16" in refused.stderr


def test_a_recall_with_a_conversation_waits_on_no_writer(core: Pegasus, users) -> None:
    """Another writer holds the store's write lock: the recall answers anyway, and its
    note of the edges it used is written once the lock is let go."""
    user = users[0]
    memory = core.for_user(user)
    memory.recall(QUESTION, "c1")
    memory.close_conversation("c1")  # the conversation exists: its record can be locked
    with TestClient(create_app(core), base_url=LOCAL) as client, held_write_lock(core, user):
        answer = client.post("/recall", json={"user": user, "message": QUESTION,
                                              "conversation_id": "c1"})  # fmt: skip
        assert answer.status_code == 200 and "Joshua" in answer.json()["text"]
        used = answer.json()["used_edges"]
        assert used and core.used.pending == 1  # waiting for the writer, not the prompt
    core.used.flush()
    assert memory.close_conversation("c1") == len(used)


class held_write_lock:
    """Another connection's open write transaction on the owner's conversation."""

    def __init__(self, core: Pegasus, user: str) -> None:
        self.store, self.user = core.store, user

    def __enter__(self) -> None:
        if isinstance(self.store, SQLiteStore):
            self.db = sqlite3.connect(self.store.path, isolation_level=None)
            self.db.execute("BEGIN IMMEDIATE")
            return
        self.driver = neo4j.GraphDatabase.driver(neo4j_uri())
        self.session = self.driver.session()
        self.tx = self.session.begin_transaction()
        self.tx.run("MATCH (c:Conversation {user: $user, id: 'c1'}) SET c._held = true",
                    user=self.user).consume()  # fmt: skip

    def __exit__(self, *exc: object) -> None:
        if isinstance(self.store, SQLiteStore):
            self.db.execute("ROLLBACK")
            self.db.close()
            return
        self.tx.rollback()
        self.session.close()
        self.driver.close()


def test_a_busy_store_is_a_quick_503_for_a_write_on_the_request_path(core, users) -> None:
    user = users[0]
    core.for_user(user).recall(QUESTION, "c1")
    core.used.flush()
    # A write's wait ends at the deadline; Neo4j ends a request's write that waits on a
    # lock server-side, at REQUEST_WRITE_SECONDS (its work may take longer than a wait).
    bound = 3 if isinstance(core.store, SQLiteStore) else REQUEST_WRITE_SECONDS + 3
    with TestClient(create_app(core), base_url=LOCAL) as client, held_write_lock(core, user):
        began = time.monotonic()
        closing = client.post("/close", json={"user": user, "conversation_id": "c1"})
        assert closing.status_code == 503 and "error" in closing.json()
        assert time.monotonic() - began < bound
        assert client.post("/recall", json={"user": user, "message": QUESTION}).status_code == 200


def test_limits_answer_413(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_MAX_MESSAGE_CHARS", "1000")
    monkeypatch.setenv("PEGASUS_MAX_TRANSCRIPT_CHARS", "2000")
    monkeypatch.setenv("PEGASUS_MAX_BODY_MB", "0.01")
    core = Pegasus(f"sqlite:///{tmp_path / 'm.db'}")
    app = create_app(core, jobs_folder=tmp_path / "jobs")
    with TestClient(app, base_url=LOCAL) as client:
        long = client.post("/recall", json={"user": "u", "message": "word " * 201})
        assert long.status_code == 413 and "PEGASUS_MAX_MESSAGE_CHARS" in long.json()["error"]
        huge = client.post("/recall", json={"user": "u", "message": "a" * 100_000})
        assert huge.status_code == 413 and "bytes" in huge.json()["error"]  # not even read
        talk = [{"role": "user", "content": "I keep bees. " * 200}]  # 2,599 characters
        told = client.post("/ingest", json={"user": "u", "transcript": talk})
        assert told.status_code == 413 and "TRANSCRIPT" in told.json()["error"]
        # Under the transcript's limit in characters, over the body's in bytes.
        body = json.dumps({"user": "u", "transcript": talk[:1], "pad": "-" * 12_000}).encode()
        sized = client.post("/ingest", content=body, headers={"Content-Type": "application/json"})
        assert sized.status_code == 413 and "PEGASUS_MAX_BODY_MB" in sized.json()["error"]

        def chunks():  # no Content-Length: the body is counted as it comes
            yield body[:4000]
            yield body[4000:]

        streamed = client.post("/ingest", content=chunks(),
                               headers={"Content-Type": "application/json"})  # fmt: skip
        assert streamed.status_code == 413 and "bytes" in streamed.json()["error"]
        assert client.get("/jobs").json() == []
    with pytest.raises(TooLargeError):
        core.for_user("u").recall("word " * 201)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(talk * 5))  # 13,000 characters, in a file of 13,000 bytes
    with pytest.raises(TooLargeError):
        core.for_user("u").ingest(path)


def test_long_turns_are_split_whole_and_in_order() -> None:
    text = "".join(f"Sentence {i} is here. " + ("\n\n" if i % 7 == 0 else "") for i in range(5000))
    parts = split_long(text, 1000)
    assert all(0 < len(part) <= 1000 for part in parts)
    assert " ".join(parts).split() == text.split()
    assert all(part.endswith((".", "here.")) for part in parts[:-1])
    assert split_long("x" * 2500, 1000) == ["x" * 1000, "x" * 1000, "x" * 500]


def test_every_bad_input_is_a_4xx_with_one_json_shape(tmp_path: Path) -> None:
    core = Pegasus(f"sqlite:///{tmp_path / 'm.db'}")
    with TestClient(create_app(core), base_url=LOCAL) as client:
        raw = b'{"user": "u", "message": "hi \\ud800 there"}'
        lone = client.post("/recall", content=raw, headers={"Content-Type": "application/json"})
        assert lone.status_code == 400 and "lone surrogate" in lone.json()["error"]
        assert client.get("/nope").json() == {"error": "Not Found"}
        assert client.delete("/recall").status_code == 405
        assert "error" in client.delete("/recall").json()
        unknown = client.get("/jobs/j1")
        assert unknown.status_code == 404 and "no job 'j1'" in unknown.json()["error"]
    with pytest.raises(ValidationError, match="lone surrogate"):
        core.for_user("u").recall("hi \ud800")
    said = cli("--store", f"sqlite:///{tmp_path / 'm.db'}", "--local", "recall", "hi \udced\udca0")
    assert said.returncode == 2 and "lone surrogate" in said.stderr


def test_jobs_are_kept_per_owner(tmp_path: Path) -> None:
    core = Pegasus(f"sqlite:///{tmp_path / 'm.db'}")
    with TestClient(create_app(core, jobs_folder=tmp_path / "jobs"), base_url=LOCAL) as client:
        talk = [{"role": "user", "content": "I keep bees."}]
        job = client.post("/ingest", json={"user": "alice", "transcript": talk}).json()
        for method, path in [("GET", ""), ("POST", "/retry"), ("DELETE", "")]:
            other = client.request(method, f"/jobs/{job['id']}{path}", params={"user": "bob"})
            assert other.status_code == 404 and "for user 'bob'" in other.json()["error"]
        assert client.get("/jobs", params={"user": "bob"}).json() == []
        mine = client.get(f"/jobs/{job['id']}", params={"user": "alice"})
        assert mine.json()["state"] == "waiting"  # no model configured


def test_a_full_disk_refuses_the_session_and_leaves_no_part(tmp_path, monkeypatch) -> None:
    core = Pegasus(f"sqlite:///{tmp_path / 'm.db'}")
    folder = tmp_path / "jobs"
    real = Path.write_text

    def disk_full(path: Path, *args, **kwargs):
        if path.parent == folder:
            real(path, "")  # created, then no room for a byte of it
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, *args, **kwargs)

    with TestClient(create_app(core, jobs_folder=folder), base_url=LOCAL) as client:
        monkeypatch.setattr(Path, "write_text", disk_full)
        talk = [{"role": "user", "content": "I keep bees."}]
        refused = client.post("/ingest", json={"user": "alice", "transcript": talk})
        assert refused.status_code == 507 and "No space left" in refused.json()["error"]
        assert list(folder.iterdir()) == [] and client.get("/jobs").json() == []


def test_a_full_database_is_a_507_that_keeps_what_is_stored(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    core = Pegasus(store)
    memory = core.for_user("u")
    memory.import_file(SEED_GRAPH)
    before = memory.export()
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages}")  # the file may grow no more
    with pytest.raises(DiskFullError, match="disk is full"):
        core.for_user("v").import_file(SEED_GRAPH)
    assert memory.export() == before and core.for_user("v").stats().nodes == 0
    with TestClient(create_app(core), base_url=LOCAL) as client:  # reads go on
        assert client.get("/stats", params={"user": "u"}).json()["nodes"] == len(before.nodes)


@pytest.mark.parametrize("url", ["sqlite:", "sqlite:/", "sqlite://", "sqlite:///",
                                 "sqlite://localhost/x.db", "sqlite://host/x.db"])  # fmt: skip
def test_store_urls_without_a_usable_path_are_refused(url, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError):
        open_store(url)
    assert list(tmp_path.iterdir()) == []
    assert sqlite_file("sqlite:////tmp/x.db") == "/tmp/x.db"
    assert sqlite_file("sqlite:///x.db") == "x.db"


def test_a_conversation_id_never_names_a_path_outside_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    names = set()
    for ident in ("../../x", "/etc/passwd", "..", "a/b", "a_b", "chat-1"):
        path = ChatSession(None, None, conversation_id=ident).save(folder)  # type: ignore[arg-type]
        assert path.parent == folder and path.exists(), ident
        names.add(path.name)
    assert len(names) == 6 and "chat-1.json" in names
    assert not (tmp_path / "x.json").exists()


def test_host_names_are_read_strictly() -> None:
    assert host_name("[::1]:8765") == host_name("[0:0:0:0:0:0:0:1]:1") == "::1"
    assert host_name("LOCALHOST:80") == "localhost" and host_name("::1") == "::1"
    for odd in ("[::1]evil.example", "evil.example:x", "a:b", ""):
        assert host_name(odd) == "", odd


def test_a_page_of_another_site_is_refused(tmp_path: Path) -> None:
    with TestClient(create_app(Pegasus(f"sqlite:///{tmp_path / 'm.db'}")), base_url=LOCAL) as c:
        for origin in ("https://evil.example", "null", "http://127.0.0.1.evil.example"):
            refused = c.get("/export", params={"user": "u"}, headers={"Origin": origin})
            assert refused.status_code == 403 and "pages of" in refused.json()["error"], origin
        mine = c.get("/health", headers={"Origin": "http://localhost:6274"})
        assert mine.status_code == 200


def test_a_conversation_id_no_store_takes_is_refused_at_once(tmp_path: Path) -> None:
    core = Pegasus(f"sqlite:///{tmp_path / 'm.db'}")
    core.for_user("u").import_file(SEED_GRAPH)
    with TestClient(create_app(core), base_url=LOCAL) as client:
        for bad in ("x" * 401, " c", "c\x00"):
            asked = {"user": "u", "message": QUESTION, "conversation_id": bad}
            assert client.post("/recall", json=asked).status_code == 400, bad
        assert core.used.pending == 0
        asked = {"user": "u", "message": QUESTION, "conversation_id": "c"}
        used = client.post("/recall", json=asked).json()["used_edges"]
        closed = client.post("/close", json={"user": "u", "conversation_id": "c"})
        assert closed.json() == {"reinforced": len(used)} and used


def test_jobs_of_the_default_owner_need_no_name(tmp_path: Path) -> None:
    core = Pegasus(f"sqlite:///{tmp_path / 'm.db'}")
    with TestClient(create_app(core, jobs_folder=tmp_path / "jobs"), base_url=LOCAL) as client:
        talk = [{"role": "user", "content": "I keep bees."}]
        job = client.post("/ingest", json={"user": core.settings.user, "transcript": talk}).json()
        assert client.get(f"/jobs/{job['id']}").json()["id"] == job["id"]


def test_a_job_file_over_the_limit_is_set_aside(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PEGASUS_MAX_TRANSCRIPT_CHARS", "100")
    folder = tmp_path / "jobs"
    talk = [{"role": "user", "content": "I keep bees. " * 20}]
    queue_ingest(ingest_job("u", talk, "c"), folder)
    with TestClient(create_app(Pegasus(f"sqlite:///{tmp_path / 'm.db'}"), jobs_folder=folder),
                    base_url=LOCAL) as client:  # fmt: skip
        assert client.get("/jobs").json() == []
    assert [path.suffix for path in folder.iterdir()] == [".unreadable"]

"""Shared fixtures. Store fixtures run every contract test on both stores.

Neo4j comes from NEO4J_URI (``make test`` starts one and sets it, together with
PEGASUS_REQUIRE_NEO4J=1, under which an unreachable Neo4j fails the run). It is
read once here: every test then runs with the Pegasus, OpenAI and Neo4j variables
cleared and the config and data directories in a temporary folder, so that no
developer's own settings or files can reach a test.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pegasus.stores import Changes, Store

DATA = Path(__file__).resolve().parent.parent / "pegasus" / "data"
SEED_GRAPH = DATA / "graph.json"
SEED_CONVERSATION = DATA / "conversation.json"
DEFAULT_NEO4J = "bolt://127.0.0.1:7687"


NEO4J_URI = os.environ.get("NEO4J_URI", DEFAULT_NEO4J)
# Neo4j Browser of the same server (the launcher and the compose service serve it here).
NEO4J_BROWSER_URL = os.environ.get("NEO4J_BROWSER_URL", "http://localhost:7474")
REQUIRE_NEO4J = os.environ.get("PEGASUS_REQUIRE_NEO4J") == "1"
ISOLATED_PREFIXES = ("PEGASUS_", "OPENAI_", "NEO4J_")


def neo4j_uri() -> str:
    return NEO4J_URI


@pytest.fixture(scope="session")
def _isolated_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One folder for the session: the recall reference cached there is built once.
    return tmp_path_factory.mktemp("home")


@pytest.fixture(autouse=True)
def isolated_settings(monkeypatch: pytest.MonkeyPatch, _isolated_dirs: Path) -> None:
    """No PEGASUS_*, OPENAI_* or NEO4J_* variable (but the suite's own PEGASUS_REQUIRE_*)
    and no real config, data or assistant settings folder."""
    for name in list(os.environ):
        if name.startswith(ISOLATED_PREFIXES) and not name.startswith("PEGASUS_REQUIRE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(_isolated_dirs / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(_isolated_dirs / "data"))
    monkeypatch.setenv("CODEX_HOME", str(_isolated_dirs / "codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(_isolated_dirs / "claude"))


def _neo4j_store() -> Store:
    from pegasus.errors import StoreError
    from pegasus.stores.neo4j import Neo4jStore

    try:
        return Neo4jStore(neo4j_uri())
    except StoreError as exc:
        if REQUIRE_NEO4J:
            pytest.fail(f"Neo4j is required for this run but unreachable: {exc}", pytrace=False)
        pytest.skip(f"no Neo4j at {neo4j_uri()} (run 'make neo4j-up' or 'make test'): {exc}")


@pytest.fixture(scope="session")
def _neo4j_session_store() -> Iterator[Store]:
    store = _neo4j_store()
    yield store
    store.close()


def wipe(store: Store, user: str) -> None:
    """Remove everything a test user left, through the public interface."""
    graph = store.export(user)
    store.apply(
        user,
        Changes(
            delete_nodes=[n.id for n in graph.nodes],
            delete_keys=[k.id for k in store.list_keys(user)],
            delete_conversations=[c.id for c in graph.conversations],
        ),
    )


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each backend in turn. Neo4j tests share one server, kept apart by unique users."""
    if request.param == "sqlite":
        from pegasus.stores.sqlite import SQLiteStore

        sqlite_store = SQLiteStore(tmp_path / "memory.db")
        yield sqlite_store
        sqlite_store.close()
    else:
        yield request.getfixturevalue("_neo4j_session_store")


@pytest.fixture
def users(store: Store) -> Iterator[tuple[str, str]]:
    """Two fresh memory owners, removed again after the test."""
    pair = (f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}")
    yield pair
    for user in pair:
        wipe(store, user)


@pytest.fixture
def user(users: tuple[str, str]) -> str:
    return users[0]


@pytest.fixture
def serve() -> Iterator[Callable]:
    """Start scripted OpenAI-compatible servers for a test: ``server = serve(responder)``."""
    from pegasus.llm.scripted import ScriptedServer

    servers: list[ScriptedServer] = []

    def start(responder):
        servers.append(ScriptedServer(responder).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()

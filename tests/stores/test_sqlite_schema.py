"""The embedded store's schema: named migrations, applied once and recorded."""

from __future__ import annotations

import sqlite3

import pytest

from pegasus.model import Conversation
from pegasus.stores import Changes
from pegasus.stores.sqlite import MIGRATIONS, SQLiteStore


def test_migrations_apply_once_from_blank(tmp_path) -> None:
    path = tmp_path / "m.db"
    store = SQLiteStore(path)
    assert store.applied_migrations() == [name for name, _ in MIGRATIONS]
    store.close()
    again = SQLiteStore(path)  # reopening applies nothing twice
    assert again.applied_migrations() == [name for name, _ in MIGRATIONS]
    again.close()
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert {"nodes", "edges", "node_names", "conversations", "owners", "keys"} <= tables


def test_an_older_file_is_brought_up_to_date(tmp_path, monkeypatch) -> None:
    from pegasus.model import Edge, Node
    from pegasus.stores.sqlite import schema as module

    path = tmp_path / "old.db"
    monkeypatch.setattr(module, "MIGRATIONS", MIGRATIONS[:1])
    old = SQLiteStore(path)
    nodes = [Node(id=f"PERSON::{n}", name=n, kind="PERSON") for n in ("a", "b")]
    edge = Edge(id="e", source="PERSON::a", target="PERSON::b", relation="KNOWS", snippet="a b")
    old.apply("u", Changes(nodes=nodes, edges=[edge]))
    # A record of the first schema: its journal and used edges inside the JSON.
    record = Conversation(id="c", summary="s", journal=["a", "b"], used_edges=["e"])
    old._db.execute(
        "INSERT INTO conversations VALUES (?, ?, ?)", ("u", "c", record.model_dump_json())
    )
    old.close()
    monkeypatch.setattr(module, "MIGRATIONS", MIGRATIONS)
    store = SQLiteStore(path)
    assert store.applied_migrations() == [name for name, _ in MIGRATIONS]
    assert store.edges_meeting("u", [("PERSON::a", "KNOWS", "PERSON::b")]) == [edge]
    assert store.get_conversation("u", "c") == record
    store.close()
    indexes = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "edges_by_source_relation" in indexes and "edges_by_source" not in indexes


def _hold_write_lock(path, seconds: float):
    """Another connection that starts writing and keeps its transaction open."""
    import threading

    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO owners VALUES ('writer', NULL)")
    timer = threading.Timer(seconds, lambda: (other.execute("COMMIT"), other.close()))
    timer.start()
    return timer


def test_readers_never_wait_for_a_writer(tmp_path) -> None:
    path = tmp_path / "busy.db"
    SQLiteStore(path).close()
    timer = _hold_write_lock(path, 3.0)
    try:
        reader = SQLiteStore(path)  # opening takes no write lock once migrated
        assert reader.stats("u").nodes == 0 and reader.export("u").nodes == []
        assert reader.get_conversation("u", "c") is None
        reader.close()
    finally:
        timer.join()


def test_a_writer_waits_a_bounded_time_and_says_so(tmp_path, monkeypatch) -> None:
    from pegasus.errors import StoreError
    from pegasus.stores.sqlite import store as module

    path = tmp_path / "busy.db"
    SQLiteStore(path).close()
    monkeypatch.setattr(module, "BUSY_SECONDS", 0.2)
    writer = SQLiteStore(path)
    timer = _hold_write_lock(path, 1.0)
    with pytest.raises(StoreError, match="busy: another process kept writing"):
        writer.apply("u", Changes(conversations=[Conversation(id="c")]))
    timer.join()
    writer.apply("u", Changes(conversations=[Conversation(id="c")]))  # and once it is done
    assert writer.get_conversation("u", "c") == Conversation(id="c")
    writer.close()


@pytest.mark.parametrize(
    ("url", "problem"),
    [("sqlite://", "names no file"), ("sqlite:///{tmp}/missing/dir/m.db", "does not exist")],
)
def test_unusable_urls_are_refused(tmp_path, url: str, problem: str) -> None:
    from pegasus.errors import ConfigError
    from pegasus.stores import open_store

    with pytest.raises(ConfigError, match=problem):
        open_store(url.format(tmp=tmp_path))
    assert not (tmp_path / "missing").exists()


def test_the_default_folder_is_made_on_first_use(tmp_path) -> None:
    from pegasus.config import data_dir
    from pegasus.stores import open_store

    assert not data_dir().exists() or data_dir().is_dir()
    store = open_store(f"sqlite:///{data_dir() / 'memory.db'}")
    assert (data_dir() / "memory.db").exists()
    store.close()


def test_keys_another_connection_adds_are_searched(tmp_path) -> None:
    from pegasus.model import EmbeddingKey

    path = tmp_path / "keys.db"
    serving, ingesting = SQLiteStore(path), SQLiteStore(path)
    key = EmbeddingKey(id="k1", text="a", ref="PERSON::a", kind="node", vector=[1.0, 0.0])
    serving.apply("u", Changes(keys=[key]))
    assert [k.id for k, _ in serving.search_keys("u", [0.0, 1.0])] == ["k1"]
    ingesting.apply("u", Changes(keys=[key.model_copy(update={"id": "k2", "vector": [0.0, 1.0]})]))
    assert [k.id for k, _ in serving.search_keys("u", [0.0, 1.0])] == ["k2", "k1"]
    assert serving.key_mean("u") == pytest.approx([0.5, 0.5])
    ingesting.apply("u", Changes(delete_keys=["k1"]))
    assert [k.id for k, _ in serving.search_keys("u", [1.0, 0.0])] == ["k2"]
    serving.close()
    ingesting.close()


def test_a_thread_reads_while_its_store_waits_to_write(tmp_path) -> None:
    import threading
    import time

    path = tmp_path / "waiting.db"
    store = SQLiteStore(path)
    timer = _hold_write_lock(path, 3.0)
    writer = threading.Thread(
        target=lambda: store.apply("u", Changes(conversations=[Conversation(id="c")]))
    )
    writer.start()  # waits for the other connection's write
    time.sleep(0.3)
    start = time.perf_counter()
    assert store.stats("u").conversations == 0 and store.get_conversation("u", "c") is None
    assert time.perf_counter() - start < 1.0  # read beside the waiting write, not after it
    writer.join()
    timer.join()
    assert store.get_conversation("u", "c") == Conversation(id="c")
    store.close()


def test_a_threads_first_read_may_be_a_key_search(tmp_path) -> None:
    """A recall's claim cues run on a thread of their own, whose first read is a key
    search: opening that thread's connection must not wait on the key cache's lock."""
    import threading

    from pegasus.model import EmbeddingKey

    store = SQLiteStore(tmp_path / "m.db")
    key = EmbeddingKey(id="k", text="Ana", ref="PERSON::ana", kind="node", vector=[1.0, 0.0])
    store.apply("u", Changes(keys=[key]))
    found: list = []
    reader = threading.Thread(
        target=lambda: found.extend(store.search_keys("u", [1.0, 0.0], 1)), daemon=True
    )
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "the thread's first read waits for ever"
    assert [k.id for k, _ in found] == ["k"]
    store.close()


def test_a_migration_is_split_where_sqlite_ends_its_statements() -> None:
    from pegasus.stores.sqlite.schema import statements

    trigger = ("CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  INSERT INTO b VALUES (1);\n"
               "  INSERT INTO b VALUES (2);\nEND;")  # fmt: skip
    script = f"-- a comment; with a semicolon\nCREATE TABLE a (x);\n{trigger}\n-- the end\n"
    assert statements(script) == ["-- a comment; with a semicolon\nCREATE TABLE a (x);", trigger]
    with pytest.raises(ValueError, match="no ';'"):
        statements("CREATE TABLE a (x);\nCREATE INDEX i ON a (x)")

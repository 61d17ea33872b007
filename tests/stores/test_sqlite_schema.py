"""The embedded store's schema: named migrations, applied once and recorded."""

from __future__ import annotations

import sqlite3

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
    from pegasus.stores import sqlite as module

    path = tmp_path / "old.db"
    monkeypatch.setattr(module, "MIGRATIONS", MIGRATIONS[:1])
    old = SQLiteStore(path)
    nodes = [Node(id=f"PERSON::{n}", name=n, kind="PERSON") for n in ("a", "b")]
    edge = Edge(id="e", source="PERSON::a", target="PERSON::b", relation="KNOWS", snippet="a b")
    old.upsert_nodes("u", nodes)
    old.upsert_edges("u", [edge])
    old.close()
    monkeypatch.setattr(module, "MIGRATIONS", MIGRATIONS)
    store = SQLiteStore(path)
    assert store.applied_migrations() == [name for name, _ in MIGRATIONS]
    assert store.edges_meeting("u", [("PERSON::a", "KNOWS", "PERSON::b")]) == [edge]
    store.close()
    indexes = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "edges_by_source_relation" in indexes and "edges_by_source" not in indexes

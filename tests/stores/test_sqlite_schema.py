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

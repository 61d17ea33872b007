"""The embedded store: one SQLite file, no server (:class:`SQLiteStore`)."""

from pegasus.stores.sqlite.schema import MIGRATIONS
from pegasus.stores.sqlite.store import SQLiteStore

__all__ = ["MIGRATIONS", "SQLiteStore"]

"""Stores: where memories live. ``open_store`` picks one from a URL."""

from __future__ import annotations

from urllib.parse import urlparse

from pegasus.errors import ConfigError
from pegasus.stores.base import DecayReport, Stats, Store

NEO4J_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")

__all__ = ["DecayReport", "Stats", "Store", "open_store"]


def open_store(url: str, neo4j_auth: tuple[str, str] | None = None) -> Store:
    """``sqlite:///path.db`` (or ``sqlite://:memory:``) for the embedded store,
    ``bolt://`` or ``neo4j://`` URLs for Neo4j."""
    scheme = urlparse(url).scheme
    if scheme == "sqlite":
        from pegasus.stores.sqlite import SQLiteStore

        # As in SQLAlchemy: sqlite:///relative.db, sqlite:////absolute.db, sqlite:// in memory.
        path = url.removeprefix("sqlite://").removeprefix("/")
        return SQLiteStore(path or ":memory:")
    if scheme in NEO4J_SCHEMES:
        from pegasus.stores.neo4j import Neo4jStore

        return Neo4jStore(url, auth=neo4j_auth)
    raise ConfigError(
        f"unknown store URL {url!r}: use sqlite:///path.db or bolt://host:7687 (neo4j://...)"
    )

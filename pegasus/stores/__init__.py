"""Stores: where memories live. ``open_store`` picks one by the URL's scheme.

A new store is one module with a :class:`Store` subclass (its ``from_url`` builds
it from the URL and the settings) and one line in ``REGISTRY``; docs/stores.md
says what it must do.
"""

from __future__ import annotations

from importlib import import_module
from urllib.parse import urlparse

from pegasus.config import Settings, load_settings
from pegasus.errors import ConfigError
from pegasus.stores.base import Changes, DecayReport, Stats, Store, deadline, within

__all__ = [
    "Changes",
    "DecayReport",
    "REGISTRY",
    "Stats",
    "Store",
    "deadline",
    "open_store",
    "store_class",
    "within",
]

NEO4J = "pegasus.stores.neo4j:Neo4jStore"
# URL scheme -> "module:class", imported only when a URL names it.
REGISTRY: dict[str, str] = {
    "sqlite": "pegasus.stores.sqlite:SQLiteStore",
    **dict.fromkeys(("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"), NEO4J),
}


def store_class(url: str) -> type[Store]:
    """The store class the URL's scheme names."""
    target = REGISTRY.get(urlparse(url).scheme)
    if target is None:
        raise ConfigError(
            f"unknown store URL {url!r}: use sqlite:///path.db or bolt://host:7687 (neo4j://...)"
        )
    module, name = target.split(":")
    return getattr(import_module(module), name)


def open_store(url: str, settings: Settings | None = None) -> Store:
    """``sqlite:///path.db`` (or ``sqlite://`` in memory) for the embedded store,
    ``bolt://`` or ``neo4j://`` URLs for Neo4j."""
    return store_class(url).from_url(url, settings or load_settings())

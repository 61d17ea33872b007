"""``Memory``: the Python API, one object with the same verbs as the CLI."""

from __future__ import annotations

from pathlib import Path

from pegasus.config import Settings, load_settings
from pegasus.errors import PegasusError, ValidationError
from pegasus.interchange import Graph, dump_graph, parse_graph
from pegasus.stores import Stats, Store, open_store


class Memory:
    """One memory owner's view of a store.

    >>> with Memory("sqlite:///memory.db", user="trevor") as memory:
    ...     memory.import_file("graph.json")
    """

    def __init__(
        self,
        store: str | Store | None = None,
        user: str | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.settings = settings or load_settings(
            store=store if isinstance(store, str) else None, user=user
        )
        self.user = user or self.settings.user
        if isinstance(store, Store):
            self.store = store
        else:
            auth = None
            if self.settings.neo4j_user and self.settings.neo4j_password:
                auth = (self.settings.neo4j_user, self.settings.neo4j_password)
            self.store = open_store(self.settings.store_url(), neo4j_auth=auth)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- interchange ------------------------------------------------------------
    def import_graph(self, graph: Graph) -> Graph:
        self.store.import_graph(self.user, graph)
        return graph

    def import_file(self, path: str | Path) -> Graph:
        """Check a whole interchange file, then write it in one transaction."""
        try:
            text = Path(path).read_bytes()
        except OSError as exc:
            raise PegasusError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            graph = parse_graph(text)
        except ValidationError as exc:
            raise ValidationError(f"{path}: {exc}") from exc
        return self.import_graph(graph)

    def export(self) -> Graph:
        return self.store.export(self.user)

    def export_json(self) -> str:
        return dump_graph(self.export())

    def stats(self) -> Stats:
        return self.store.stats(self.user)

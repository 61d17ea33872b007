"""Moving a memory between the two stores loses nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from pegasus.interchange import dump_graph, parse_graph
from pegasus.model import Conversation
from pegasus.stores import Changes
from pegasus.stores.sqlite import SQLiteStore
from pegasus.time.decay import RULE
from tests.conftest import SEED_GRAPH, wipe


@pytest.mark.neo4j
def test_sqlite_to_neo4j_and_back(tmp_path, _neo4j_session_store) -> None:
    neo4j = _neo4j_session_store
    user = f"move-{uuid.uuid4().hex[:8]}"
    sqlite = SQLiteStore(tmp_path / "a.db")
    try:
        graph = parse_graph(SEED_GRAPH.read_text())
        graph.self_id = "PERSON::trevor"
        graph.conversations = [
            Conversation(id="seed-trevor-1", summary="career", tags=["x"],
                         journal=['{"t": "end"}'], used_edges=[graph.edges[0].id])
        ]  # fmt: skip
        sqlite.apply(user, Changes.of_graph(graph))
        # Age it so that current strength, dormancy and strength0 all differ.
        sqlite.decay(datetime(2028, 1, 1, tzinfo=UTC), RULE, user=user)
        first = dump_graph(sqlite.export(user))

        neo4j.apply(user, Changes.of_graph(parse_graph(first)))
        second = dump_graph(neo4j.export(user))
        assert second == first

        back = SQLiteStore(tmp_path / "b.db")
        back.apply(user, Changes.of_graph(parse_graph(second)))
        assert dump_graph(back.export(user)) == first
        back.close()
    finally:
        sqlite.close()
        wipe(neo4j, user)

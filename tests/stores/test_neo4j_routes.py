"""The ways a Neo4j is named: a routing URI (clusters, Aura) and a database."""

from __future__ import annotations

import uuid
from urllib.parse import urlparse

import pytest

from pegasus.config import load_settings
from pegasus.errors import StoreError
from pegasus.model import Node
from pegasus.stores import Changes, open_store
from tests.conftest import neo4j_uri, wipe


def routing_uri() -> str:
    address = urlparse(neo4j_uri())
    return f"neo4j://{address.hostname}:{address.port or 7687}"


@pytest.mark.neo4j
def test_a_routing_uri_reads_what_it_wrote(monkeypatch) -> None:
    monkeypatch.setenv("NEO4J_DATABASE", "neo4j")
    store, user = open_store(routing_uri(), load_settings()), f"route-{uuid.uuid4().hex[:8]}"
    try:
        store.apply(user, Changes(nodes=[Node(id="PLACE::lisbon", name="Lisbon", kind="PLACE")]))
        assert [n.name for n in store.find_nodes_named(user, ["lisbon"])] == ["Lisbon"]
    finally:
        wipe(store, user)
        store.close()


@pytest.mark.neo4j
def test_a_database_the_server_lacks_is_one_clear_line(monkeypatch) -> None:
    monkeypatch.setenv("NEO4J_DATABASE", "nowhere")
    monkeypatch.setenv("PEGASUS_NEO4J_RETRY_SECONDS", "0")
    with pytest.raises(StoreError) as refused:
        open_store(routing_uri(), load_settings())
    assert "nowhere" in str(refused.value) and "\n" not in str(refused.value)

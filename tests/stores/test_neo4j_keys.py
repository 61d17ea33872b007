"""Neo4j keeps claims' vectors in an index of their own: a search for names is never
crowded out by the many more claims, and keys written before the split are moved.
Small owners are searched in memory, from a copy that follows every write."""

from __future__ import annotations

import uuid

import pytest

from pegasus.model import EmbeddingKey
from pegasus.stores import Changes
from pegasus.stores import neo4j as neo4j_store
from pegasus.stores.neo4j import Neo4jStore
from tests.conftest import neo4j_uri, wipe


def unit(*xs: float) -> list[float]:
    return [x / sum(v * v for v in xs) ** 0.5 for x in xs]


@pytest.fixture(params=["in memory", "vector index"])
def search_route(request, monkeypatch) -> str:
    if request.param == "vector index":  # every owner counts as large
        monkeypatch.setattr(neo4j_store, "SMALL_OWNER_NAMES", -1)
    return request.param


def test_names_and_claims_are_searched_apart(_neo4j_session_store, search_route) -> None:
    store, user = _neo4j_session_store, f"keys-{uuid.uuid4().hex[:8]}"
    name = EmbeddingKey(id="n", text="Ana", ref="PERSON::ana", kind="node", vector=unit(1, 0.2, 0))
    claims = [
        EmbeddingKey(id=f"claim|e{i}", text=f"Ana likes {i}", ref=f"e{i}", kind="claim",
                     vector=unit(1, 0, 0.01 * i))
        for i in range(60)
    ]  # fmt: skip
    try:
        store.apply(user, Changes(keys=[name, *claims]))
        query = [unit(1, 0, 0)]
        (names,) = store.search_keys_many(user, query, 3, ("node", "alias", "relation"))
        assert [k.id for k, _ in names] == ["n"]
        (found,) = store.search_keys_many(user, query, 3, ("claim",))
        assert [k.id for k, _ in found] == ["claim|e0", "claim|e1", "claim|e2"]
        (both,) = store.search_keys_many(user, query, 2)
        assert [k.id for k, _ in both] == ["claim|e0", "claim|e1"]
        assert {k.id for k in store.list_keys(user, with_vectors=True) if k.vector} == {
            "n",
            *(c.id for c in claims),
        }
        # A claim key stored the old way (its vector beside the names') is moved.
        store._query(
            "MATCH (k:Key {user: $user, id: 'claim|e0'}) "
            "SET k.embedding = k.claim_embedding REMOVE k.claim_embedding",
            user=user,
        )
        reopened = Neo4jStore(neo4j_uri())
        try:
            (found,) = reopened.search_keys_many(user, query, 1, ("claim",))
            assert [k.id for k, _ in found] == ["claim|e0"]
            (names,) = reopened.search_keys_many(user, query, 1, ("node",))
            assert [k.id for k, _ in names] == ["n"]
        finally:
            reopened.close()
    finally:
        wipe(store, user)


def test_a_small_owners_copy_follows_writes_from_elsewhere(_neo4j_session_store) -> None:
    """Another process's write (here another store object) is seen by the next search,
    and another owner's keys never show."""
    store, user, other = (
        _neo4j_session_store,
        f"keys-{uuid.uuid4().hex[:8]}",
        f"keys-{uuid.uuid4().hex[:8]}",
    )
    key = EmbeddingKey(id="a", text="Ana", ref="PERSON::ana", kind="node", vector=unit(1, 0, 0))
    writer = Neo4jStore(neo4j_uri())
    try:
        store.apply(user, Changes(keys=[key]))
        writer.apply(other, Changes(keys=[key.model_copy(update={"id": "x"})]))
        (found,) = store.search_keys_many(user, [unit(0, 1, 0)], 5)
        assert [k.id for k, _ in found] == ["a"]
        closer = EmbeddingKey(
            id="b", text="Bo", ref="PERSON::bo", kind="node", vector=unit(0, 1, 0)
        )
        writer.apply(user, Changes(keys=[closer]))
        (found,) = store.search_keys_many(user, [unit(0, 1, 0)], 5)
        assert [k.id for k, _ in found] == ["b", "a"]
        writer.apply(user, Changes(delete_keys=["b"]))
        (found,) = store.search_keys_many(user, [unit(0, 1, 0)], 5)
        assert [k.id for k, _ in found] == ["a"]
    finally:
        writer.close()
        wipe(store, user)
        wipe(store, other)

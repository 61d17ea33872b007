"""Neo4j keeps claims' vectors in an index of their own: a search for names is never
crowded out by the many more claims, and keys written before the split are moved."""

from __future__ import annotations

import uuid

from pegasus.model import EmbeddingKey
from pegasus.stores import Changes
from pegasus.stores.neo4j import Neo4jStore
from tests.conftest import neo4j_uri, wipe


def unit(*xs: float) -> list[float]:
    return [x / sum(v * v for v in xs) ** 0.5 for x in xs]


def test_names_and_claims_are_searched_apart(_neo4j_session_store) -> None:
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

"""Neo4j keeps claims' vectors in an index of their own: a search for names is never
crowded out by the many more claims, and keys written before the split are moved.
Owners are searched in memory, from a copy that follows every write; a large one is
read in the background (the index answers meanwhile), one too large for the room
given is searched through the index."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from pegasus.model import EmbeddingKey
from pegasus.stores import Changes
from pegasus.stores.neo4j import Neo4jStore
from pegasus.stores.neo4j import store as neo4j_store
from tests.conftest import neo4j_uri, wipe


def unit(*xs: float) -> list[float]:
    return [x / sum(v * v for v in xs) ** 0.5 for x in xs]


@pytest.fixture(params=["in memory", "vector index"])
def search_store(request, _neo4j_session_store) -> Iterator[Neo4jStore]:
    if request.param == "in memory":
        yield _neo4j_session_store
        return
    store = Neo4jStore(neo4j_uri(), held_mb=0)  # holds no copy: every search asks the index
    yield store
    store.close()


def test_names_and_claims_are_searched_apart(search_store) -> None:
    store, user = search_store, f"keys-{uuid.uuid4().hex[:8]}"
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
        reopened = Neo4jStore(neo4j_uri(), held_mb=0)  # the moved key, through the index
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


def test_a_large_owners_copy_catches_up_on_writes(_neo4j_session_store, monkeypatch) -> None:
    """A large owner is read by ``warm``; later writes are read on their own (the copy
    is updated, not read again), a removal reads it again, and an owner too large
    for the room is answered by the index."""
    monkeypatch.setattr(neo4j_store, "SMALL_OWNER_NAMES", 0)
    user = f"keys-{uuid.uuid4().hex[:8]}"
    far = [EmbeddingKey(id=f"f{i}", text=f"far {i}", ref=f"PERSON::f{i}", kind="node",
                        vector=unit(0.5 - 0.01 * i, 1, 0)) for i in range(30)]  # fmt: skip
    store, writer = Neo4jStore(neo4j_uri()), Neo4jStore(neo4j_uri())
    tiny = Neo4jStore(neo4j_uri(), held_mb=0.001)  # 1 KB: room for no owner
    query = [unit(1, 0, 0)]
    try:
        writer.apply(user, Changes(keys=far))
        store.warm(user)
        (found,) = store.search_keys_many(user, query, 1)
        assert [k.id for k, _ in found] == ["f0"]
        read = spy_reads(store, monkeypatch)
        near = EmbeddingKey(id="near", text="Ana", ref="PERSON::ana", kind="node",
                            vector=unit(1, 0.1, 0))  # fmt: skip
        writer.apply(user, Changes(keys=[near]))
        (found,) = store.search_keys_many(user, query, 2)
        assert [k.id for k, _ in found] == ["near", "f0"]
        assert "key_list_since" in read and "key_list" not in read
        moved = near.model_copy(update={"vector": unit(0, 1, 0)})  # the same key, changed
        writer.apply(user, Changes(keys=[moved]))
        (found,) = store.search_keys_many(user, query, 1)
        assert [k.id for k, _ in found] == ["f0"]
        writer.apply(user, Changes(delete_keys=["f0"]))
        store.warm(user)
        (found,) = store.search_keys_many(user, query, 1)
        assert [k.id for k, _ in found] == ["f1"]
        assert "key_list" in read
        tiny.warm(user)
        (found,) = tiny.search_keys_many(user, query, 1)
        assert [k.id for k, _ in found] == ["f1"]  # the index's answer
        assert not tiny._held
    finally:
        for each in (store, writer, tiny):
            each.close()
        wipe(_neo4j_session_store, user)


def test_large_owners_are_read_in_the_background_once_warm(
    _neo4j_session_store, monkeypatch
) -> None:
    """A one-shot process never reads a large owner it searches; a warmed one reads
    it behind the search, which the index answers meanwhile."""
    monkeypatch.setattr(neo4j_store, "SMALL_OWNER_NAMES", 0)
    users = [f"keys-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    key = EmbeddingKey(id="a", text="Ana", ref="PERSON::ana", kind="node", vector=unit(1, 0, 0))
    one_shot, service = Neo4jStore(neo4j_uri()), Neo4jStore(neo4j_uri())
    try:
        for user in users:
            _neo4j_session_store.apply(user, Changes(keys=[key]))
        for store in (one_shot, service):
            (found,) = store.search_keys_many(users[1], [unit(1, 0, 0)], 1)
            assert [k.id for k, _ in found] == ["a"]
        service.warm(users[0])
        (found,) = service.search_keys_many(users[1], [unit(1, 0, 0)], 1)
        assert [k.id for k, _ in found] == ["a"]
        deadline = time.monotonic() + 30
        while users[1] not in service._held and time.monotonic() < deadline:
            time.sleep(0.05)
        assert set(service._held) == set(users)
        assert not one_shot._held
    finally:
        for store in (one_shot, service):
            store.close()
        for user in users:
            wipe(_neo4j_session_store, user)


def spy_reads(store: Neo4jStore, monkeypatch) -> list[str]:
    """The names of the statements ``store`` reads from now on."""
    read: list[str] = []
    real = store._read

    def recorded(statement: str, /, *each, **params):
        read.append(statement)
        return real(statement, *each, **params)

    monkeypatch.setattr(store, "_read", recorded)
    return read


def test_one_recall_looks_at_the_owner_once(_neo4j_session_store) -> None:
    """Inside ``reading`` the owner's state is read once: a write by another process
    landing half-way through a recall is seen by the next one. The mean of the keys
    held in memory is the one the index path keeps in the database."""
    store, user = _neo4j_session_store, f"keys-{uuid.uuid4().hex[:8]}"
    other = Neo4jStore(neo4j_uri())  # another process's store
    near = EmbeddingKey(id="near", text="Ana", ref="PERSON::ana", kind="node", vector=unit(1, 1, 0))
    nearer = EmbeddingKey(id="nearer", text="Bo", ref="PERSON::bo", kind="node",
                          vector=unit(1, 0.1, 0))  # fmt: skip
    query = [unit(1, 0, 0)]
    try:
        store.apply(user, Changes(keys=[near], self_id="PERSON::ana"))
        with store.reading(user):
            (found,) = store.search_keys_many(user, query, 1)
            assert [k.id for k, _ in found] == ["near"] and store.get_self(user) == "PERSON::ana"
            other.apply(user, Changes(keys=[nearer], self_id="PERSON::bo"))
            (found,) = store.search_keys_many(user, query, 1)
            assert [k.id for k, _ in found] == ["near"] and store.get_self(user) == "PERSON::ana"
        (found,) = store.search_keys_many(user, query, 1)
        assert [k.id for k, _ in found] == ["nearer"] and store.get_self(user) == "PERSON::bo"
        unheld = Neo4jStore(neo4j_uri(), held_mb=0)
        try:
            assert store.key_mean(user) == pytest.approx(unheld.key_mean(user), abs=1e-6)
        finally:
            unheld.close()
    finally:
        other.close()
        wipe(store, user)

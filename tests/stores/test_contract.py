"""The store contract: every test here runs unchanged on SQLite and on Neo4j."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import pytest

from pegasus.errors import ValidationError
from pegasus.interchange import Graph, parse_graph
from pegasus.model import Conversation, Edge, EmbeddingKey, Node, edge_id
from pegasus.stores import Changes, Store
from pegasus.stores.neo4j import store as neo4j_store
from pegasus.stores.sqlite import store as sqlite_store
from pegasus.time.decay import DECAY_RATES, RULE, edge_state, reinforced_edge
from tests.conftest import SEED_GRAPH

T0 = datetime(2026, 9, 14, 18, 0, tzinfo=UTC)


def person(name: str, **extra: object) -> Node:
    return Node(id=f"PERSON::{name.lower()}", name=name, kind="PERSON", **extra)


def claim(source: Node, relation: str, target: Node, **extra: object) -> Edge:
    fields: dict[str, object] = {"snippet": f"{source.name} {relation} {target.name}"}
    fields.update(extra)
    return Edge(
        id=edge_id(source.id, relation, target.id),
        source=source.id,
        target=target.id,
        relation=relation,
        **fields,
    )


def chain(store: Store, user: str) -> tuple[list[Node], list[Edge]]:
    """a -> b -> c -> d, plus e -> b (so b is reached in reverse from e)."""
    nodes = [person(name) for name in "ABCDE"]
    a, b, c, d, e = nodes
    edges = [
        claim(a, "KNOWS", b, touched_at=T0, strength=80, strength0=80),
        claim(b, "KNOWS", c, touched_at=T0, strength=60, strength0=60),
        claim(c, "KNOWS", d, touched_at=T0),
        claim(e, "MANAGES", b, touched_at=T0),
    ]
    store.apply(user, Changes(nodes=nodes))
    store.apply(user, Changes(edges=edges))
    return nodes, edges


def full_node() -> Node:
    return Node(
        id="PERSON::zoë",
        name="Zoë Ångström 王",
        kind="PERSON",
        aliases=["Zo", "Dr. Ångström"],
        properties={"role": "cellist", "since": "2019", "note": 'quote "this"\nnewline'},
        confidence=0.75,
        conversations=["c1", "c2"],
        provisional=True,
        created_at=T0,
        updated_at=T0 + timedelta(days=1, microseconds=17),
    )


def full_edge(source: Node, target: Node) -> Edge:
    return Edge(
        id="custom-edge-1",
        source=source.id,
        target=target.id,
        relation="PLAYS_IN",
        strength=42.5,
        strength0=61.25,
        touched_at=T0 + timedelta(hours=3, microseconds=5),
        confidence=0.6,
        stability="time_bound",
        cardinality="one_to_one",
        expires_at=T0 + timedelta(days=30),
        snippet="I play cello in the city orchestra — since 2019!",
        evidence="said twice",
        properties={"section": "cello"},
        conversations=["c2"],
        superseded_by=None,
        dormant=False,
        expired=False,
        created_at=T0,
    )


# --- round trips ----------------------------------------------------------------


def test_node_round_trips_every_field(store: Store, user: str) -> None:
    node = full_node()
    store.apply(user, Changes(nodes=[node]))
    assert store.get_nodes(user, [node.id]) == [node]


def test_edge_round_trips_every_field(store: Store, user: str) -> None:
    zoe, orchestra = full_node(), Node(id="ORG::orchestra", name="City Orchestra", kind="ORG")
    edge = full_edge(zoe, orchestra)
    old = edge.evolve(**{"id": "older", "superseded_by": edge.id, "dormant": True, "expired": True})
    store.apply(user, Changes(nodes=[zoe, orchestra]))
    store.apply(user, Changes(edges=[edge, old]))
    assert sorted(store.get_edges(user, [edge.id, old.id]), key=lambda e: e.id) == [edge, old]


def test_upsert_replaces_node_fields_and_kind(store: Store, user: str) -> None:
    node = full_node()
    store.apply(user, Changes(nodes=[node]))
    changed = node.evolve(**{"kind": "ORG", "aliases": ["Z"], "properties": {}})
    store.apply(user, Changes(nodes=[changed]))
    assert store.get_nodes(user, [node.id]) == [changed]
    assert store.find_nodes(user, "Dr. Ångström") == []
    assert store.find_nodes(user, "z", kind="ORG") == [changed]


def test_conversation_round_trips(store: Store, user: str) -> None:
    conversation = Conversation(
        id="c-1",
        started_at=T0,
        ended_at=T0 + timedelta(minutes=5),
        summary="career choice",
        importance=0.8,
        tags=["career", "money"],
        turns_ingested=2,
        content_hash="abc",
        notes=["dropped a self-relation"],
        journal=['{"t": "reply", "content": "ünïcode \\n"}', '{"t": "end"}'],
        flagged_merges=["'Bill S.' merged into PERSON::bill at 0.80"],
    )
    store.apply(user, Changes(conversations=[conversation]))
    assert store.get_conversation(user, "c-1") == conversation
    assert store.get_conversation(user, "missing") is None
    store.apply(user, Changes(conversations=[Conversation(id="c-0")]))
    assert [c.id for c in store.list_conversations(user)] == ["c-0", "c-1"]


def test_self_node(store: Store, user: str) -> None:
    assert store.get_self(user) is None
    node = person("Trevor")
    store.apply(user, Changes(nodes=[node]))
    store.apply(user, Changes(self_id=node.id))
    assert store.get_self(user) == node.id


# --- lookups ---------------------------------------------------------------------


def test_find_by_name_or_alias_ignores_case(store: Store, user: str) -> None:
    bill = person("William", aliases=["Bill"])
    acme = Node(id="ORG::william", name="William", kind="ORG")
    store.apply(user, Changes(nodes=[bill, acme]))
    assert {n.id for n in store.find_nodes(user, "william")} == {bill.id, acme.id}
    assert store.find_nodes(user, "BILL") == [bill]
    assert store.find_nodes(user, "William", kind="ORG") == [acme]
    assert store.find_nodes(user, "Will") == []
    found = store.find_nodes_named(user, ["bill", "WILLIAM", "nobody"])
    assert [n.id for n in found] == [acme.id, bill.id]


def test_ranked_edges_are_live_only(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    store.apply(user, Changes(edges=[edges[2].evolve(strength=1.0, dormant=True)]))
    assert [e.id for e in store.ranked_edges(user, strongest=True, limit=2)] == [
        edges[3].id, edges[0].id]  # fmt: skip
    assert [e.id for e in store.ranked_edges(user, strongest=False)] == [
        edges[1].id, edges[0].id, edges[3].id]  # fmt: skip


def test_edges_a_claim_meets(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    a, b, c, d, e = nodes
    single = claim(a, "KNOWS", d, cardinality="one_to_one")
    history = claim(a, "KNOWS", c, cardinality="one_to_one", superseded_by=single.id)
    store.apply(user, Changes(edges=[single, history]))
    # The same claim (even superseded), and the live one_to_one rivals; not a->b (a list).
    found = store.edges_meeting(user, [(a.id, "KNOWS", c.id), (e.id, "MANAGES", b.id)])
    assert {x.id for x in found} == {history.id, single.id, edges[3].id}
    assert {x.id for x in store.edges_meeting(user, [(a.id, "KNOWS", e.id)])} == {single.id}
    assert store.edges_meeting(user, [(b.id, "MANAGES", a.id)]) == []
    assert store.edges_meeting(user, []) == []


def test_edges_touching_includes_history(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    old = edges[0].evolve(**{"superseded_by": edges[1].id})
    store.apply(user, Changes(edges=[old]))
    touching = {e.id for e in store.edges_touching(user, [nodes[0].id])}
    assert touching == {edges[0].id}
    assert {e.id for e in store.edges_touching(user, [nodes[1].id])} == {
        edges[0].id,
        edges[1].id,
        edges[3].id,
    }


def test_subgraph_two_hops_both_directions(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    a, b, c, d, e = nodes
    graph = store.subgraph(user, [a.id], hops=2)
    assert {n.id for n in graph.nodes} == {a.id, b.id, c.id, e.id}
    assert {x.id for x in graph.edges} == {edges[0].id, edges[1].id, edges[3].id}
    one_hop = store.subgraph(user, [c.id], hops=1)
    assert {n.id for n in one_hop.nodes} == {b.id, c.id, d.id}
    # Edges keep their fields through the pull.
    assert next(x for x in graph.edges if x.id == edges[0].id) == edges[0]


def test_subgraph_skips_dead_edges_unless_asked(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    store.apply(user, Changes(edges=[edges[0].evolve(**{"dormant": True})]))
    live = store.subgraph(user, [nodes[0].id])
    assert live.edges == [] and [n.id for n in live.nodes] == [nodes[0].id]
    everything = store.subgraph(user, [nodes[0].id], live_only=False)
    assert {x.id for x in everything.edges} == {edges[0].id, edges[1].id, edges[3].id}


def test_subgraph_of_nothing(store: Store, user: str) -> None:
    assert store.subgraph(user, []).nodes == []
    assert store.subgraph(user, ["PERSON::nobody"]).edges == []


# --- scoping -------------------------------------------------------------------


def test_owners_never_see_each_other(store: Store, users: tuple[str, str]) -> None:
    alice, bob = users
    chain(store, alice)
    secret = person("A", properties={"secret": "bob's"})
    store.apply(bob, Changes(nodes=[secret]))
    store.apply(bob, Changes(keys=[EmbeddingKey(id="k", text="A", ref=secret.id, kind="node",
                                         vector=[1, 0, 0])]))  # fmt: skip
    store.apply(bob, Changes(conversations=[Conversation(id="bob-only")]))

    assert store.get_nodes(alice, [secret.id])[0].properties == {}
    assert store.get_nodes(bob, [secret.id]) == [secret]
    assert store.get_edges(bob, [e.id for e in store.export(alice).edges]) == []
    assert store.subgraph(bob, [secret.id]).edges == []
    assert store.search_keys(alice, [1, 0, 0]) == []
    assert store.list_keys(alice) == []
    assert store.get_conversation(alice, "bob-only") is None
    assert store.list_conversations(alice) == []
    assert store.find_nodes_named(bob, ["B", "C"]) == []
    assert store.edges_meeting(bob, [("PERSON::a", "KNOWS", "PERSON::b")]) == []
    assert store.stats(bob).nodes == 1 and store.stats(bob).edges == 0
    assert store.stats(alice).nodes == 5 and store.stats(alice).edges == 4

    store.apply(bob, Changes(delete_nodes=[secret.id]))
    assert len(store.get_nodes(alice, [secret.id])) == 1
    assert store.export(alice).edges and not store.export(bob).nodes


# --- deletes -------------------------------------------------------------------------


def test_delete_node_takes_its_edges_and_keys(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    b = nodes[1]
    store.apply(
        user,
        Changes(
            keys=[
                EmbeddingKey(id="kb", text="B", ref=b.id, kind="node", vector=[1, 0]),
                EmbeddingKey(id="kr", text="knows", ref="KNOWS", kind="relation", vector=[0, 1]),
            ]
        ),
    )
    store.apply(user, Changes(delete_nodes=[b.id]))
    assert {e.id for e in store.export(user).edges} == {edges[2].id}
    assert [k.id for k in store.list_keys(user)] == ["kr"]
    store.apply(user, Changes(delete_edges=[edges[2].id]))
    assert store.export(user).edges == []
    assert len(store.export(user).nodes) == 4


# --- vector search ---------------------------------------------------------------------


def test_vector_search_ranks_by_cosine(store: Store, user: str) -> None:
    keys = [
        EmbeddingKey(id="north", text="north", ref="PLACE::n", kind="node", vector=[0, 1, 0]),
        EmbeddingKey(id="east", text="east", ref="PLACE::e", kind="node", vector=[1, 0, 0]),
        EmbeddingKey(id="ne", text="north-east", ref="PLACE::ne", kind="node",
                     vector=[1, 1, 0]),
        EmbeddingKey(id="down", text="down", ref="WORKS_AT", kind="relation", vector=[0, 0, 2]),
    ]  # fmt: skip
    store.apply(user, Changes(keys=keys))
    hits = store.search_keys(user, [0.9, 0.1, 0.0], limit=3)
    assert [k.id for k, _ in hits] == ["east", "ne", "north"]
    assert hits[0][1] == pytest.approx(0.9 / (0.82**0.5), abs=1e-3)
    assert hits[1][1] == pytest.approx(1.0 / (0.82**0.5 * 2**0.5), abs=1e-3)
    listed = {k.id: k for k in store.list_keys(user, with_vectors=True)}
    assert listed["ne"].vector == pytest.approx([1, 1, 0])
    store.apply(user, Changes(delete_keys=["east"]))
    assert store.search_keys(user, [1, 0, 0], limit=1)[0][0].id == "ne"


def test_key_with_bad_relation_is_refused(store: Store, user: str) -> None:
    bad = EmbeddingKey(id="k", text="works at", ref="works at", kind="relation", vector=[1.0])
    with pytest.raises(ValidationError):
        store.apply(user, Changes(keys=[bad]))
    assert store.list_keys(user) == []


# --- decay and reinforcement ---------------------------------------------------


def reinforce(store: Store, user: str, ids: list[str], now: datetime) -> int:
    """What a close does to the edges it used, in one write."""
    edges = store.get_edges(user, ids)
    store.apply(user, Changes(edges=[reinforced_edge(edge, now) for edge in edges]))
    return len(edges)


def _decay_graph(store: Store, user: str) -> list[Edge]:
    hub = person("Hub")
    others = [Node(id=f"THING::{s}", name=s, kind="THING") for s in DECAY_RATES]
    edges = [
        claim(hub, "HAS", other, stability=other.name, touched_at=T0, strength0=90, strength=90)
        for other in others
    ]
    temporary = claim(hub, "VISITS", others[3], stability="time_bound", touched_at=T0,
                      expires_at=T0 + timedelta(days=10))  # fmt: skip
    store.apply(user, Changes(nodes=[hub, *others]))
    store.apply(user, Changes(edges=[*edges, temporary]))
    return [*edges, temporary]


@pytest.mark.parametrize("days", [1, 30, 365])
def test_decay_follows_the_formula(store: Store, user: str, days: int) -> None:
    edges = _decay_graph(store, user)
    now = T0 + timedelta(days=days)
    report = store.decay(now, RULE, user=user, batch_size=2)
    assert report.edges == len(edges)
    for edge in store.get_edges(user, [e.id for e in edges]):
        expected = edge_state(edge, now).strength
        assert edge.strength == pytest.approx(expected, rel=1e-9)
        assert edge.dormant == (expected < RULE.dormant_below)
        assert edge.expired == (edge.expires_at is not None and edge.expires_at <= now)
        assert edge.strength0 == 90 or edge.relation == "VISITS"


def test_decay_is_idempotent_and_scoped(store: Store, users: tuple[str, str]) -> None:
    alice, bob = users
    _decay_graph(store, alice)
    _decay_graph(store, bob)
    late = T0 + timedelta(days=400)
    store.decay(late, RULE, user=alice)
    once = store.export(alice).edges
    store.decay(late, RULE, user=alice)
    assert sorted(store.export(alice).edges, key=lambda e: e.id) == sorted(once, key=lambda e: e.id)
    assert any(e.dormant for e in once) and any(e.expired for e in once)
    assert all(e.strength == 90 or e.relation == "VISITS" for e in store.export(bob).edges)


def test_decay_of_every_owner(store: Store, users: tuple[str, str]) -> None:
    edges = {user: _decay_graph(store, user) for user in users}
    late = T0 + timedelta(days=400)
    report = store.decay(late, RULE, user=None)
    assert report.edges >= sum(len(e) for e in edges.values())  # other tests' owners too
    for user, mine in edges.items():
        for edge in store.get_edges(user, [e.id for e in mine]):
            assert edge.strength == pytest.approx(edge_state(edge, late).strength, rel=1e-9)


def test_reinforce_adds_to_the_decayed_strength(store: Store, user: str) -> None:
    edges = _decay_graph(store, user)
    mutable = next(e for e in edges if e.stability == "mutable")
    immutable = next(e for e in edges if e.stability == "immutable")
    now = T0 + timedelta(days=100)
    store.decay(now, RULE, user=user)
    count = reinforce(store, user, [mutable.id, immutable.id, "missing"], now)
    assert count == 2
    got = {e.id: e for e in store.get_edges(user, [mutable.id, immutable.id])}
    expected = edge_state(mutable, now).strength + 15
    assert got[mutable.id].strength0 == pytest.approx(expected)
    assert got[mutable.id].strength == pytest.approx(expected)
    assert got[mutable.id].touched_at == now
    assert got[immutable.id].strength0 == 100.0  # capped


def test_edges_by_id_whatever_the_ids_look_like(store: Store, user: str) -> None:
    # Imported files may carry their own edge ids; the usual form names the ends.
    ann, bo = person("Ann"), person("Bo")
    usual = claim(ann, "KNOWS", bo, touched_at=T0)
    own = claim(bo, "KNOWS", ann, touched_at=T0).evolve(id="e1")
    tricky = claim(bo, "LIKES", ann, touched_at=T0).evolve(id="PERSON::ann::LIKES::PERSON::x")
    store.apply(user, Changes(nodes=[ann, bo]))
    store.apply(user, Changes(edges=[usual, own, tricky]))
    ids = [usual.id, own.id, tricky.id]
    assert {e.id for e in store.get_edges(user, ids)} == set(ids)
    assert reinforce(store, user, [*ids, usual.id], T0) == 3
    store.apply(user, Changes(delete_edges=ids[1:]))
    assert [e.id for e in store.export(user).edges] == [usual.id]


def test_reinforce_wakes_a_dormant_edge(store: Store, user: str) -> None:
    edges = _decay_graph(store, user)
    ephemeral = next(e for e in edges if e.stability == "ephemeral")
    now = T0 + timedelta(days=60)
    store.decay(now, RULE, user=user)
    assert store.get_edges(user, [ephemeral.id])[0].dormant
    reinforce(store, user, [ephemeral.id], now)
    woken = store.get_edges(user, [ephemeral.id])[0]
    assert not woken.dormant and woken.strength0 == pytest.approx(
        edge_state(ephemeral, now).strength + 15
    )


# --- import and export ---------------------------------------------------------------


def test_seed_graph_round_trips(store: Store, user: str) -> None:
    graph = parse_graph(SEED_GRAPH.read_text())
    store.apply(user, Changes.of_graph(graph))
    back = store.export(user)
    assert sorted(back.nodes, key=lambda n: n.id) == sorted(graph.nodes, key=lambda n: n.id)
    assert sorted(back.edges, key=lambda e: e.id) == sorted(graph.edges, key=lambda e: e.id)
    stats = store.stats(user)
    assert (stats.nodes, stats.edges) == (16, 21)
    assert stats.nodes_by_kind["PREFERENCE"] == 5
    assert stats.edges_by_relation["CONSIDERING"] == 3


def test_full_export_survives_import(store: Store, users: tuple[str, str]) -> None:
    alice, bob = users
    nodes, _ = chain(store, alice)
    zoe = full_node()
    store.apply(alice, Changes(nodes=[zoe]))
    store.apply(alice, Changes(edges=[full_edge(zoe, nodes[0])]))
    store.apply(alice, Changes(conversations=[Conversation(id="c1", summary="s", tags=["t"])]))
    store.apply(alice, Changes(self_id=nodes[0].id))
    exported = store.export(alice)
    store.apply(bob, Changes.of_graph(exported))
    again = store.export(bob)
    assert again.self_id == exported.self_id
    for field in ("nodes", "edges", "conversations"):
        assert sorted(getattr(again, field), key=lambda x: x.id) == sorted(
            getattr(exported, field), key=lambda x: x.id
        )


def test_bad_import_writes_nothing(store: Store, user: str) -> None:
    nodes, _ = chain(store, user)
    before = store.export(user)
    newcomer = person("Newcomer")
    dangling = claim(newcomer, "KNOWS", person("Ghost"))
    with pytest.raises(ValidationError, match="Ghost|ghost"):
        store.apply(user, Changes.of_graph(Graph(nodes=[newcomer], edges=[dangling])))
    with pytest.raises(ValidationError):
        store.apply(user, Changes(edges=[dangling]))
    after = store.export(user)
    assert sorted(after.nodes, key=lambda n: n.id) == sorted(before.nodes, key=lambda n: n.id)
    assert len(after.edges) == len(before.edges)


def test_key_mean_follows_every_change(store: Store, user: str) -> None:
    assert store.key_mean(user) is None
    a, b = person("A"), person("B")
    store.apply(user, Changes(nodes=[a, b]))
    store.apply(
        user,
        Changes(
            keys=[
                EmbeddingKey(id="ka", text="A", ref=a.id, kind="node", vector=[1, 0, 0]),
                EmbeddingKey(id="kb", text="B", ref=b.id, kind="node", vector=[0, 1, 0]),
                EmbeddingKey(id="kr", text="knows", ref="KNOWS", kind="relation", vector=[0, 0, 1]),
            ]
        ),
    )
    assert store.key_mean(user) == pytest.approx([1 / 3, 1 / 3, 1 / 3])
    store.apply(user, Changes(keys=[EmbeddingKey(id="ka", text="A", ref=a.id, kind="node",
                                          vector=[0, 0, 1])]))  # fmt: skip
    assert store.key_mean(user) == pytest.approx([0, 1 / 3, 2 / 3])
    store.apply(user, Changes(delete_keys=["kr"]))
    assert store.key_mean(user) == pytest.approx([0, 0.5, 0.5])
    store.apply(user, Changes(delete_nodes=[b.id]))
    assert store.key_mean(user) == pytest.approx([0, 0, 1])
    hit, score = store.search_keys(user, [0, 0, 1], limit=1)[0]
    assert hit.id == "ka" and hit.vector == pytest.approx([0, 0, 1]) and score == pytest.approx(1)


def test_subgraph_stops_at_hubs(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    a, b, c, d, e = nodes
    graph = store.subgraph(user, [a.id], hops=2, stop_at=[b.id])
    assert {n.id for n in graph.nodes} == {a.id, b.id}
    assert {x.id for x in graph.edges} == {edges[0].id}


def test_edges_with_relation(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    store.apply(user, Changes(edges=[edges[1].evolve(dormant=True)]))
    assert {e.id for e in store.edges_with_relation(user, ["KNOWS"])} == {edges[0].id, edges[2].id}
    assert [e.id for e in store.edges_with_relation(user, ["MANAGES", "NOPE"])] == [edges[3].id]


# --- one write: all or nothing -----------------------------------------------------


def _everything(store: Store, user: str) -> tuple:
    graph = store.export(user)
    return (
        sorted(graph.nodes, key=lambda n: n.id),
        sorted(graph.edges, key=lambda e: e.id),
        graph.conversations,
        graph.self_id,
        store.list_keys(user, with_vectors=True),
    )


def _one_of_each(store: Store, user: str, nodes: list[Node]) -> Changes:
    """A change that touches every part of the store."""
    newcomer = person("Newcomer")
    return Changes(
        nodes=[newcomer, nodes[0].evolve(aliases=["Renamed"])],
        edges=[claim(newcomer, "KNOWS", nodes[0])],
        conversations=[Conversation(id="c-new", summary="new")],
        keys=[EmbeddingKey(id="k-new", text="N", ref=newcomer.id, kind="node", vector=[0, 1])],
        self_id=newcomer.id,
        delete_nodes=[nodes[3].id],
        delete_edges=[edge_id(nodes[0].id, "KNOWS", nodes[1].id)],
        delete_conversations=["c-old"],
        delete_keys=["k-old"],
        journal={"c-new": ["line"]},
        used={"c-used": ["x"]},
        used_done={"c-old": ["e"]},
    )


def _prepared(store: Store, user: str) -> list[Node]:
    nodes, _ = chain(store, user)
    store.apply(
        user,
        Changes(
            conversations=[Conversation(id="c-old", journal=["j"], used_edges=["e"])],
            keys=[EmbeddingKey(id="k-old", text="A", ref=nodes[0].id, kind="node", vector=[1, 0])],
            self_id=nodes[0].id,
        ),
    )
    return nodes


def test_a_failed_apply_leaves_nothing(store: Store, user: str, monkeypatch) -> None:
    nodes = _prepared(store, user)
    before = _everything(store, user)

    def fail(*args: object) -> None:
        raise RuntimeError("injected at the last step")

    # The last step of each store's write (its package's writes module).
    writes = importlib.import_module(type(store).__module__.rpartition(".")[0] + ".writes")
    monkeypatch.setattr(writes, "_merge_conversations", fail)
    with pytest.raises(RuntimeError, match="injected"):
        store.apply(user, _one_of_each(store, user, nodes))
    assert _everything(store, user) == before
    monkeypatch.undo()

    dangling = _one_of_each(store, user, nodes)
    dangling.edges = [*dangling.edges, claim(person("Ghost"), "KNOWS", nodes[0])]
    with pytest.raises(ValidationError, match="Ghost|ghost"):
        store.apply(user, dangling)
    assert _everything(store, user) == before

    store.apply(user, _one_of_each(store, user, nodes))  # and whole, it all lands
    graph = store.export(user)
    assert graph.self_id == "PERSON::newcomer" and "PERSON::d" not in {n.id for n in graph.nodes}
    assert [c.id for c in graph.conversations] == ["c-new", "c-used"]
    assert [k.id for k in store.list_keys(user)] == ["k-new"]


def test_conversation_merges(store: Store, user: str) -> None:
    store.apply(user, Changes(used={"c": ["e1", "e2"]}, journal={"c": ["one"]}))
    assert store.get_conversation(user, "c") == Conversation(
        id="c", used_edges=["e1", "e2"], journal=["one"]
    )
    # A record rewritten from an older read keeps the notes made since; the journal
    # is the record's.
    stale = Conversation(id="c", summary="rewritten", used_edges=["e1"], journal=["one"])
    store.apply(user, Changes(conversations=[stale], used={"c": ["e3"]}, journal={"c": ["two"]}))
    record = store.get_conversation(user, "c")
    assert record.summary == "rewritten" and record.journal == ["one", "two"]
    assert sorted(record.used_edges) == ["e1", "e2", "e3"]
    store.apply(user, Changes(used_done={"c": ["e1", "e3", "never"]}))
    assert store.get_conversation(user, "c").used_edges == ["e2"]
    store.apply(user, Changes(conversations=[record.evolve(journal=[])]))
    assert store.get_conversation(user, "c").journal == []
    with pytest.raises(ValidationError):
        store.apply(user, Changes(used={"": ["e"]}))


def _second_connection(store: Store) -> Store:
    """Another client of the same data: a second connection to the SQLite file (two
    processes would have one each); the Neo4j driver is already a pool."""
    from pegasus.stores.sqlite import SQLiteStore

    return SQLiteStore(store.path) if isinstance(store, SQLiteStore) else store


def test_concurrent_notes_and_closes_lose_nothing(store: Store, user: str) -> None:
    import threading

    other = _second_connection(store)
    noted = [f"e{i}" for i in range(60)]
    closed: list[str] = []
    done = threading.Event()
    failures: list[BaseException] = []

    def note() -> None:
        try:
            for edge in noted:
                store.apply(user, Changes(used={"c": [edge]}))
        except BaseException as exc:
            failures.append(exc)
        finally:
            done.set()

    def close_once() -> None:
        record = other.get_conversation(user, "c")
        if record is None or not record.used_edges:
            return
        # As a close does: the record rewritten, the used edges it read taken off.
        other.apply(user, Changes(conversations=[record.evolve(closed_at=T0)],
                                  used_done={"c": record.used_edges}))  # fmt: skip
        closed.extend(record.used_edges)

    writer = threading.Thread(target=note)
    writer.start()
    while not done.is_set():
        close_once()
    writer.join()
    close_once()
    assert not failures
    assert sorted(closed) == sorted(noted)  # every note closed, and closed once
    if other is not store:
        other.close()


# --- the two stores agree --------------------------------------------------------


@pytest.mark.parametrize("hops", [0, 3, -1])
def test_hops_beyond_two_are_refused(store: Store, user: str, hops: int) -> None:
    nodes, _ = chain(store, user)
    with pytest.raises(ValidationError, match="hops"):
        store.subgraph(user, [nodes[0].id], hops=hops)


@pytest.mark.parametrize("label", ["works at", "KNOWS`) DETACH DELETE n //", "", "x"])
def test_bad_relation_labels_are_refused(store: Store, user: str, label: str) -> None:
    nodes, _ = chain(store, user)
    with pytest.raises(ValidationError, match="relation"):
        store.edges_with_relation(user, [label])
    with pytest.raises(ValidationError, match="relation"):
        store.edges_meeting(user, [(nodes[0].id, label, nodes[1].id)])
    key = EmbeddingKey(id="k", text="t", ref=label or "-", kind="relation", vector=[1.0])
    with pytest.raises(ValidationError, match="relation"):
        store.apply(user, Changes(keys=[key]))
    assert len(store.export(user).edges) == 4


# --- a store's own versions answer as the compositions do --------------------------


def test_faster_versions_agree_with_the_compositions(store: Store, user: str) -> None:
    graph = parse_graph(SEED_GRAPH.read_text())
    ids = [e.id for e in graph.edges]
    graph.edges[0] = graph.edges[0].evolve(dormant=True)
    graph.edges[1] = graph.edges[1].evolve(superseded_by=ids[2])
    store.apply(user, Changes.of_graph(graph))
    store.apply(
        user,
        Changes(
            keys=[
                EmbeddingKey(id="k1", text="a", ref=graph.nodes[0].id, kind="node",
                             vector=[0.6, 0.8, 0]),
                EmbeddingKey(id="k2", text="b", ref="KNOWS", kind="relation", vector=[0, 0, 1]),
            ],
            conversations=[Conversation(id="c2"), Conversation(id="c1")],
        ),
    )  # fmt: skip
    claims = [(e.source, e.relation, e.target) for e in graph.edges[:6]]
    relations = sorted({e.relation for e in graph.edges})[:4]
    by_id = lambda edges: sorted(edges, key=lambda e: e.id)  # noqa: E731
    assert by_id(store.edges_meeting(user, claims)) == by_id(
        Store.edges_meeting(store, user, claims)
    )
    assert by_id(store.edges_with_relation(user, relations)) == by_id(
        Store.edges_with_relation(store, user, relations)
    )
    for strongest in (True, False):
        assert [e.id for e in store.ranked_edges(user, strongest, 4)] == [
            e.id for e in Store.ranked_edges(store, user, strongest, 4)
        ]
    assert store.stats(user) == Store.stats(store, user)
    assert store.key_mean(user) == pytest.approx(Store.key_mean(store, user))
    assert store.list_conversations(user) == Store.list_conversations(store, user)


def test_one_id_written_twice_in_one_apply_is_one_record(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    first, second = edges[0].evolve(snippet="first"), edges[0].evolve(snippet="second")
    store.apply(user, Changes(edges=[first, second], nodes=[nodes[0], nodes[0]]))
    stored = [e for e in store.export(user).edges if e.id == edges[0].id]
    assert [e.snippet for e in stored] == ["second"]


def test_an_edge_id_that_moves_to_other_ends_is_one_edge(store: Store, user: str) -> None:
    nodes, _ = chain(store, user)
    a, b, c = nodes[:3]
    store.apply(user, Changes(edges=[claim(a, "LIKES", b).evolve(id="own-id")]))
    store.apply(user, Changes(edges=[claim(a, "LIKES", c).evolve(id="own-id")]))
    moved = [e for e in store.export(user).edges if e.id == "own-id"]
    assert [(e.source, e.target) for e in moved] == [(a.id, c.id)]


def test_strengths_and_closing_write_nothing_else(store: Store, user: str) -> None:
    nodes, edges = chain(store, user)
    read_by_close = store.get_edges(user, [edges[0].id])[0]
    store.apply(user, Changes(
        edges=[read_by_close.evolve(conversations=["c-new"], snippet="told again")],
        conversations=[Conversation(id="c", turns_ingested=7, content_hash="h")],
    ))  # fmt: skip
    later = T0 + timedelta(days=3)
    store.apply(user, Changes(strengths=[reinforced_edge(read_by_close, later)],
                              closed={"c": later}))  # fmt: skip
    edge = store.get_edges(user, [edges[0].id])[0]
    assert (edge.conversations, edge.snippet) == (["c-new"], "told again")
    assert (
        edge.touched_at == later
        and edge.strength0 == reinforced_edge(read_by_close, later).strength0
    )
    record = store.get_conversation(user, "c")
    assert (record.turns_ingested, record.content_hash, record.closed_at) == (7, "h", later)


def _claim_key(ident: str, text: str, vector: list[float]) -> EmbeddingKey:
    return EmbeddingKey(id=f"claim|{ident}", text=text, ref=ident, kind="claim", vector=vector)


def test_claim_keys_are_searched_apart_from_names(store: Store, users: tuple[str, str]) -> None:
    user, other_user = users
    names = [
        EmbeddingKey(id="n1", text="Pepper", ref="OTHER::pepper", kind="node", vector=[1, 0, 0]),
        EmbeddingKey(id="n2", text="Lena", ref="PERSON::lena", kind="node", vector=[0, 1, 0]),
    ]
    claims = [
        _claim_key("e1", "Lena adopted Pepper: I adopted a greyhound called Pepper", [1, 0.1, 0]),
        _claim_key("e2", "Lena attended pottery workshop: my first time at the wheel", [0, 0, 1]),
    ]
    store.apply(user, Changes(keys=[*names, *claims]))
    store.apply(other_user, Changes(keys=[_claim_key("x", "Omar adopted a greyhound", [1, 0, 0])]))
    assert [k.id for k, _ in store.search_keys(user, [1, 0, 0], 5, ("node",))] == ["n1", "n2"]
    assert [k.id for k, _ in store.search_keys(user, [1, 0, 0], 1, ("claim",))] == ["claim|e1"]
    assert {k.id for k, _ in store.search_keys(user, [1, 0, 0], 10)} == {
        "n1", "n2", "claim|e1", "claim|e2"
    }  # fmt: skip
    # Claims are sentences: the mean that centres name matches is of names only.
    assert store.key_mean(user) == pytest.approx([0.5, 0.5, 0.0])

    found = store.search_words(user, ["greyhound"])
    assert [(k.id, k.kind, k.ref) for k, _ in found] == [("claim|e1", "claim", "e1")]
    assert found[0][1] > 0
    # Word forms meet ("workshops" finds "workshop"), names are never searched by
    # words, and an owner sees only its own claims.
    assert [k.id for k, _ in store.search_words(user, ["workshops"])] == ["claim|e2"]
    assert store.search_words(user, ["pepper"])[0][0].id == "claim|e1"
    assert store.search_words(user, ["omar"]) == []
    assert store.search_words(user, ['") OR 1=1 --', "*", "AND"]) == []
    # Rarer words weigh more: a claim holding both beats one holding the common one.
    ranked = store.search_words(user, ["lena", "wheel"])
    assert [k.id for k, _ in ranked][0] == "claim|e2"

    store.apply(user, Changes(keys=[_claim_key("e1", "Lena walks Pepper daily", [1, 0, 0])]))
    assert store.search_words(user, ["greyhound"]) == []
    assert store.search_words(user, ["walks"])[0][0].id == "claim|e1"
    store.apply(user, Changes(delete_keys=["claim|e1"]))
    assert store.search_words(user, ["walks"]) == []
    assert store.key_mean(user) == pytest.approx([0.5, 0.5, 0.0])


def test_words_in_more_claims_than_the_limit_are_not_searched(
    store: Store, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (sqlite_store, neo4j_store):
        monkeypatch.setattr(module, "COMMON_IN_CLAIMS", 2)

    def written(changes: Changes) -> None:
        store.apply(user, changes)
        # Neo4j counts in its copy of the keys, which a key search (one in every
        # recall) brings up to date.
        store.search_keys(user, [1, 0, 0], 1)

    texts = ["Lena sails the lake", "Lena sails at dawn", "Lena sails with Omar"]
    written(Changes(keys=[_claim_key(f"e{i}", t, [1, 0, i]) for i, t in enumerate(texts)]))
    # "sails" singles out no claim: only "omar" is searched.
    assert store.search_words(user, ["sails"]) == []
    assert [k.id for k, _ in store.search_words(user, ["sails", "omar"])] == ["claim|e2"]
    written(Changes(keys=[_claim_key("e0", "Lena rows the lake", [1, 0, 0])]))
    assert {k.id for k, _ in store.search_words(user, ["sails"])} == {"claim|e1", "claim|e2"}
    written(Changes(keys=[_claim_key("e3", "Omar sails", [0, 1, 0])]))
    assert store.search_words(user, ["sails"]) == []
    written(Changes(delete_keys=["claim|e1"]))
    assert {k.id for k, _ in store.search_words(user, ["sails"])} == {"claim|e2", "claim|e3"}

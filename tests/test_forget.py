"""``forget`` removes its target and what only the target held up, on both stores,
and touches nothing else."""

from __future__ import annotations

from pegasus.errors import NotFoundError
from pegasus.llm.scripted import by_round, recorded_rounds
from pegasus.memory import Memory
from pegasus.model import Node
from pegasus.stores import Changes, Store
from tests.cli_helpers import run_cli
from tests.conftest import SEED_CONVERSATION, SEED_GRAPH
from tests.write.conftest import FINISH, RECORDING, calls, chat, entity, llm_for, relation

REPORTS = "PERSON::trevor::REPORTS_TO::PERSON::joshua"
JOSHUA_WORKS = "PERSON::joshua::WORKS_AT::ORG::deloitte"
TREVOR_WORKS = "PERSON::trevor::WORKS_AT::ORG::deloitte"


def state(memory: Memory) -> tuple[dict, dict, set]:
    graph = memory.export()
    keys = {k.id for k in memory.store.list_keys(memory.user)}
    return ({n.id: n for n in graph.nodes}, {e.id: e for e in graph.edges}, keys)


def test_forgetting_a_node_takes_its_claims_and_nothing_else(store: Store, user: str) -> None:
    memory = Memory.open(store, user=user)
    memory.import_file(SEED_GRAPH)
    rex = Node(id="OTHER::rex", name="Rex", kind="OTHER", provisional=True)
    store.apply(user, Changes(nodes=[rex]))
    store.apply(user, Changes(edges=[memory.export().edges[0].evolve(
        id="PERSON::joshua::OWNS::OTHER::rex", source="PERSON::joshua", target="OTHER::rex",
        relation="OWNS")]))  # fmt: skip
    nodes, edges, keys = state(memory)
    plan = memory.plan_forget(node="joshua")
    assert plan.nodes == ["OTHER::rex", "PERSON::joshua"]  # Rex only hung off Joshua
    assert set(plan.edges) == {REPORTS, JOSHUA_WORKS, "PERSON::joshua::OWNS::OTHER::rex"}
    memory.forget(plan)
    after_nodes, after_edges, after_keys = state(memory)
    assert after_nodes == {k: v for k, v in nodes.items() if k not in plan.nodes}
    assert after_edges == {k: v for k, v in edges.items() if k not in plan.edges}
    assert after_keys == {k for k in keys if "PERSON::joshua" not in k}
    assert memory.find("Joshua") == []


def test_forgetting_a_claim_revives_what_it_replaced(store: Store, user: str) -> None:
    memory = Memory.open(store, user=user)
    memory.import_file(SEED_GRAPH)
    graph = memory.export()
    old = next(e for e in graph.edges if e.id == TREVOR_WORKS)
    nova = "PERSON::trevor::WORKS_AT::ORG::nova_ai"
    store.apply(user, Changes(edges=[old.evolve(superseded_by=nova),
                              old.evolve(id=nova, target="ORG::nova_ai")]))  # fmt: skip
    _, edges, _ = state(memory)
    memory.forget(memory.plan_forget(edge=nova))
    _, after, _ = state(memory)
    assert nova not in after and after[TREVOR_WORKS].superseded_by is None
    assert {k: v for k, v in after.items() if k != TREVOR_WORKS} == {
        k: v for k, v in edges.items() if k not in (nova, TREVOR_WORKS)}  # fmt: skip


def test_forgetting_a_conversation_undoes_only_its_contribution(store, user, serve) -> None:
    memory = Memory.open(store, user=user)
    memory.ingest(SEED_CONVERSATION, llm=llm_for(serve(by_round(recorded_rounds(RECORDING)))))
    nodes, edges, keys = state(memory)
    second = calls(entity("Maya"), relation("Trevor", "HAS_SISTER", "Maya", "my sister Maya"),
                   relation("Trevor", "WORKS_AT", "Deloitte", "still at Deloitte",
                            stability="mutable", cardinality="one_to_one", confidence=0.5),
                   FINISH)  # fmt: skip
    memory.ingest(chat("my sister Maya", conversation_id="c2"),
                  llm=llm_for(serve(lambda body: second)))  # fmt: skip
    assert "PERSON::maya" in state(memory)[0]
    plan = memory.plan_forget(conversation="c2")
    assert plan.nodes == ["PERSON::maya"] and plan.edges == [
        "PERSON::trevor::HAS_SISTER::PERSON::maya"
    ]
    memory.forget(plan)
    after_nodes, after_edges, after_keys = state(memory)
    assert after_nodes == nodes  # Trevor and Deloitte lose the citation again
    assert after_edges[TREVOR_WORKS].conversations == ["seed-trevor-1"]
    assert {k: v for k, v in after_edges.items() if k != TREVOR_WORKS} == {
        k: v for k, v in edges.items() if k != TREVOR_WORKS}  # fmt: skip
    assert store.get_conversation(user, "c2") is None
    assert not any("PERSON::maya" in k for k in after_keys)


def test_forget_asks_first(capsys, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert run_cli(capsys, "--store", url, "import", str(SEED_GRAPH), "--no-index").code == 0
    refused = run_cli(capsys, "--store", url, "forget", "Joshua")
    assert refused.code == 1 and "delete entity PERSON::joshua" in refused.out
    shown = run_cli(capsys, "--store", url, "show", "joshua")
    assert shown.code == 0 and "Trevor -[REPORTS_TO]-> Joshua" in shown.out
    assert "I hate having a boss" in shown.out
    done = run_cli(capsys, "--store", url, "forget", "Joshua", "--yes")
    assert done.code == 0 and "forgotten" in done.out
    missing = run_cli(capsys, "--store", url, "show", "Joshua")
    assert missing.code == NotFoundError.exit_code and "no entity named 'Joshua'" in missing.err


def test_a_claim_revived_and_changed_is_written_once(store, user) -> None:
    from pegasus.model import Edge, Node
    from pegasus.stores import Changes

    memory = Memory.open(store, user=user)
    p, x, y = (Node(id=f"PLACE::{n}", name=n, kind="PLACE") for n in ("p", "x", "y"))
    lives_x = Edge(id="p-x", source=p.id, target=x.id, relation="LIVES_IN", snippet="x")
    lives_y = Edge(
        id="p-y", source=p.id, target=y.id, relation="LIVES_IN", snippet="y", superseded_by="p-x"
    )
    near = Edge(id="y-x", source=y.id, target=x.id, relation="NEAR", snippet="near")
    store.apply(user, Changes(nodes=[p, x, y], edges=[lives_x, lives_y, near]))
    memory.forget(memory.plan_forget(node="x"))
    left = [e for e in memory.export().edges if e.id == "p-y"]
    assert len(left) == 1 and left[0].superseded_by is None

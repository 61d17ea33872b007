"""Spreading activation and the budget on small hand-built graphs, exact values."""

from __future__ import annotations

import pytest

from pegasus.model import Edge
from pegasus.recall.activation import Activation, co_episode_bonus, select_firing, spread


def e(source: str, target: str, strength: float = 100.0, relation: str = "LINKS") -> Edge:
    return Edge(
        id=f"{source}->{target}",
        source=source,
        target=target,
        relation=relation,
        strength=strength,
        snippet="x",
    )


def test_one_hop_divides_by_strength() -> None:
    state = spread({"a": 1.0}, [e("a", "b", 75), e("a", "c", 25)], hops=1)
    assert state["b"].score == pytest.approx(1.0 * 0.75 * 0.6)
    assert state["c"].score == pytest.approx(1.0 * 0.25 * 0.6)
    assert (state["b"].via, state["b"].hop) == ("forward", 1)
    assert state["a"].via == "seed" and state["a"].score == 1.0


def test_reverse_direction_is_recorded() -> None:
    state = spread({"b": 1.0}, [e("a", "b")], hops=1)
    assert state["a"].score == pytest.approx(0.6)
    assert state["a"].via == "reverse" and state["a"].reverse == pytest.approx(0.6)


def test_two_hops_and_path_sums() -> None:
    # a -> b -> c and a -> c: c is reached twice, at hop 1 and again at hop 2.
    edges = [e("a", "b", 50), e("a", "c", 50), e("b", "c", 100)]
    state = spread({"a": 1.0}, edges, hops=2)
    b_in = 1.0 * 0.5 * 0.6  # 0.3
    c_direct = 1.0 * 0.5 * 0.6  # 0.3
    # Hop 2: b passes on its 0.3 over its two edges (a-b 50, b-c 100).
    c_via_b = b_in * (100 / 150) * 0.6
    # ...and c passes its 0.3 over (a-c 50, b-c 100): back to a and to b.
    a_back = c_direct * (50 / 150) * 0.6 + b_in * (50 / 150) * 0.6
    b_back = c_direct * (100 / 150) * 0.6
    assert state["c"].score == pytest.approx(c_direct + c_via_b)
    assert state["c"].hop == 1
    assert state["b"].score == pytest.approx(b_in + b_back)
    assert state["a"].score == pytest.approx(1.0 + a_back)
    assert state["b"].forward == pytest.approx(b_in) and state["b"].reverse == pytest.approx(b_back)


def test_blocked_node_receives_but_does_not_pass_on() -> None:
    edges = [e("a", "me"), e("me", "x"), e("me", "y")]
    state = spread({"a": 1.0}, edges, hops=2, blocked=frozenset({"me"}))
    assert state["me"].score == pytest.approx(0.6)
    assert "x" not in state and "y" not in state


def test_co_episode_bonus_skips_seeds_and_the_exempt() -> None:
    state = {
        "seed": Activation("seed", score=1.0, seed=1.0),
        "hot": Activation("hot", score=0.5, forward=0.5, hop=1),
        "cold": Activation("cold", score=0.2, forward=0.2, hop=1),
        "me": Activation("me", score=0.4, reverse=0.4, hop=1),
        "other": Activation("other", score=0.1, forward=0.1, hop=2),
    }
    conversations = {"seed": ["c1"], "hot": ["c2"], "cold": ["c2"], "me": ["c1", "c2", "c3"],
                     "other": ["c3"]}  # fmt: skip
    co_episode_bonus(state, conversations, 0.30, 0.15, exempt=frozenset({"me"}))
    assert state["cold"].score == pytest.approx(0.35)  # shares c2 with "hot"
    assert state["other"].score == pytest.approx(0.1)  # c3 is shared only with the exempt node
    assert state["seed"].score == 1.0 and state["me"].score == pytest.approx(0.4)


def _node(name: str, score: float, via: str) -> Activation:
    if via == "seed":
        return Activation(name, score=score, seed=score)
    return Activation(name, score=score, forward=score if via == "forward" else 0,
                      reverse=score if via == "reverse" else 0, hop=1)  # fmt: skip


def test_budget_split_and_backfill() -> None:
    forward = {f"f{i}": _node(f"f{i}", 0.9 - i * 0.05, "forward") for i in range(8)}
    reverse = {f"r{i}": _node(f"r{i}", 0.5 - i * 0.01, "reverse") for i in range(5)}
    below = {"low": _node("low", 0.29, "forward")}
    chosen = select_firing({**forward, **reverse, **below}, 0.30, 10, 0.7)
    names = {a.node_id for a in chosen}
    assert names == {f"f{i}" for i in range(7)} | {"r0", "r1", "r2"}
    # Not enough reverse nodes: forward ones fill their places.
    chosen = select_firing({**forward, "r0": reverse["r0"]}, 0.30, 8, 0.7)
    assert {a.node_id for a in chosen} == {f"f{i}" for i in range(7)} | {"r0"}
    chosen = select_firing({**forward}, 0.30, 8, 0.5)
    assert len(chosen) == 8
    assert [a.score for a in chosen] == sorted((a.score for a in chosen), reverse=True)

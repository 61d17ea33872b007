"""One decay and liveness rule: edge_state and reinforced_edge as pure functions,
and a sweep over every class of edge showing that each store's decay pass stores
exactly what edge_state computes, under the default rule and under another."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from pegasus.model import MAX_STRENGTH, TEMPORARY, Edge, Node, Stability, edge_id
from pegasus.stores import Store
from pegasus.stores.base import Changes
from pegasus.time.decay import (
    DECAY_RATES,
    DORMANT_BELOW,
    REINFORCE_BY,
    RULE,
    DecayRule,
    EdgeState,
    edge_state,
    reinforced_edge,
)

# Microseconds on purpose: the stores must count time as finely as the rule does.
NOW = datetime(2027, 3, 1, 12, 30, 15, 250_000, tzinfo=UTC)
OWNER = Node(id="PERSON::owner", name="Owner", kind="PERSON")
# Faster fading everywhere and a far higher threshold: every default constant changed.
OTHER_RULE = DecayRule(
    rates={"immutable": 0.001, "stable": 0.03, "mutable": 0.1, "time_bound": 0.3,
           "ephemeral": 1.0},
    dormant_below=25.0,
    reinforce_by=40.0,
    cap=90.0,
)  # fmt: skip


def edge(stability: str = "stable", **extra: object) -> Edge:
    fields: dict[str, object] = {"touched_at": NOW, "strength0": 100.0, "snippet": "a claim"}
    fields.update(extra)
    return Edge(
        id="e",
        source=OWNER.id,
        target="THING::x",
        relation="HAS",
        stability=stability,
        **fields,
    )


# --- the rule --------------------------------------------------------------------------


def test_default_rule_is_the_module_constants() -> None:
    assert DecayRule() == RULE
    assert dict(RULE.rates) == DECAY_RATES
    assert (RULE.dormant_below, RULE.reinforce_by, RULE.cap) == (
        DORMANT_BELOW, REINFORCE_BY, MAX_STRENGTH
    )  # fmt: skip


def test_rates_are_the_specified_ones() -> None:
    assert DECAY_RATES == {"immutable": 0.0, "stable": 0.005, "mutable": 0.02,
                           "time_bound": 0.05, "ephemeral": 0.2}  # fmt: skip


def test_rule_is_a_read_only_value() -> None:
    assert hash(DecayRule()) == hash(RULE) and {RULE: 1}[DecayRule()] == 1
    assert OTHER_RULE != RULE and hash(OTHER_RULE) != hash(RULE)
    with pytest.raises(TypeError):
        RULE.rates["stable"] = 1.0  # type: ignore[index]
    rates = dict(DECAY_RATES)
    rule = DecayRule(rates=rates)
    rates["stable"] = 9.0  # the rule kept its own copy
    assert rule.rates["stable"] == DECAY_RATES["stable"]


def test_params_are_plain_values() -> None:
    params = OTHER_RULE.params()
    assert type(params["rates"]) is dict and params["rates"]["ephemeral"] == 1.0
    assert params["dormant_below"] == 25.0
    assert params["reinforce_by"] == 40.0 and params["cap"] == 90.0


@pytest.mark.parametrize(
    "changes",
    [
        {"rates": {"stable": 0.1}},  # every stability needs a rate
        {"rates": {**DECAY_RATES, "sticky": 0.1}},
        {"rates": {**DECAY_RATES, "mutable": -0.1}},
        {"dormant_below": -1.0},
        {"reinforce_by": -1.0},
        {"cap": 0.0},
        {"cap": MAX_STRENGTH + 1},
    ],
)
def test_rule_refuses_what_no_edge_could_follow(changes: dict) -> None:
    with pytest.raises(ValueError):
        DecayRule(**changes)


# --- edge_state ------------------------------------------------------------------------


@pytest.mark.parametrize("stability", list(Stability))
@pytest.mark.parametrize("days", [0, 1, 30, 365])
def test_each_stability_follows_its_rate(stability: Stability, days: int) -> None:
    e = edge(stability, strength0=80.0, touched_at=NOW - timedelta(days=days))
    for rule in (RULE, OTHER_RULE):
        expected = 80.0 * math.exp(-rule.rates[stability.value] * days)
        state = edge_state(e, NOW, rule)
        assert state.strength == pytest.approx(expected, rel=1e-12)
        assert state.dormant == (expected < rule.dormant_below)


def test_fractions_of_a_day_count() -> None:
    e = edge("ephemeral", touched_at=NOW - timedelta(hours=6, microseconds=1))
    days = (6 * 3600 + 1e-6) / 86_400
    assert edge_state(e, NOW).strength == pytest.approx(100 * math.exp(-0.2 * days), rel=1e-12)


def test_immutable_never_fades() -> None:
    e = edge("immutable", strength0=3.0, touched_at=NOW - timedelta(days=100_000))
    assert edge_state(e, NOW) == EdgeState(3.0, dormant=False, expired=False, superseded=False)


def test_a_touch_in_the_future_counts_as_now() -> None:
    e = edge("ephemeral", strength0=70.0, touched_at=NOW + timedelta(days=3))
    assert edge_state(e, NOW).strength == 70.0


def test_dormant_below_the_threshold_not_at_it() -> None:
    assert not edge_state(edge(strength0=DORMANT_BELOW), NOW).dormant
    below = edge_state(edge(strength0=math.nextafter(DORMANT_BELOW, 0)), NOW)
    assert below.dormant and below.label == "dormant" and not below.live
    # Crossing it by fading: 10 * exp(-0.2 * days) falls to 2 at about 8.05 days.
    fading = edge("ephemeral", strength0=10.0)
    crossing = math.log(10.0 / DORMANT_BELOW) / DECAY_RATES["ephemeral"]
    assert not edge_state(fading, NOW + timedelta(days=crossing - 0.01)).dormant
    assert edge_state(fading, NOW + timedelta(days=crossing + 0.01)).dormant


def test_the_threshold_is_the_rule_s() -> None:
    e = edge(strength0=20.0)
    assert edge_state(e, NOW).live and edge_state(e, NOW, OTHER_RULE).dormant


@pytest.mark.parametrize("stability", sorted(TEMPORARY))
def test_expiry(stability: Stability) -> None:
    later = edge(stability, expires_at=NOW + timedelta(seconds=1))
    at_now = edge(stability, expires_at=NOW)
    gone = edge(stability, expires_at=NOW - timedelta(days=1))
    assert not edge_state(later, NOW).expired and edge_state(later, NOW).live
    assert edge_state(at_now, NOW).expired  # expires_at is the first moment it is over
    assert edge_state(gone, NOW).label == "expired"
    assert edge_state(later, NOW + timedelta(seconds=1)).expired


def test_superseded() -> None:
    state = edge_state(edge(superseded_by="newer"), NOW)
    assert state.superseded and not state.live and state.label == "superseded"
    assert state.strength == 100.0  # history keeps its strength


def test_label_precedence() -> None:
    assert EdgeState(1.0, dormant=True, expired=True, superseded=True).label == "superseded"
    assert EdgeState(1.0, dormant=True, expired=True, superseded=False).label == "expired"
    assert EdgeState(1.0, dormant=True, expired=False, superseded=False).label == "dormant"
    assert EdgeState(50.0, dormant=False, expired=False, superseded=False).label == "live"


def test_stored_flags_are_not_read() -> None:
    """dormant, expired and strength as stored are the last pass's; the rule recomputes."""
    fresh = edge("mutable", strength=1.0, dormant=True, expired=True)
    assert edge_state(fresh, NOW) == EdgeState(100.0, False, False, False)
    faded = edge("ephemeral", strength0=5.0, strength=99.0, touched_at=NOW - timedelta(days=30))
    assert edge_state(faded, NOW).dormant


def test_naive_now_is_utc() -> None:
    e = edge("mutable", touched_at=NOW - timedelta(days=10))
    assert edge_state(e, NOW.replace(tzinfo=None)) == edge_state(e, NOW)


# --- reinforced_edge -------------------------------------------------------------------


def test_reinforcement_adds_to_the_strength_now() -> None:
    e = edge("mutable", strength0=50.0, strength=50.0, touched_at=NOW - timedelta(days=10))
    raised = reinforced_edge(e, NOW)
    expected = 50.0 * math.exp(-0.02 * 10) + REINFORCE_BY
    assert raised.strength == raised.strength0 == pytest.approx(expected, rel=1e-12)
    assert raised.touched_at == NOW and not raised.dormant and not raised.expired
    assert (raised.id, raised.snippet, raised.created_at) == (e.id, e.snippet, e.created_at)
    assert e.strength0 == 50.0  # the original is untouched


def test_reinforcement_is_capped() -> None:
    assert reinforced_edge(edge(strength0=95.0), NOW).strength0 == MAX_STRENGTH
    assert reinforced_edge(edge(strength0=80.0), NOW, OTHER_RULE).strength0 == 90.0
    assert reinforced_edge(edge(strength0=30.0), NOW, OTHER_RULE).strength0 == 70.0


def test_reinforcement_wakes_a_dormant_edge() -> None:
    e = edge("ephemeral", strength0=10.0, touched_at=NOW - timedelta(days=60), dormant=True)
    assert edge_state(e, NOW).dormant
    raised = reinforced_edge(e, NOW)
    assert not raised.dormant and edge_state(raised, NOW).live
    assert raised.strength0 == pytest.approx(10.0 * math.exp(-12) + REINFORCE_BY)


@pytest.mark.parametrize("rule", [RULE, OTHER_RULE], ids=["default", "other"])
@pytest.mark.parametrize("stability", list(Stability))
def test_reinforced_edge_stores_its_own_state(rule: DecayRule, stability: Stability) -> None:
    """What reinforcement stores is what the rule says of the result at that moment."""
    expires = {"expires_at": NOW - timedelta(days=1)} if stability in TEMPORARY else {}
    e = edge(stability, strength0=3.0, touched_at=NOW - timedelta(days=40), **expires)
    raised = reinforced_edge(e, NOW, rule)
    state = edge_state(raised, NOW, rule)
    assert (raised.strength, raised.dormant, raised.expired) == (
        state.strength, state.dormant, state.expired
    )  # fmt: skip
    assert raised.expired == bool(expires)  # reinforcement does not undo an end date
    assert raised.superseded_by is None


def test_reinforcement_before_a_future_touch() -> None:
    e = edge("stable", strength0=60.0, touched_at=NOW + timedelta(days=2))
    raised = reinforced_edge(e, NOW)
    assert raised.strength0 == 60.0 + REINFORCE_BY and raised.touched_at == NOW


# --- every store runs the same rule ----------------------------------------------------

AGES = {"fresh": timedelta(hours=1, microseconds=7), "old": timedelta(days=30, seconds=11),
        "very old": timedelta(days=400, microseconds=999_999),
        "future": -timedelta(days=2, hours=3)}  # fmt: skip
EXPIRIES = {"none": None, "past": -timedelta(days=3, microseconds=1),
            "future": timedelta(hours=5, microseconds=3)}  # fmt: skip
STRENGTHS = (100.0, 61.25, 7.5)


def every_class() -> tuple[list[Node], list[Edge]]:
    """An edge of each stability x age x expiry (where the model allows one) x
    superseded or not, each to its own target, with stored strength and flags that
    are wrong on purpose: the pass must recompute them, not keep them."""
    nodes, edges = [OWNER], []
    for stability in Stability:
        expiries = EXPIRIES if stability in TEMPORARY else {"none": None}
        for age_name, age in AGES.items():
            for expiry_name, expiry in expiries.items():
                for superseded in (False, True):
                    i = len(edges)
                    target = Node(id=f"THING::t{i}", name=f"t{i}", kind="THING")
                    nodes.append(target)
                    edges.append(Edge(
                        id=edge_id(OWNER.id, "HAS", target.id), source=OWNER.id,
                        target=target.id, relation="HAS", stability=stability,
                        strength0=STRENGTHS[i % len(STRENGTHS)], strength=MAX_STRENGTH / 3,
                        touched_at=NOW - age,
                        expires_at=None if expiry is None else NOW + expiry,
                        superseded_by="newer" if superseded else None,
                        dormant=i % 2 == 0, expired=i % 3 == 0,
                        snippet=f"{stability.value}, {age_name}, expires {expiry_name}",
                    ))  # fmt: skip
    return nodes, edges


def test_the_sweep_covers_every_state() -> None:
    _, edges = every_class()
    for rule in (RULE, OTHER_RULE):
        labels = {edge_state(e, NOW, rule).label for e in edges}
        assert labels == {"live", "dormant", "expired", "superseded"}
    # The two rules disagree somewhere, so a store that ignored the rule would fail.
    assert any(edge_state(e, NOW) != edge_state(e, NOW, OTHER_RULE) for e in edges)
    dormant = [edge_state(e, NOW, OTHER_RULE).dormant != edge_state(e, NOW).dormant
               for e in edges]  # fmt: skip
    assert any(dormant)


@pytest.mark.parametrize("rule", [RULE, OTHER_RULE], ids=["default", "other"])
def test_every_store_stores_what_the_rule_says(store: Store, user: str, rule: DecayRule) -> None:
    nodes, edges = every_class()
    store.apply(user, Changes(nodes=nodes, edges=edges))
    # Twice forward, then back: each pass depends only on its moment.
    for now in (NOW, NOW + timedelta(days=45, seconds=1), NOW):
        expected = {e.id: edge_state(e, now, rule) for e in edges}
        # Clear of the threshold, so that the last bit of an engine's exp cannot tip it.
        assert all(abs(s.strength - rule.dormant_below) > 1e-6 for s in expected.values())
        report = store.decay(now, rule, user=user, batch_size=7)
        stored = {e.id: e for e in store.export(user).edges}
        assert stored.keys() == expected.keys()
        for eid, state in expected.items():
            got = stored[eid]
            assert got.strength == pytest.approx(state.strength, rel=1e-9, abs=1e-12), eid
            assert (got.dormant, got.expired) == (state.dormant, state.expired), eid
            assert (got.superseded_by is not None) == state.superseded, eid
            # What was stored reads back as the same state, and agrees with Edge.live.
            assert edge_state(got, now, rule).label == state.label, eid
            assert got.live == state.live, eid
        assert report.dormant == sum(s.dormant for s in expected.values())
        assert report.expired == sum(s.expired for s in expected.values())

"""The decay formula and reinforcement, as pure functions."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from pegasus.time.decay import DECAY_RATES, days_between, reinforced, strength_at

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("stability", list(DECAY_RATES))
@pytest.mark.parametrize("days", [1, 30, 365])
def test_each_class_follows_the_formula(stability: str, days: int) -> None:
    expected = 100 * math.exp(-DECAY_RATES[stability] * days)
    assert strength_at(100, T0, stability, T0 + timedelta(days=days)) == pytest.approx(expected)


def test_rates_are_the_specified_ones() -> None:
    assert DECAY_RATES == {"immutable": 0.0, "stable": 0.005, "mutable": 0.02,
                           "time_bound": 0.05, "ephemeral": 0.2}  # fmt: skip


def test_future_touch_counts_as_now() -> None:
    assert days_between(T0 + timedelta(days=2), T0) == 0
    assert strength_at(80, T0 + timedelta(days=2), "ephemeral", T0) == 80


def test_reinforcement_caps_at_100() -> None:
    assert reinforced(50) == 65
    assert reinforced(95) == 100

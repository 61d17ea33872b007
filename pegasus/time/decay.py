"""Decay and reinforcement arithmetic, as pure functions.

strength(t) = strength0 * exp(-rate * days since the last touch), with the rate
set by the claim's stability. The stores run the same formula as batch updates
(Cypher for Neo4j, this module's function inside SQLite), computed from
``strength0`` and ``touched_at`` so that a pass run twice, or late, equals one run
on time.
"""

from __future__ import annotations

import math
from datetime import datetime

from pegasus.model import MAX_STRENGTH, Stability

DECAY_RATES: dict[str, float] = {
    Stability.IMMUTABLE.value: 0.0,
    Stability.STABLE.value: 0.005,
    Stability.MUTABLE.value: 0.020,
    Stability.TIME_BOUND.value: 0.050,
    Stability.EPHEMERAL.value: 0.200,
}
DORMANT_BELOW = 2.0
REINFORCE_BY = 15.0
SECONDS_PER_DAY = 86_400.0


def days_between(earlier: datetime, later: datetime) -> float:
    """Days from earlier to later, never negative (a touch in the future counts as now)."""
    return max(0.0, (later - earlier).total_seconds() / SECONDS_PER_DAY)


def decayed(strength0: float, days: float, rate: float) -> float:
    return strength0 * math.exp(-rate * max(0.0, days))


def strength_at(strength0: float, touched_at: datetime, stability: str, now: datetime) -> float:
    return decayed(strength0, days_between(touched_at, now), DECAY_RATES[str(stability)])


def reinforced(strength_now: float, by: float = REINFORCE_BY) -> float:
    return min(strength_now + by, MAX_STRENGTH)

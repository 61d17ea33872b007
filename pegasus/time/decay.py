"""Decay, liveness and reinforcement: the one rule every reader and store follows.

strength(t) = strength0 * exp(-rate * days since the last touch), with the rate
set by the claim's stability. A claim is dormant while that strength is below
``dormant_below``, expired once ``expires_at`` has passed, and superseded once a
newer claim replaced it; it is live when none of the three holds.

:func:`edge_state` is the rule. The stores run the same rule as batch updates
(cypher/decay.cypher, given :meth:`DecayRule.params`; :func:`decayed` inside
SQLite), computed from ``strength0`` and ``touched_at`` so that a pass run twice,
or late, equals one run on time. Readers call :func:`edge_state` for the state
as of the moment asked rather than trusting what the last pass stored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from pegasus.model import MAX_STRENGTH, Edge, Stability, aware

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


class DecayReport(BaseModel):
    """What one pass did, as the store reports it."""

    edges: int = 0  # edges whose stored strength or state was recomputed
    dormant: int = 0  # edges dormant after the pass
    expired: int = 0  # edges expired after the pass


def days_between(earlier: datetime, later: datetime) -> float:
    """Days from earlier to later, never negative (a touch in the future counts as now)."""
    return max(0.0, (later - earlier).total_seconds() / SECONDS_PER_DAY)


def decayed(strength0: float, days: float, rate: float) -> float:
    return strength0 * math.exp(-rate * max(0.0, days))


@dataclass(frozen=True)
class DecayRule:
    """The constants of decay, dormancy and reinforcement.

    ``rates`` holds a daily rate for every stability and is read-only, so a rule
    can be shared, compared and hashed like a value.
    """

    rates: Mapping[str, float] = field(default_factory=lambda: DECAY_RATES)
    dormant_below: float = DORMANT_BELOW
    reinforce_by: float = REINFORCE_BY
    cap: float = MAX_STRENGTH

    def __post_init__(self) -> None:
        rates = {Stability(name).value: float(rate) for name, rate in self.rates.items()}
        missing = [s.value for s in Stability if s.value not in rates]
        if missing:
            raise ValueError(f"decay rates lack {', '.join(missing)}")
        if any(not rate >= 0 for rate in rates.values()):
            raise ValueError(f"decay rates must not be negative: {rates}")
        if not self.dormant_below >= 0 or not self.reinforce_by >= 0:
            raise ValueError("dormant_below and reinforce_by must not be negative")
        # A stored strength above MAX_STRENGTH would break the data model.
        if not 0 < self.cap <= MAX_STRENGTH:
            raise ValueError(f"cap must be above 0 and at most {MAX_STRENGTH:g}")
        object.__setattr__(self, "rates", MappingProxyType(rates))

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.rates.items())), self.dormant_below,
                     self.reinforce_by, self.cap))  # fmt: skip

    def params(self) -> dict[str, Any]:
        """The rule as statement parameters (plain types, which every driver takes)."""
        return {
            "rates": dict(self.rates),
            "dormant_below": self.dormant_below,
            "reinforce_by": self.reinforce_by,
            "cap": self.cap,
        }


RULE = DecayRule()


@dataclass(frozen=True)
class EdgeState:
    """A claim's strength and state at one moment, under one rule."""

    strength: float
    dormant: bool
    expired: bool
    superseded: bool

    @property
    def live(self) -> bool:
        """Shown in recall: not superseded, not expired, not dormant."""
        return not (self.superseded or self.expired or self.dormant)

    @property
    def label(self) -> str:
        """One word: superseded, expired, dormant or live, the first that holds.

        Superseded comes first because a replaced claim is history whatever its
        strength; expired before dormant because the end date is a fact, the
        fading only a guess."""
        if self.superseded:
            return "superseded"
        if self.expired:
            return "expired"
        if self.dormant:
            return "dormant"
        return "live"

    def stored(self) -> dict[str, Any]:
        """The edge fields a decay pass stores for this state."""
        return {"strength": self.strength, "dormant": self.dormant, "expired": self.expired}


def edge_state(edge: Edge, now: datetime, rule: DecayRule = RULE) -> EdgeState:
    """The edge as of ``now``. Reads only strength0, touched_at, stability, expires_at
    and superseded_by: the stored strength, dormant and expired are what the last
    pass computed, possibly for another moment."""
    now = aware(now)
    strength = decayed(
        edge.strength0, days_between(edge.touched_at, now), rule.rates[edge.stability]
    )
    return EdgeState(
        strength=strength,
        dormant=strength < rule.dormant_below,
        expired=edge.expires_at is not None and edge.expires_at <= now,
        superseded=edge.superseded_by is not None,
    )


def reinforced_edge(edge: Edge, now: datetime, rule: DecayRule = RULE) -> Edge:
    """The edge used or heard again at ``now``: raised by the rule's reinforcement
    from its strength as of ``now`` (capped), touched now, its stored state that of
    ``now``. Under any rule whose reinforcement reaches the dormancy threshold, as
    the default's does, that wakes it."""
    now = aware(now)
    strength = min(edge_state(edge, now, rule).strength + rule.reinforce_by, rule.cap)
    touched = edge.model_copy(update={"strength0": strength, "touched_at": now})
    return touched.model_copy(update=edge_state(touched, now, rule).stored())

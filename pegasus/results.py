"""What the verbs of :class:`pegasus.memory.Memory` answer with, beyond the
stores' own records: claims with named ends and their state as of a moment."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pydantic import BaseModel

from pegasus.model import Edge, Node
from pegasus.time.decay import RULE, DecayRule, edge_state


class Claim(BaseModel):
    """An edge as a person reads it: named ends, strength and state right now."""

    edge: Edge
    source_name: str
    target_name: str
    strength: float  # as of the moment asked, not the last daily pass
    state: str  # live, dormant, expired or superseded

    @classmethod
    def of(
        cls, edge: Edge, names: Mapping[str, str], now: datetime, rule: DecayRule = RULE
    ) -> Claim:
        state = edge_state(edge, now, rule)
        return cls(
            edge=edge,
            source_name=names.get(edge.source, edge.source),
            target_name=names.get(edge.target, edge.target),
            strength=state.strength,
            state=state.label,
        )


class Description(BaseModel):
    """An entity with every claim at it, history included."""

    node: Node
    claims: list[Claim]

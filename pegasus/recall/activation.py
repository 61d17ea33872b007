"""Two-hop spreading activation and the firing budget, as pure functions.

Activation starts at the seeds and spreads along edges in both directions. A node
divides what it has among its edges in proportion to their strength, times a
decay factor, so a hub cannot drive all its neighbours at full strength;
contributions arriving by different paths add up. Each node remembers whether it
was reached mostly forward (following edges out), mostly in reverse, or as a seed,
and at which hop.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pegasus.model import Edge

SEED, FORWARD, REVERSE = "seed", "forward", "reverse"


@dataclass
class Activation:
    node_id: str
    score: float = 0.0
    hop: int = 0
    forward: float = 0.0  # activation received along edge direction
    reverse: float = 0.0  # activation received against edge direction
    seed: float = 0.0
    # (from node, edge id, amount): why this node is active, for /why and logging
    sources: list[tuple[str, str, float]] = field(default_factory=list)

    @property
    def via(self) -> str:
        if self.seed > 0:
            return SEED
        return FORWARD if self.forward >= self.reverse else REVERSE


def spread(
    seeds: Mapping[str, float],
    edges: Iterable[Edge],
    hops: int = 2,
    factor: float = 0.6,
    blocked: frozenset[str] = frozenset(),
) -> dict[str, Activation]:
    """Spread from every seed at once for ``hops`` steps.

    A node's outflow at each step is what it received in the previous step (seeds
    start with their seed activation), divided among all its edges by strength.
    ``blocked`` nodes receive activation but pass none on (used for the user's own
    node, which touches everything).
    """
    by_node: dict[str, list[Edge]] = defaultdict(list)
    for edge in edges:
        by_node[edge.source].append(edge)
        by_node[edge.target].append(edge)
    total_strength = {node: sum(e.strength for e in found) for node, found in by_node.items()}

    state: dict[str, Activation] = {}
    for node, amount in seeds.items():
        if amount > 0:
            state[node] = Activation(node, score=amount, hop=0, seed=amount)
    wave = {node: a.score for node, a in state.items()}

    for hop in range(1, hops + 1):
        next_wave: dict[str, float] = defaultdict(float)
        for node, amount in wave.items():
            if node in blocked or total_strength.get(node, 0) <= 0:
                continue
            for edge in by_node[node]:
                share = amount * edge.strength / total_strength[node] * factor
                if share <= 0:
                    continue
                other, forward = (
                    (edge.target, True) if edge.source == node else (edge.source, False)
                )
                got = state.get(other)
                if got is None:
                    got = state[other] = Activation(other, hop=hop)
                got.score += share
                if forward:
                    got.forward += share
                else:
                    got.reverse += share
                got.sources.append((node, edge.id, share))
                next_wave[other] += share
        wave = next_wave
    return state


def lift(state: dict[str, Activation], node_id: str, amount: float) -> bool:
    """Raise a node to at least ``amount``, as a seed: reached directly, not by
    spreading. Whether it was raised."""
    found = state.get(node_id)
    if found is None:
        state[node_id] = Activation(node_id, score=amount, seed=amount)
    elif found.score < amount:
        found.seed, found.score = max(found.seed, amount), amount
    else:
        return False
    return True


def co_episode_bonus(
    state: dict[str, Activation],
    conversations: Mapping[str, Iterable[str]],
    threshold: float,
    bonus: float,
    exempt: frozenset[str] = frozenset(),
) -> None:
    """Nodes that share a conversation with an already-firing node gain ``bonus``.

    Seeds need no bonus; ``exempt`` nodes (the user's own, which shares every
    conversation) neither give nor take it.
    """
    firing = [a.node_id for a in state.values() if a.score >= threshold and a.node_id not in exempt]
    episodes: set[str] = set()
    for node in firing:
        episodes.update(conversations.get(node, ()))
    if not episodes:
        return
    for activation in state.values():
        if activation.seed > 0 or activation.node_id in exempt:
            continue
        if activation.node_id in firing:
            continue
        if episodes.intersection(conversations.get(activation.node_id, ())):
            activation.score += bonus


def select_firing(
    state: Mapping[str, Activation],
    threshold: float,
    limit: int,
    forward_share: float = 0.7,
) -> list[Activation]:
    """Nodes at or above ``threshold``, at most ``limit``: about ``forward_share`` of
    the places go to seeds and forward-reached nodes, the rest to reverse-reached
    ones, and places one side cannot fill go to the other."""
    eligible = sorted(
        (a for a in state.values() if a.score >= threshold), key=lambda a: (-a.score, a.node_id)
    )
    front = [a for a in eligible if a.via != REVERSE]
    back = [a for a in eligible if a.via == REVERSE]
    front_places = round(limit * forward_share)
    back_places = limit - front_places
    chosen = front[:front_places] + back[:back_places]
    leftovers = front[front_places:] + back[back_places:]
    leftovers.sort(key=lambda a: (-a.score, a.node_id))
    chosen += leftovers[: limit - len(chosen)]
    return sorted(chosen, key=lambda a: (-a.score, a.node_id))

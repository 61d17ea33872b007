"""What earns a claim its place in the block: the cue that reached it, the reach of
its ends, the time it is about; and which claims that are no longer current the
message asks about. Pure functions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pegasus.model import Edge, Node
from pegasus.recall import activation as act
from pegasus.recall import when
from pegasus.recall.cues import ClaimCue, stems
from pegasus.recall.keys import relation_phrase
from pegasus.recall.presets import RecallSettings
from pegasus.time.decay import DecayRule, edge_state


def past_claims(
    edges: list[Edge],
    cues: dict[str, ClaimCue],
    now: datetime,
    rule: DecayRule,
    settings: RecallSettings,
    message: str,
    get_nodes: Callable[[list[str]], list[Node]],
) -> dict[str, Edge]:
    """The claims among ``edges`` that are no longer current (replaced, ended or
    faded) but that the message asks about: reached by their own cue strongly
    enough, and sharing a word with what the claim says beyond the names of its
    ends (naming someone is not asking about their past)."""
    if not settings.show_history:
        return {}
    candidates = {}
    for edge in edges:
        state = edge_state(edge, now, rule)
        if not state.live and cues[edge.id].score >= settings.history_cue:
            candidates[edge.id] = edge.model_copy(update=state.stored())
    if not candidates:
        return {}
    ends = {e for edge in candidates.values() for e in (edge.source, edge.target)}
    names = {node.id: stems(" ".join(node.names)) for node in get_nodes(list(ends))}
    asked = stems(message)
    return {
        edge_id: edge
        for edge_id, edge in candidates.items()
        if (asked - names.get(edge.source, set()) - names.get(edge.target, set()))
        & stems(f"{relation_phrase(edge.relation)} {edge.snippet}")
    }


def past_label(edge: Edge, now: datetime, rule: DecayRule) -> str:
    """How a past claim is shown: "until 2023-06-01", "since replaced", "faded"."""
    state = edge_state(edge, now, rule)
    if state.superseded:
        return "since replaced"
    if state.expired and edge.expires_at is not None:
        return f"until {edge.expires_at:%Y-%m-%d}"
    return "faded"


def edge_scores(
    edges: list[Edge],
    state: dict[str, act.Activation],
    cues: dict[str, ClaimCue],
    self_id: str | None,
    settings: RecallSettings,
    asked_when: when.Window | None = None,
) -> dict[str, float]:
    """Each claim's claim to a place in the block: what its own cue earned, plus the
    activation of its ends taken as a geometric mean, so that a hub at one end
    cannot carry a claim whose other end nothing reached (the user's own node counts
    as fully reached: every claim about the user is about the message's subject)."""

    def reached(node_id: str) -> float:
        if node_id == self_id:
            return 1.0
        found = state.get(node_id)
        return min(found.score, 1.0) if found else 0.0

    scores = {}
    for edge in edges:
        graph = (reached(edge.source) * reached(edge.target)) ** 0.5
        cue = cues.get(edge.id)
        scores[edge.id] = graph + (settings.claim_weight * cue.score if cue else 0.0)
        if asked_when and when.overlaps(
            when.claim_window(edge.properties.get("date", ""), edge.touched_at), asked_when
        ):
            scores[edge.id] += settings.time_weight  # about the time the message names
    return scores

"""Why recall showed what it showed, and why not something else.

Each fired node says how it was reached (the words that matched one of its names,
the claim the message reached, or the claim and hop it was reached through); each
claim in the block says what earned its place (its own cue, the activation of its
ends), with its strength and dates. ``why_not`` names the step that stopped an
entity: no cue above its threshold, reached but under the fire threshold, or cut
by the firing or token budget."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from pegasus.model import CLAIM_KEY, NODE_KEY, Edge, EmbeddingKey, Node
from pegasus.recall.activation import Activation
from pegasus.recall.cues import ClaimCue
from pegasus.recall.presets import RecallSettings
from pegasus.recall.seeds import Seeds


class Fired(BaseModel):
    id: str
    name: str
    kind: str
    score: float
    via: str
    hop: int
    why: str = ""


class Shown(BaseModel):
    """A claim in the block and what earned it its place."""

    edge_id: str
    claim: str  # "Lena -ADOPTED-> Pepper"
    score: float  # its place in the block: cue plus the reach of its ends
    cue: str = ""  # "meaning 0.57; words greyhound", when the message reached it
    strength: float
    said: str  # when it was said or last confirmed
    about: str = ""  # the time it is about, when one was stored


class RecallResult(BaseModel):
    """What recall found for one message; ``model_dump_json`` is ``recall --json``."""

    message: str
    seeds: list[dict[str, Any]] = Field(default_factory=list)
    fired: list[Fired] = Field(default_factory=list)
    memory: list[str] = Field(default_factory=list)
    context: list[str] = Field(default_factory=list)
    text: str = ""
    used_edges: list[str] = Field(default_factory=list)
    shown: list[Shown] = Field(default_factory=list)  # each claim in the block, and why


@dataclass
class Trace:
    """Every step of one recall, for explanations."""

    result: RecallResult
    self_id: str | None = None
    seeds: Seeds | None = None
    cues: dict[str, ClaimCue] = field(default_factory=dict)
    lifted: dict[str, str] = field(default_factory=dict)  # node id -> claim that lit it
    state: dict[str, Activation] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    scores: dict[str, float] | None = None
    past: dict[str, Edge] = field(default_factory=dict)  # history the message reached

    @cached_property
    def edge_by_id(self) -> dict[str, Edge]:
        """The pulled edges by id (read once the pull is complete)."""
        return {edge.id: edge for edge in self.edges}


def _name(trace: Trace, node_id: str) -> str:
    node = trace.nodes.get(node_id)
    return node.name if node else node_id


def _claim(trace: Trace, edge: Edge) -> str:
    return f"{_name(trace, edge.source)} -{edge.relation}-> {_name(trace, edge.target)}"


def _cue(trace: Trace, edge_id: str) -> str:
    cue = trace.cues.get(edge_id)
    if cue is None:
        return ""
    parts = [f"meaning {cue.meaning:.2f}"] if cue.meaning is not None else []
    parts += [f"words {', '.join(cue.words)}"] if cue.words else []
    return "; ".join(parts) or "words"


def fired(activation: Activation, trace: Trace) -> Fired:
    node = trace.nodes[activation.node_id]
    return Fired(id=node.id, name=node.name, kind=node.kind.value,
                 score=round(activation.score, 4), via=activation.via, hop=activation.hop,
                 why=reached(activation, trace))  # fmt: skip


def reached(activation: Activation, trace: Trace) -> str:
    """How a node got its activation, in words."""
    edges = trace.edge_by_id
    if activation.node_id in trace.lifted:
        edge = edges.get(trace.lifted[activation.node_id])
        why = f"claim reached by {_cue(trace, edge.id)}: {_claim(trace, edge)}" if edge else ""
    elif activation.seed > 0 and trace.seeds is not None:
        why = "; ".join(
            f"'{hit.unit}' matched {hit.key.kind} '{hit.key.text}' at {hit.score:.2f}"
            for hit in trace.seeds.hits
            if hit.key.ref == activation.node_id
        )
    else:
        source, edge_id, amount = max(activation.sources, key=lambda s: s[2])
        edge = edges.get(edge_id)
        through = edge.relation if edge else edge_id
        why = f"hop {activation.hop} from {_name(trace, source)} through {through} ({amount:.2f})"
    return why


def shown(used: list[str], trace: Trace) -> list[Shown]:
    edges = trace.edge_by_id
    return [
        Shown(
            edge_id=edge.id,
            claim=_claim(trace, edge),
            score=round((trace.scores or {}).get(edge.id, 0.0), 4),
            cue=_cue(trace, edge.id),
            strength=round(edge.strength, 2),
            said=f"{edge.touched_at:%Y-%m-%d}",
            about=edge.properties.get("date", ""),
        )  # fmt: skip
        for edge in (edges[i] for i in used if i in edges)
    ]


def _touches(edge_id: str, node_id: str) -> bool:
    # Edge ids are "<source id>::<RELATION>::<target id>".
    return edge_id.startswith(f"{node_id}::") or edge_id.endswith(f"::{node_id}")


def best_cue(
    keys: list[EmbeddingKey], units: list[str], vectors: np.ndarray, settings: RecallSettings
) -> str:
    """The closest any part of the message came to a node's names and claims:
    ``keys`` are the node's name and claim keys with their vectors, ``vectors`` the
    message's ``units`` then the message itself."""
    if not keys:
        return "it has no search keys (run pegasus reindex)"
    matrix = np.asarray([key.vector for key in keys], np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = vectors @ matrix.T
    names = [i for i, key in enumerate(keys) if key.kind == NODE_KEY]
    claims = [i for i, key in enumerate(keys) if key.kind == CLAIM_KEY]
    said = []
    if names:
        u, k = np.unravel_index(np.argmax(scores[:-1, names]), (len(units), len(names)))
        said.append(f"best name match '{units[u]}' ~ '{keys[names[k]].text}' at "
                    f"{scores[u, names[k]]:.2f} (seeds from "
                    f"{settings.seed_threshold:.2f})")  # fmt: skip
    if claims:
        k = int(np.argmax(scores[-1, claims]))
        said.append(f"best claim match at {scores[-1, claims[k]]:.2f} (reached from "
                    f"{settings.claim_threshold:.2f} with a shared word, "
                    f"{settings.claim_sure:.2f} alone)")  # fmt: skip
    return "; ".join(said)


def keys_of(keys: list[EmbeddingKey], node_id: str) -> list[EmbeddingKey]:
    """The node's name keys and the keys of its claims."""
    return [key for key in keys
            if (key.kind == NODE_KEY and key.ref == node_id)
            or (key.kind == CLAIM_KEY and _touches(key.ref, node_id))]  # fmt: skip


def why_not(trace: Trace, node: Node, settings: RecallSettings, no_cue: Callable[[], str]) -> str:
    """Which step kept ``node`` out of the block; ``no_cue`` says how close the
    message came when nothing reached it (:func:`best_cue`)."""
    result = trace.result
    mine = [e for e in trace.edges if node.id in (e.source, e.target)]
    if any(edge.id in result.used_edges for edge in mine):
        return f"{node.name} is in the block"
    if any(f.id == node.id for f in result.fired):
        return (f"{node.name} fired, but none of its claims fit in the block "
                f"({settings.max_tokens} tokens, {settings.max_lines} ranked lines)")  # fmt: skip
    activation = trace.state.get(node.id)
    if activation is not None and activation.score >= settings.fire_threshold:
        return (f"{node.name} reached {activation.score:.2f}, above the fire threshold, but "
                f"{settings.max_fired} nodes scored higher")  # fmt: skip
    if activation is not None:
        return (f"{node.name} was reached ({reached(activation, trace) or activation.via}) "
                f"at {activation.score:.2f}, under the fire threshold "
                f"{settings.fire_threshold:.2f}")  # fmt: skip
    return f"no cue reached {node.name}: " + no_cue()

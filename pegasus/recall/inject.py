"""The injected block: structure first, texture only where the signal is hot.

``[MEMORY]`` has one line per live edge between fired nodes (``A -[REL]-> B``);
``[CONTEXT]`` has, for nodes firing at or above the context threshold, their key
properties and up to N of their strongest snippets, verbatim and deduplicated.
With dates on, each line says when it was said or last confirmed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pegasus.model import Edge, Node
from pegasus.recall.activation import Activation
from pegasus.recall.presets import RecallSettings

CHARS_PER_TOKEN = 4  # a plain estimate; the budget only needs to be roughly right
MAX_PROPERTIES = 3
MAX_PROPERTY_CHARS = 80


@dataclass
class Block:
    memory: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    used_edges: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        if not self.memory and not self.context:
            return ""
        parts = ["[MEMORY]", *self.memory]
        if self.context:
            parts += ["[CONTEXT]", *self.context]
        return "\n".join(parts)


def tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def _when(edge: Edge, settings: RecallSettings) -> str:
    return f" ({edge.touched_at:%Y-%m-%d})" if settings.show_dates else ""


def _properties(node: Node) -> str:
    shown = []
    for key, value in list(node.properties.items())[:MAX_PROPERTIES]:
        value = value if len(value) <= MAX_PROPERTY_CHARS else value[: MAX_PROPERTY_CHARS - 1] + "…"
        shown.append(f"{key.replace('_', ' ')}: {value}")
    return f"{node.name} ({node.kind.value.lower()}) — " + "; ".join(shown)


def build_block(
    fired: list[Activation],
    nodes: Mapping[str, Node],
    edges: Iterable[Edge],
    settings: RecallSettings,
    self_id: str | None = None,
) -> Block:
    """Render the block for ``fired`` over the live ``edges`` of the pulled subgraph."""
    score = {a.node_id: a.score for a in fired}
    present = set(score)
    # The user is the subject of every conversation: a claim linking a fired node to
    # the user is shown even when the user's own node did not fire.
    if settings.block_self and self_id is not None:
        present.add(self_id)
    live = [e for e in edges if e.source in present and e.target in present]
    live = [e for e in live if e.source in score or e.target in score]
    live.sort(
        key=lambda e: (-max(score.get(e.source, 0), score.get(e.target, 0)), -e.strength, e.id)
    )

    block = Block()
    budget = settings.max_tokens or 10**9
    spent = 0

    def take(line: str, into: list[str], edge: Edge | None = None) -> bool:
        nonlocal spent
        cost = tokens(line) + 1
        if spent + cost > budget:
            return False
        spent += cost
        into.append(line)
        if edge is not None and edge.id not in block.used_edges:
            block.used_edges.append(edge.id)
        return True

    for edge in live:
        line = (
            f"{nodes[edge.source].name} -[{edge.relation}]-> {nodes[edge.target].name}"
            f"{_when(edge, settings)}"
        )
        if not take(line, block.memory, edge):
            break

    hot = [a for a in fired if a.score >= settings.context_threshold and a.node_id != self_id]
    by_node: dict[str, list[Edge]] = {a.node_id: [] for a in hot}
    for edge in edges:
        for end in (edge.source, edge.target):
            if end in by_node:
                by_node[end].append(edge)
    shown: list[str] = []
    for activation in hot:
        node = nodes[activation.node_id]
        if settings.show_properties and node.properties:
            take(_properties(node), block.context)
        strongest = sorted(by_node[node.id], key=lambda e: (-e.strength, e.id))
        for edge in strongest[: settings.snippets_per_node]:
            snippet = " ".join(edge.snippet.split())
            folded = snippet.casefold()
            # The same words often justify several claims: show them once.
            if any(folded in other or other in folded for other in shown):
                continue
            if take(f'"{snippet}"{_when(edge, settings)}', block.context, edge):
                shown.append(folded)
    return block

"""The slice of the existing graph the extractor sees: the neighbourhood of whatever
in the conversation resembles known entities, found as recall finds seeds but with
a lower bar (at write time too much beats too little), and bounded in lines
whatever the graph's size."""

from __future__ import annotations

from dataclasses import replace

from pegasus.model import Node, utcnow
from pegasus.recall.engine import Recaller, current
from pegasus.recall.presets import DEFAULT
from pegasus.recall.seeds import collect

WRITE_CONTEXT = replace(
    DEFAULT, name="write-context", seed_threshold=0.30, hits_per_unit=5, use_possessives=False
)
MAX_UNITS = 300  # query units taken from the conversation
MAX_SEEDS = 15
MAX_LINES = 60


def _entity_line(node: Node) -> str:
    aliases = f"; also {', '.join(node.aliases[:4])}" if node.aliases else ""
    return f"- {node.name} ({node.kind.value}{aliases})"


def graph_context(recaller: Recaller, user: str, text: str, self_node: Node | None) -> str:
    """Known entities and claims related to ``text``, at most ``MAX_LINES`` lines."""
    store = recaller.store
    units = recaller.units(text)[:MAX_UNITS]
    seeds = collect(recaller.match(user, units), WRITE_CONTEXT)
    ranked = sorted(seeds.nodes, key=lambda node_id: -seeds.nodes[node_id])[:MAX_SEEDS]
    lines: list[str] = []
    if self_node is not None:
        lines.append(f"The user is {self_node.name} ({self_node.kind.value}).")
    if not ranked:
        return "\n".join(lines or ["Nothing related is known yet."])
    stop_at = [self_node.id] if self_node else []
    graph = store.subgraph(user, ranked, hops=1, live_only=True, stop_at=stop_at)
    nodes = {node.id: node for node in graph.nodes}
    edges = current(graph.edges, utcnow(), recaller.rule)  # as they stand now, not at the last pass
    shown = [nodes[node_id] for node_id in ranked if node_id in nodes]
    lines += ["Entities:", *(_entity_line(node) for node in shown)]
    edges = sorted(
        edges,
        key=lambda e: (-(e.source in seeds.nodes) - (e.target in seeds.nodes), -e.strength),
    )
    claims = [
        f"- {nodes[e.source].name} -{e.relation}-> {nodes[e.target].name}"
        for e in edges
        if e.source in nodes and e.target in nodes
    ]
    if claims:
        lines += ["Claims:", *claims]
    return "\n".join(lines[:MAX_LINES])

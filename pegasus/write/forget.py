"""Forgetting: what to remove (and what to mend) so that a node, a claim or a whole
conversation leaves the memory with nothing else touched. Pure planning; the
caller fetches and writes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field

from pegasus.model import Edge, Node


class Forgetting(BaseModel):
    nodes: list[str] = Field(default_factory=list)  # ids to delete (their edges go too)
    edges: list[str] = Field(default_factory=list)  # ids to delete
    nodes_changed: list[Node] = Field(default_factory=list)  # to write back
    edges_changed: list[Edge] = Field(default_factory=list)
    conversation: str | None = None  # record to delete


def _revive(gone: set[str], around: Iterable[Edge], plan: Forgetting) -> None:
    """Claims that a removed claim had superseded become current again; a claim the
    plan already changes (a citation dropped) is revived in that changed version."""
    changed = {edge.id: index for index, edge in enumerate(plan.edges_changed)}
    for edge in around:
        if edge.superseded_by not in gone or edge.id in gone:
            continue
        if edge.id in changed:
            index = changed[edge.id]
            plan.edges_changed[index] = plan.edges_changed[index].evolve(superseded_by=None)
        else:
            changed[edge.id] = len(plan.edges_changed)
            plan.edges_changed.append(edge.evolve(superseded_by=None))


def forget_edge(edge: Edge, around: Iterable[Edge]) -> Forgetting:
    """One claim. ``around``: the claims at its source (any it superseded)."""
    plan = Forgetting(edges=[edge.id])
    _revive({edge.id}, around, plan)
    return plan


def forget_node(
    node: Node, edges_by_node: Mapping[str, list[Edge]], nodes: Mapping[str, Node]
) -> Forgetting:
    """A node, its claims, and the provisional nodes that only it held up.
    ``edges_by_node`` has the claims at the node and at each neighbour."""
    own = edges_by_node.get(node.id, [])
    gone_nodes = {node.id}
    for edge in own:
        other = edge.target if edge.source == node.id else edge.source
        neighbour = nodes.get(other)
        if (
            neighbour
            and neighbour.provisional
            and all(node.id in (e.source, e.target) for e in edges_by_node.get(other, []))
        ):
            gone_nodes.add(other)
    gone_edges = {e.id for n in gone_nodes for e in edges_by_node.get(n, [])}
    plan = Forgetting(nodes=sorted(gone_nodes), edges=sorted(gone_edges))
    _revive(gone_edges, [e for edges in edges_by_node.values() for e in edges], plan)
    return plan


def forget_conversation(
    conversation_id: str, nodes: Iterable[Node], edges: Iterable[Edge]
) -> Forgetting:
    """Everything a conversation contributed: claims and nodes only it cited go; those
    other conversations cited too lose the citation. ``nodes`` and ``edges``: all
    that cite it, plus the claims at those nodes."""
    plan = Forgetting(conversation=conversation_id)
    edges = list({e.id: e for e in edges}.values())
    for edge in edges:
        if conversation_id not in edge.conversations:
            continue
        if edge.conversations == [conversation_id]:
            plan.edges.append(edge.id)
        else:
            rest = [c for c in edge.conversations if c != conversation_id]
            plan.edges_changed.append(edge.evolve(conversations=rest))
    gone = set(plan.edges)
    for node in nodes:
        if conversation_id not in node.conversations:
            continue
        remaining = [e for e in edges if node.id in (e.source, e.target) and e.id not in gone]
        if node.conversations == [conversation_id] and not remaining:
            plan.nodes.append(node.id)
        elif node.conversations != [conversation_id]:
            rest = [c for c in node.conversations if c != conversation_id]
            plan.nodes_changed.append(node.evolve(conversations=rest))
    _revive(gone, edges, plan)
    return plan

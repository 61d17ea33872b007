"""Commit planning: from a cleaned, resolved batch to the exact nodes and edges to
write (SPEC 3.5). Pure: the pipeline fetches what it touches and writes the plan
in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from pegasus.model import MAX_STRENGTH, Cardinality, Edge, Node, edge_id
from pegasus.time.decay import RULE, DecayRule, reinforced_edge
from pegasus.write.clean import Entity, Relation


@dataclass
class Plan:
    nodes: dict[str, Node] = field(default_factory=dict)  # new and changed, by id
    edges: dict[str, Edge] = field(default_factory=dict)
    created_nodes: list[str] = field(default_factory=list)
    merged: list[tuple[str, str]] = field(default_factory=list)  # (surface form, node id)
    created_edges: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def absorb(node: Node, entity: Entity, conversation_id: str, at: datetime) -> Node:
    """A stored node takes in a new sighting: the surface form and aliases, the
    properties (the later telling wins), the conversation, the higher confidence."""
    newer = at >= node.updated_at
    properties = {**node.properties, **entity.properties} if newer else {
        **entity.properties, **node.properties}  # fmt: skip
    return node.evolve(
        aliases=[*node.aliases, entity.name, *entity.aliases],
        properties=properties,
        conversations=[*node.conversations, conversation_id],
        confidence=max(node.confidence, entity.confidence),
        provisional=node.provisional and entity.provisional,
        updated_at=max(node.updated_at, at),
    )


def new_node(node_id: str, entity: Entity, conversation_id: str, at: datetime) -> Node:
    return Node(
        id=node_id,
        name=entity.name,
        kind=entity.kind,
        aliases=entity.aliases,
        properties=entity.properties,
        confidence=entity.confidence,
        conversations=[conversation_id],
        provisional=entity.provisional,
        created_at=at,
        updated_at=at,
    )


def _heard_again(edge: Edge, relation: Relation, conversation_id: str, at: datetime,
                 first_in_batch: bool, rule: DecayRule) -> Edge:  # fmt: skip
    """A stored claim heard again: reinforced once per batch, revived if it had
    faded, superseded or expired, its snippet replaced only by a surer telling."""
    changes: dict = {
        "conversations": [*edge.conversations, conversation_id],
        "properties": {**edge.properties, **relation.properties},
        "superseded_by": None,
        "dormant": False,
        "expired": False,
    }
    if first_in_batch:
        raised = reinforced_edge(edge, max(at, edge.touched_at), rule)
        changes |= {"strength0": raised.strength0, "strength": raised.strength0,
                    "touched_at": raised.touched_at}  # fmt: skip
    if relation.expires_at is not None or (edge.expires_at and edge.expires_at <= at):
        changes["expires_at"] = relation.expires_at
    if relation.confidence > edge.confidence:
        changes |= {"snippet": relation.snippet, "evidence": relation.evidence,
                    "confidence": relation.confidence}  # fmt: skip
    return edge.evolve(**changes)


def plan_commit(
    entities: Iterable[tuple[Entity, str]],
    relations: Iterable[Relation],
    resolve: Callable[[str], str | None],
    stored_nodes: Mapping[str, Node],
    stored_edges: Iterable[Edge],
    conversation_id: str,
    at: datetime,
    rule: DecayRule = RULE,
) -> Plan:
    """``entities`` pairs each batch entity with the node id it resolved to (a stored
    node for a merge, a fresh id otherwise); ``resolve`` maps a relation end's name
    to a node id; ``stored_edges`` holds what the batch's claims meet in the store
    (:meth:`Store.edges_meeting`: the same claims, and live one_to_one rivals)."""
    plan = Plan()
    for entity, node_id in entities:
        current = plan.nodes.get(node_id) or stored_nodes.get(node_id)
        if current is None:
            plan.nodes[node_id] = new_node(node_id, entity, conversation_id, at)
            plan.created_nodes.append(node_id)
        else:
            plan.nodes[node_id] = absorb(current, entity, conversation_id, at)
            if node_id not in plan.created_nodes:
                plan.merged.append((entity.name, node_id))

    edges: dict[str, Edge] = {edge.id: edge for edge in stored_edges}
    touched: set[str] = set()
    for relation in relations:
        what = f"relation {relation.source} -{relation.relation}-> {relation.target}"
        source, target = resolve(relation.source), resolve(relation.target)
        if source is None or target is None:
            plan.notes.append(f"{what}: dropped, an end could not be resolved")
            continue
        if source == target:
            plan.notes.append(f"{what}: dropped, both ends are the same entity after merging")
            continue
        eid = edge_id(source, relation.relation, target)
        if eid in edges:
            first = eid not in touched
            edge = _heard_again(edges[eid], relation, conversation_id, at, first, rule)
            if eid not in touched and eid not in plan.created_edges:
                plan.reinforced.append(eid)
        else:
            edge = Edge(
                id=eid,
                source=source,
                target=target,
                relation=relation.relation,
                strength=MAX_STRENGTH,
                strength0=MAX_STRENGTH,
                touched_at=at,
                confidence=relation.confidence,
                stability=relation.stability,
                cardinality=relation.cardinality,
                expires_at=relation.expires_at,
                snippet=relation.snippet,
                evidence=relation.evidence,
                properties=relation.properties,
                conversations=[conversation_id],
                created_at=at,
            )
            plan.created_edges.append(eid)
        edges[eid] = plan.edges[eid] = edge
        touched.add(eid)
        if relation.cardinality == Cardinality.ONE_TO_ONE:
            _supersede(plan, edges, edge)
    return plan


def _supersede(plan: Plan, edges: dict[str, Edge], claim: Edge) -> None:
    """A one_to_one claim replaces the live one_to_one claims of the same source and
    relation with other targets; they stay as history. A rival heard later than this
    claim (a backfilled old conversation) wins instead. Claims stored as one_to_many
    are left alone: one mislabelled sighting must not retire a whole list."""
    for rival in list(edges.values()):
        if (rival.source != claim.source or rival.relation != claim.relation
                or rival.id == claim.id or rival.superseded_by is not None
                or rival.cardinality != Cardinality.ONE_TO_ONE):  # fmt: skip
            continue
        if rival.touched_at > claim.touched_at:
            edges[claim.id] = plan.edges[claim.id] = claim = claim.evolve(superseded_by=rival.id)
            return
        edges[rival.id] = plan.edges[rival.id] = rival.evolve(superseded_by=claim.id)
        plan.superseded.append(rival.id)

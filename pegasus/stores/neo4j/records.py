"""Neo4j records and the model objects they hold, both ways.

Free-form properties are stored flat as ``prop.<name>`` so Neo4j Browser shows
them as ordinary properties; timestamps travel as ISO text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import neo4j
import numpy as np
from neo4j.time import DateTime

from pegasus.model import Conversation, Edge, EmbeddingKey, Node, aware, name_key
from pegasus.stores.base import CARDINALITIES, KINDS, STABILITIES

PROPERTY_PREFIX = "prop."
WRITE_BATCH = 5_000  # rows per UNWIND


def native(value: Any) -> Any:
    return value.to_native() if isinstance(value, DateTime) else value


def split_props(props: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Separate Pegasus's own fields from the flattened ``prop.*`` entries."""
    own: dict[str, Any] = {}
    free: dict[str, str] = {}
    for key, value in props.items():
        if key.startswith(PROPERTY_PREFIX):
            free[key[len(PROPERTY_PREFIX) :]] = value
        else:
            own[key] = native(value)
    return own, free


def flatten(properties: Mapping[str, str]) -> dict[str, str]:
    return {PROPERTY_PREFIX + key: value for key, value in properties.items()}


# Timestamps travel as ISO text and become Neo4j datetimes inside the statement:
# the driver packs datetime objects one by one in Python, ten times slower.
NODE_TIMES = ("created_at", "updated_at")
EDGE_TIMES = ("touched_at", "created_at", "expires_at")


def times(record: Node | Edge, fields: tuple[str, ...]) -> dict[str, str | None]:
    values = {name: getattr(record, name) for name in fields}
    return {name: value.isoformat() if value else None for name, value in values.items()}


def node_props(user: str, node: Node) -> dict[str, Any]:
    data = node.model_dump(exclude={"properties", *NODE_TIMES})
    data["kind"] = node.kind.value
    data["names_folded"] = [name_key(name) for name in node.names]
    return {"user": user, **data, **flatten(node.properties)}


def edge_props(user: str, edge: Edge) -> dict[str, Any]:
    data = edge.model_dump(exclude={"properties", "source", "target", "relation", *EDGE_TIMES})
    data["stability"] = edge.stability.value
    data["cardinality"] = edge.cardinality.value
    return {"user": user, **data, **flatten(edge.properties)}


def times_read(own: dict[str, Any], fields: tuple[str, ...]) -> None:
    """The ISO texts the statements return as datetimes, in place (absent when null)."""
    for name in fields:
        value = own.pop(name, None)
        if value is not None:
            own[name] = aware(datetime.fromisoformat(value) if isinstance(value, str) else value)


def node_from(props: Mapping[str, Any]) -> Node:
    own, free = split_props(props)
    times_read(own, NODE_TIMES)
    own.pop("user", None)
    own.pop("names_folded", None)
    own["kind"] = KINDS[own["kind"]]
    return Node.model_construct(**own, properties=free)  # validated when written (base.py)


def edge_from(record: Mapping[str, Any]) -> Edge:
    own, free = split_props(record["props"])
    own.pop("user", None)
    times_read(own, EDGE_TIMES)
    own["stability"] = STABILITIES[own["stability"]]
    own["cardinality"] = CARDINALITIES[own["cardinality"]]
    return Edge.model_construct(  # validated when written (base.py)
        **own,
        properties=free,
        source=record["source"],
        target=record["target"],
        relation=record["relation"],
    )


def conversation_props(conversation: Conversation) -> dict[str, Any]:
    return {k: v for k, v in conversation.model_dump().items() if v is not None}


def conversation_from(props: Mapping[str, Any]) -> Conversation:
    own, _ = split_props(props)
    own.pop("user", None)
    return Conversation(**own)


def key_and_vector(r: neo4j.Record) -> tuple[EmbeddingKey, np.ndarray]:
    """A key read with its vector, the vector apart (float32, as the copy holds it)."""
    key = EmbeddingKey.model_construct(id=r["id"], text=r["text"], ref=r["ref"], kind=r["kind"],
                                       vector=[])  # fmt: skip
    return key, np.asarray(r["vector"], np.float32)


def possible_ends(edge_id: str) -> list[dict[str, str]]:
    """Every (source, target) an id of the form ``source::RELATION::target`` can
    name; node ids hold '::' themselves, so each split is a candidate."""
    parts = edge_id.split("::")
    return [
        {"id": edge_id, "source": "::".join(parts[:i]), "target": "::".join(parts[i + 1 :])}
        for i in range(1, len(parts) - 1)
    ]


def batches(rows: Sequence[Any], size: int = WRITE_BATCH) -> Iterable[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]

"""Rows of the SQLite tables and the model objects they hold, both ways."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pegasus.model import Edge, EmbeddingKey, Node
from pegasus.stores.base import CARDINALITIES, KINDS, STABILITIES
from pegasus.time.decay import SECONDS_PER_DAY

CHUNK = 500  # ids per IN (...) list, well under SQLite's variable limit
# Kept in tables of their own, not in the record's JSON.
APART = {"journal", "used_edges"}
NODE_COLUMNS = (
    "user, id, name, kind, aliases, properties, confidence, conversations, provisional, "
    "created_at, updated_at"
)
EDGE_COLUMNS = (
    "user, id, source, target, relation, strength, strength0, touched_at, confidence, "
    "stability, cardinality, expires_at, snippet, evidence, properties, conversations, "
    "superseded_by, dormant, expired, created_at"
)
LIVE = "superseded_by IS NULL AND dormant = 0 AND expired = 0"

# What learning an owner's conversations cost, as :class:`Usage`'s fields.
COST_FIELDS = ("calls", "prompt_tokens", "completion_tokens", "seconds")
COST_TOTALS = """SELECT coalesce(sum(json_extract(record, '$.model_calls')), 0),
    coalesce(sum(json_extract(record, '$.prompt_tokens')), 0),
    coalesce(sum(json_extract(record, '$.completion_tokens')), 0),
    coalesce(sum(json_extract(record, '$.model_seconds')), 0.0)
    FROM conversations WHERE user = ?"""


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
MICROSECONDS_PER_DAY = SECONDS_PER_DAY * 1e6


def ts(value: datetime | None) -> int | None:
    """Timestamps are stored as whole microseconds since the epoch: exact and sortable."""
    return None if value is None else (value - EPOCH) // MICROSECOND


def dt(value: int | None) -> datetime | None:
    return None if value is None else EPOCH + value * MICROSECOND


def chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    batch = list(dict.fromkeys(ids))
    for start in range(0, len(batch), CHUNK):
        yield batch[start : start + CHUNK]


def marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def node_row(user: str, node: Node) -> tuple[Any, ...]:
    return (
        user, node.id, node.name, node.kind.value, json.dumps(node.aliases),
        json.dumps(node.properties), node.confidence, json.dumps(node.conversations),
        int(node.provisional), ts(node.created_at), ts(node.updated_at),
    )  # fmt: skip


def edge_row(user: str, edge: Edge) -> tuple[Any, ...]:
    return (
        user, edge.id, edge.source, edge.target, edge.relation, edge.strength,
        edge.strength0, ts(edge.touched_at), edge.confidence, edge.stability.value,
        edge.cardinality.value, ts(edge.expires_at), edge.snippet, edge.evidence,
        json.dumps(edge.properties), json.dumps(edge.conversations), edge.superseded_by,
        int(edge.dormant), int(edge.expired), ts(edge.created_at),
    )  # fmt: skip


# Empty JSON without the parser: with the enum classes' calls, json.loads was a
# third of a 100k-edge pull (see KINDS in base.py).
EMPTY = {"[]": list, "{}": dict}


def json_field(text: str) -> Any:
    empty = EMPTY.get(text)
    return empty() if empty else json.loads(text)


def node_from(row: sqlite3.Row) -> Node:
    return Node.model_construct(
        id=row["id"], name=row["name"], kind=KINDS[row["kind"]],
        aliases=json_field(row["aliases"]), properties=json_field(row["properties"]),
        confidence=row["confidence"], conversations=json_field(row["conversations"]),
        provisional=bool(row["provisional"]), created_at=dt(row["created_at"]),
        updated_at=dt(row["updated_at"]),
    )  # fmt: skip


def edge_from(row: sqlite3.Row) -> Edge:
    return Edge.model_construct(
        id=row["id"], source=row["source"], target=row["target"], relation=row["relation"],
        strength=row["strength"], strength0=row["strength0"],
        touched_at=dt(row["touched_at"]), confidence=row["confidence"],
        stability=STABILITIES[row["stability"]], cardinality=CARDINALITIES[row["cardinality"]],
        expires_at=dt(row["expires_at"]), snippet=row["snippet"], evidence=row["evidence"],
        properties=json_field(row["properties"]), conversations=json_field(row["conversations"]),
        superseded_by=row["superseded_by"], dormant=bool(row["dormant"]),
        expired=bool(row["expired"]), created_at=dt(row["created_at"]),
    )  # fmt: skip


def key_from(row: sqlite3.Row, vector: Any = None) -> EmbeddingKey:
    """A key as stored (checked when written), with ``vector`` (none by default)."""
    return EmbeddingKey.model_construct(
        id=row["id"], text=row["text"], ref=row["ref"], kind=row["kind"], vector=vector or []
    )

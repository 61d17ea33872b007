"""The interchange format: ``{"nodes": [...], "edges": [...]}`` JSON for import,
export, backups and moving a memory between stores.

The minimal form (node ``id,label,kind,aliases,properties,confidence``; edge
``id,from,to,relation,strength,confidence,stability,cardinality,snippet,
properties,dormant,superseded_by,updated_at``) is what a hand-written file needs.
Export writes every other field too, so that a round trip loses nothing. In both,
``strength`` is the strength as of ``updated_at`` (the last touch).

An export may also carry its embedding keys' vectors (``"vectors"``: the model's
name and each key text's float32 vector in base64), so that an import into a memory
on the same model embeds nothing the file already holds.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pydantic

from pegasus.errors import ValidationError
from pegasus.model import Conversation, Edge, Node, describe

FORMAT_VERSION = 1


@dataclass
class Graph:
    """A whole memory (or a slice of one) as plain model objects."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    conversations: list[Conversation] = field(default_factory=list)
    self_id: str | None = None
    vectors: Vectors | None = None  # what an export carried of its keys' vectors


@dataclass
class Vectors:
    """Key text -> its unit-length float32 vector, under the model that made them."""

    model: str
    by_text: Mapping[str, np.ndarray]

    @property
    def dimensions(self) -> int:
        """The vectors' size (0 with none, or with several sizes)."""
        sizes = {len(vector) for vector in self.by_text.values()}
        return sizes.pop() if len(sizes) == 1 else 0

    def described(self) -> str:
        return f"{self.model!r} ({self.dimensions} dimensions)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dimensions": self.dimensions,
            "float32": {text: base64.b64encode(np.asarray(vector, "<f4").tobytes()).decode()
                        for text, vector in sorted(self.by_text.items())},
        }  # fmt: skip

    @classmethod
    def from_dict(cls, raw: Any) -> Vectors:
        if not isinstance(raw, dict) or not isinstance(raw.get("model"), str):
            raise ValidationError('"vectors" must be an object with a "model" name')
        dimensions, encoded = raw.get("dimensions"), raw.get("float32")
        if not isinstance(dimensions, int) or not isinstance(encoded, dict):
            raise ValidationError('"vectors" needs "dimensions" and a "float32" object')
        by_text = {}
        for text, value in encoded.items():
            try:
                vector = np.frombuffer(base64.b64decode(value, validate=True), "<f4")
            except (binascii.Error, TypeError, ValueError) as exc:
                raise ValidationError(f"vectors[{text!r}]: not base64") from exc
            if not 0 < len(vector) == dimensions or not np.isfinite(vector).all():
                raise ValidationError(f"vectors[{text!r}]: not {dimensions} finite float32 numbers")
            by_text[text] = vector.astype(np.float32)
        return cls(raw["model"], by_text)


def _problem(where: str, exc: ValidationError) -> ValidationError:
    # The model's own message names the model; the file's reader wants the entry.
    cause = exc.__cause__
    if isinstance(cause, pydantic.ValidationError):
        return ValidationError(describe(where, cause))
    return ValidationError(f"{where}: {exc}")


def _node_from(raw: dict[str, Any]) -> Node:
    data = dict(raw)
    if "label" in data:
        data["name"] = data.pop("label")
    data.pop("self", None)
    return Node.model_validate(data)


def _edge_from(raw: dict[str, Any]) -> Edge:
    data = dict(raw)
    renames = {"from": "source", "to": "target", "updated_at": "touched_at"}
    for old, new in renames.items():
        if old in data:
            data[new] = data.pop(old)
    # In the file, strength is as of the last touch; the current value, when the
    # file has it, travels as current_strength.
    if "strength" in data:
        data["strength0"] = data.pop("strength")
    data["strength"] = data.pop("current_strength", data.get("strength0", 100.0))
    if "touched_at" in data:
        data.setdefault("created_at", data["touched_at"])
    return Edge.model_validate(data)


def _as_list(document: dict[str, Any], key: str, required: bool) -> list[Any]:
    if key not in document:
        if required:
            raise ValidationError(f'the file has no "{key}" list')
        return []
    value = document[key]
    if not isinstance(value, list):
        raise ValidationError(f'"{key}" must be a list')
    return value


def parse_graph(text: str | bytes) -> Graph:
    """Parse and check a whole interchange document; raise on the first problem."""
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(f"the file is not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ValidationError('the file must hold an object with "nodes" and "edges"')

    graph = Graph()
    for section, required, build, into in (
        ("nodes", True, _node_from, graph.nodes),
        ("edges", True, _edge_from, graph.edges),
        ("conversations", False, Conversation.model_validate, graph.conversations),
    ):
        for index, raw in enumerate(_as_list(document, section, required)):
            where = f"{section}[{index}]"
            if not isinstance(raw, dict):
                raise ValidationError(f"{where}: must be an object")
            if "id" in raw:
                where += f" ({raw['id']!r})"
            try:
                into.append(build(raw))
            except ValidationError as exc:
                raise _problem(where, exc) from exc

    _check_references(graph)
    self_id = document.get("self")
    if self_id is not None and self_id not in {node.id for node in graph.nodes}:
        raise ValidationError(f"self {self_id!r} is not a node in the file")
    graph.self_id = self_id
    if document.get("vectors") is not None:
        graph.vectors = Vectors.from_dict(document["vectors"])
    return graph


def _check_references(graph: Graph) -> None:
    node_ids: set[str] = set()
    for node in graph.nodes:
        if node.id in node_ids:
            raise ValidationError(f"node {node.id!r} appears twice")
        node_ids.add(node.id)
    edge_ids: set[str] = set()
    for edge in graph.edges:
        if edge.id in edge_ids:
            raise ValidationError(f"edge {edge.id!r} appears twice")
        edge_ids.add(edge.id)
        for end in (edge.source, edge.target):
            if end not in node_ids:
                raise ValidationError(f"edge {edge.id!r} points to {end!r}, which is not a node")
    for edge in graph.edges:
        if edge.superseded_by is not None and edge.superseded_by not in edge_ids:
            raise ValidationError(
                f"edge {edge.id!r} is superseded by {edge.superseded_by!r}, which is not an edge"
            )


def node_to_dict(node: Node) -> dict[str, Any]:
    data = node.model_dump(mode="json")
    data["label"] = data.pop("name")
    data["properties"] = dict(sorted(data["properties"].items()))
    order = ["id", "label", "kind", "aliases", "properties", "confidence"]
    return {key: data[key] for key in order} | {k: v for k, v in data.items() if k not in order}


def edge_to_dict(edge: Edge) -> dict[str, Any]:
    data = edge.model_dump(mode="json")
    out = {
        "id": data["id"],
        "from": data["source"],
        "to": data["target"],
        "relation": data["relation"],
        "strength": data["strength0"],
        "confidence": data["confidence"],
        "stability": data["stability"],
        "cardinality": data["cardinality"],
        "snippet": data["snippet"],
        "properties": dict(sorted(data["properties"].items())),
        "dormant": data["dormant"],
        "superseded_by": data["superseded_by"],
        "updated_at": data["touched_at"],
        "current_strength": data["strength"],
    }
    for key in ("expires_at", "evidence", "conversations", "expired", "created_at"):
        out[key] = data[key]
    return out


def dump_graph(graph: Graph) -> str:
    document: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "self": graph.self_id,
        "nodes": [node_to_dict(n) for n in sorted(graph.nodes, key=lambda n: n.id)],
        "edges": [edge_to_dict(e) for e in sorted(graph.edges, key=lambda e: e.id)],
        "conversations": [
            c.model_dump(mode="json") for c in sorted(graph.conversations, key=lambda c: c.id)
        ],
    }
    if graph.vectors is not None:
        document["vectors"] = graph.vectors.to_dict()
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"

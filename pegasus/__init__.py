"""Pegasus: long-term memory for LLM assistants, kept as a knowledge graph.

The names below are imported on first use: ``import pegasus`` (and every command
line start) stays light until something needs the store, the models or the LLM."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pegasus.errors import (
    ConfigError,
    LLMError,
    LLMRequestError,
    NotFoundError,
    PegasusError,
    StoreError,
    ValidationError,
)

if TYPE_CHECKING:
    from pegasus.interchange import Graph
    from pegasus.memory import Memory, Pegasus
    from pegasus.model import Cardinality, Conversation, Edge, Kind, Node, Stability

_LAZY = {
    "Graph": "pegasus.interchange",
    "Memory": "pegasus.memory",
    "Pegasus": "pegasus.memory",
    **dict.fromkeys(
        ("Cardinality", "Conversation", "Edge", "Kind", "Node", "Stability"), "pegasus.model"
    ),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pegasus' has no attribute {name!r}")


__all__ = [
    "Cardinality",
    "ConfigError",
    "Conversation",
    "Edge",
    "Graph",
    "Kind",
    "LLMError",
    "LLMRequestError",
    "Memory",
    "Node",
    "NotFoundError",
    "Pegasus",
    "PegasusError",
    "Stability",
    "StoreError",
    "ValidationError",
]

"""Pegasus: long-term memory for LLM assistants, kept as a knowledge graph."""

from pegasus.errors import (
    ConfigError,
    LLMError,
    NotFoundError,
    PegasusError,
    StoreError,
    ValidationError,
)
from pegasus.interchange import Graph
from pegasus.memory import Memory
from pegasus.model import Cardinality, Conversation, Edge, Kind, Node, Stability

__all__ = [
    "Cardinality",
    "ConfigError",
    "Conversation",
    "Edge",
    "Graph",
    "Kind",
    "LLMError",
    "Memory",
    "Node",
    "NotFoundError",
    "PegasusError",
    "Stability",
    "StoreError",
    "ValidationError",
]

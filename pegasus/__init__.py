"""Pegasus: long-term memory for LLM assistants, kept as a knowledge graph."""

from pegasus.errors import (
    ConfigError,
    LLMError,
    LLMRequestError,
    NotFoundError,
    PegasusError,
    StoreError,
    ValidationError,
)
from pegasus.interchange import Graph
from pegasus.memory import Memory, Pegasus
from pegasus.model import Cardinality, Conversation, Edge, Kind, Node, Stability

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

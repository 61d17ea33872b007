"""Every error Pegasus raises on purpose derives from one root.

    PegasusError
    ├── ConfigError          a setting is missing or malformed
    ├── ValidationError      a node, edge, conversation or file breaks the data model
    ├── StoreError           the store could not be reached or refused an operation
    │   └── NotFoundError    a node, edge or conversation that should exist does not
    └── LLMError             the language model endpoint failed or answered unusably

Errors of the libraries underneath (sqlite3, neo4j, openai) are translated where
they enter, with the original kept as ``__cause__``.
"""

from __future__ import annotations


class PegasusError(Exception):
    """Root of every error raised by Pegasus."""


class ConfigError(PegasusError):
    """A setting is missing or malformed."""


class ValidationError(PegasusError):
    """Data that breaks the data model: says which item, which field and why."""


class StoreError(PegasusError):
    """The store could not be reached or refused an operation."""


class NotFoundError(StoreError):
    """A node, edge or conversation that should exist does not."""


class LLMError(PegasusError):
    """The language model endpoint failed or answered unusably."""

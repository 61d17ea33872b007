"""Every error Pegasus raises on purpose derives from one root.

    PegasusError                exit 1  HTTP 500
    ├── ConfigError             exit 2  HTTP 500  a setting is missing or malformed
    ├── ValidationError         exit 2  HTTP 400  a node, edge, conversation, file or
    │   │                                         argument breaks the data model
    │   └── TooLargeError       exit 2  HTTP 413  an input over a configured limit
    ├── AuthError               exit 2  HTTP 401  a request to the service without
    │   │                                         its token
    │   └── ForeignHostError    exit 2  HTTP 403  a request to the service by a name
    │                                             it is not reached by (DNS rebinding)
    ├── StoreError              exit 3  HTTP 503  the store could not be reached or
    │   │                                         refused an operation
    │   ├── NotFoundError       exit 4  HTTP 404  a node, edge or conversation that
    │   │                                         should exist does not
    │   └── DiskFullError       exit 3  HTTP 507  no room left on the disk
    └── LLMError                exit 5  HTTP 502  the language model endpoint failed
        │                                         or answered unusably
        └── LLMRequestError     exit 5  HTTP 502  the endpoint refused the request
                                                  as bad (HTTP 400 there)

Front ends map an error with ``exc.exit_code`` and ``exc.http_status`` and nothing
else: the class attributes below are the one place these numbers are set. Exit 2 is
also what a command-line usage error exits with: in each case the input is wrong,
not the system. A misconfigured server is the server's fault, hence 500 for
ConfigError.

Errors of the libraries underneath (sqlite3, neo4j, openai, pydantic) are
translated where they enter, with the original kept as ``__cause__``.
:class:`ValidationError` is also a :class:`ValueError`, so validators written for
pydantic and ``except ValueError`` keep working.
"""

from __future__ import annotations

from typing import ClassVar


class PegasusError(Exception):
    """Root of every error raised by Pegasus."""

    exit_code: ClassVar[int] = 1
    http_status: ClassVar[int] = 500


class ConfigError(PegasusError):
    """A setting is missing or malformed."""

    exit_code = 2
    http_status = 500


class ValidationError(PegasusError, ValueError):
    """Data that breaks the data model: says which item, which field and why."""

    exit_code = 2
    http_status = 400


class TooLargeError(ValidationError):
    """An input over a configured limit (a request body, a message, a transcript)."""

    http_status = 413


class StoreError(PegasusError):
    """The store could not be reached or refused an operation."""

    exit_code = 3
    http_status = 503


class NotFoundError(StoreError):
    """A node, edge or conversation that should exist does not."""

    exit_code = 4
    http_status = 404


class DiskFullError(StoreError):
    """The disk holding the store or the service's files has no room left."""

    http_status = 507


class LLMError(PegasusError):
    """The language model endpoint failed or answered unusably."""

    exit_code = 5
    http_status = 502


class LLMRequestError(LLMError):
    """The endpoint refused the request itself as bad (for example: no tool calling)."""


class AuthError(PegasusError):
    """A request to the memory service without its bearer token."""

    exit_code = 2
    http_status = 401


class ForeignHostError(AuthError):
    """A request addressed to a name the service is not reached by on this machine."""

    http_status = 403

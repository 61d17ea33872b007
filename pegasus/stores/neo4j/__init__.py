"""The Neo4j store (:class:`Neo4jStore`)."""

from pegasus.stores.neo4j.queries import credentials, cypher
from pegasus.stores.neo4j.store import REQUEST_WRITE_SECONDS, Neo4jStore

__all__ = ["REQUEST_WRITE_SECONDS", "Neo4jStore", "credentials", "cypher"]

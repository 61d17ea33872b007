"""The Cypher statements by name (``cypher/<name>.cypher``), and the login."""

from __future__ import annotations

from functools import cache
from importlib import resources

from pegasus.config import Settings


def credentials(settings: Settings) -> tuple[str, str] | None:
    """NEO4J_USER and NEO4J_PASSWORD, when both are set (the launcher runs without)."""
    if settings.neo4j_user and settings.neo4j_password:
        return settings.neo4j_user, settings.neo4j_password
    return None


@cache
def cypher(name: str) -> str:
    """The statement in ``cypher/<name>.cypher``."""
    return (resources.files("pegasus.cypher") / f"{name}.cypher").read_text(encoding="utf-8")


def statements(name: str) -> list[str]:
    lines = [ln for ln in cypher(name).splitlines() if not ln.lstrip().startswith("//")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]

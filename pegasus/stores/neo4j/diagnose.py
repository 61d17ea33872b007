"""How a Neo4j server stands, for ``pegasus doctor``: reachable, recent enough,
and holding the schema the store creates."""

from __future__ import annotations

import re
from typing import Any

from pegasus.config import Settings
from pegasus.errors import PegasusError
from pegasus.stores.base import OK, PROBLEM, WARNING, Diagnosis, Store, one_line
from pegasus.stores.neo4j.queries import credentials, cypher

CONNECT_SECONDS = 5.0  # a server that has not answered by then counts as unreachable
MINIMUM = (5, 26)  # dynamic labels (SET n:$(kind)) arrived in 5.26
START_NEO4J = "start it ('make neo4j-up' in a checkout, or any Neo4j 5.26+) or correct the URL"


def _version(agent: str) -> tuple[int, ...]:
    found = re.search(r"(\d+)\.(\d+)", agent)
    return (int(found[1]), int(found[2])) if found else ()


class Unreachable(Exception):
    """A Neo4j server that cannot be used, with what to do about it."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def server_info(uri: str, settings: Settings, schema: bool = False) -> dict[str, Any]:
    """Connect within a few seconds: the server's version and (with ``schema``) the
    state of every index. Raises :class:`Unreachable`."""
    import neo4j
    from neo4j.exceptions import AuthError, ConfigurationError, DriverError, Neo4jError

    try:
        driver = neo4j.GraphDatabase.driver(
            uri,
            auth=credentials(settings),
            connection_timeout=CONNECT_SECONDS,
            connection_acquisition_timeout=CONNECT_SECONDS * 2,
            notifications_min_severity="OFF",
        )
    except (ValueError, ConfigurationError) as exc:
        raise Unreachable(
            f"{uri!r} is not a Neo4j URL: {one_line(exc)}",
            "use bolt://host:7687 or neo4j://host:7687",
        ) from exc
    try:
        info = driver.get_server_info()
        found: dict[str, Any] = {"agent": info.agent, "version": _version(info.agent)}
        if schema:
            with driver.session() as session:
                rows = session.run(cypher("indexes")).data()
            found["indexes"] = {row["name"]: row["state"] for row in rows}
        return found
    except AuthError as exc:
        raise Unreachable(
            f"Neo4j at {uri} refused the login: {one_line(exc)}",
            "set NEO4J_USER and NEO4J_PASSWORD to a login of that server",
        ) from exc
    except (DriverError, Neo4jError, OSError) as exc:
        raise Unreachable(f"cannot reach Neo4j at {uri}: {one_line(exc)}", START_NEO4J) from exc
    finally:
        driver.close()


def version_problem(found: dict[str, Any]) -> str | None:
    if found["version"] and found["version"] < MINIMUM:
        return f"{found['agent']} is too old: Pegasus needs Neo4j 5.26 or later"
    return None


def schema_names() -> list[str]:
    """The constraints and indexes the store creates (cypher/schema.cypher)."""
    pattern = r"CREATE\s+(?:\w+\s+)?(?:CONSTRAINT|INDEX)\s+(\w+)\s+IF\s+NOT\s+EXISTS"
    return re.findall(pattern, cypher("schema"), flags=re.IGNORECASE)


def diagnose(store: type[Store], url: str, settings: Settings) -> Diagnosis:
    """How the server at ``url`` stands; ``store`` is the Neo4j store's class."""
    try:
        found = server_info(url, settings)
    except Unreachable as exc:
        return Diagnosis(PROBLEM, str(exc), exc.fix)
    too_old = version_problem(found)
    if too_old:
        return Diagnosis(PROBLEM, too_old, "upgrade the server to Neo4j 5.26 or later")
    try:  # opening creates whatever part of the schema is missing
        store.from_url(url, settings).close()
        found = server_info(url, settings, schema=True)
    except PegasusError as exc:
        return Diagnosis(PROBLEM, str(exc), "check the server's log and the login's rights")
    except Unreachable as exc:
        return Diagnosis(PROBLEM, str(exc), exc.fix)
    names = schema_names()
    missing = [name for name in names if name not in found["indexes"]]
    offline = {
        name: state
        for name in names
        if (state := found["indexes"].get(name)) is not None and state != "ONLINE"
    }
    details = {"server": found["agent"], "indexes": {n: found["indexes"].get(n) for n in names}}
    if missing or any(state == "FAILED" for state in offline.values()):
        broken = missing + [name for name, state in offline.items() if state == "FAILED"]
        return Diagnosis(
            PROBLEM,
            f"{url} ({found['agent']}): index {', '.join(broken)} missing or failed",
            "drop the failed index (DROP INDEX name) and run any pegasus command to recreate it",
            details,
        )
    if offline:
        states = ", ".join(f"{name} {state}" for name, state in offline.items())
        return Diagnosis(
            WARNING,
            f"{url} ({found['agent']}): {states}",
            "wait for the indexes to come online; recall is slow or partial until then",
            details,
        )
    return Diagnosis(
        OK,
        f"{url}: {found['agent']}, schema in place ({len(names)} constraints and indexes online)",
        details=details,
    )

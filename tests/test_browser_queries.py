"""The saved Neo4j Browser queries in cypher/browser/ run and find what they promise."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from pegasus.interchange import parse_graph
from pegasus.stores import Changes
from tests.conftest import SEED_GRAPH, neo4j_uri, wipe

QUERIES = Path(__file__).resolve().parent.parent / "cypher" / "browser"


@pytest.mark.neo4j
def test_saved_queries(_neo4j_session_store) -> None:
    import neo4j

    store, user = _neo4j_session_store, f"browser-{uuid.uuid4().hex[:8]}"
    graph = parse_graph(SEED_GRAPH.read_bytes())
    old = next(e for e in graph.edges if e.relation == "REPORTS_TO")
    graph.edges = [e for e in graph.edges if e is not old] + [
        old.evolve(superseded_by="PERSON::trevor::WORKS_AT::ORG::deloitte"),
    ]
    graph.edges = [e.evolve(dormant=True) if e.relation == "ASPIRES_TO" else e for e in graph.edges]
    store.apply(user, Changes.of_graph(graph))
    counts = {}
    with neo4j.GraphDatabase.driver(neo4j_uri()) as driver:
        for path in sorted(QUERIES.glob("*.cypher")):
            records, _, _ = driver.execute_query(path.read_text(), user=user, name="Joshua")
            counts[path.stem] = len(records)
    wipe(store, user)
    # Joshua's two hops reach Deloitte, and Trevor through Deloitte (not the superseded
    # REPORTS_TO); the faded and superseded claims are the two set above.
    assert counts["neighbourhood"] >= 2
    assert (counts["faded"], counts["superseded"], counts["strongest"]) == (1, 1, 19)

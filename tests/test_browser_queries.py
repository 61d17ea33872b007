"""The saved Neo4j Browser queries in cypher/browser/ run and find what they promise."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from pegasus.interchange import parse_graph
from pegasus.stores import Changes
from tests.chromium import chromium
from tests.conftest import NEO4J_BROWSER_URL, SEED_GRAPH, neo4j_uri, wipe

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


ARTIFACTS = Path(__file__).resolve().parent.parent / "build" / "test-artifacts"
PERSON_COLOUR = "#e15759"  # browser/pegasus.grass


@pytest.mark.neo4j
def test_browser_shows_the_sample_styled(_neo4j_session_store) -> None:
    """Browser, as `make neo4j-up` serves it, connects over Bolt, opens with the style
    and the saved queries, and draws the sample's nodes for one of them."""
    from playwright.sync_api import sync_playwright

    store, user = _neo4j_session_store, f"browser-{uuid.uuid4().hex[:8]}"
    store.apply(user, Changes.of_graph(parse_graph(SEED_GRAPH.read_bytes())))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "neo4j-browser.png"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(
                f"{NEO4J_BROWSER_URL}/browser/?dbms={neo4j_uri()}&preselectAuthMethod=NO_AUTH"
            )
            # The guide opens by itself once Browser is connected.
            page.locator("pre.runnable", has_text=":param user").wait_for(timeout=90_000)
            run(page, f":param user => '{user}'; :param name => 'Joshua'")
            # Both set before the query runs: on a busy machine it could run first.
            done = page.locator(
                '[data-testid="multi-statement-list-icon"][title="Status: success"]'
            )
            done.nth(1).wait_for(timeout=30_000)
            page.get_by_test_id("nextSlide").click()
            page.get_by_test_id("nextSlide").click()
            page.locator("pre.runnable", has_text="names_folded").click()  # neighbourhood
            page.get_by_test_id("editor-Run").click()
            nodes = page.locator("svg g.node")
            nodes.first.wait_for(timeout=30_000)
            captions = {t.strip() for t in page.locator("svg g.node text").all_text_contents()}
            joshua = nodes.filter(has_text="Joshua").locator("circle.b-outline")
            fill = joshua.get_attribute("fill")
            page.screenshot(path=str(shot))
            browser.close()
    finally:
        wipe(store, user)
    assert {"Joshua", "Trevor", "Deloitte"} <= captions, captions
    assert fill == PERSON_COLOUR
    assert shot.stat().st_size > 0


def run(page, command: str) -> None:
    """Put a command in Browser's editor, as if typed, and run it."""
    page.get_by_test_id("activeEditor").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(command)
    page.keyboard.press("Control+Enter")

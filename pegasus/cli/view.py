"""``pegasus view``: the graph as one self-contained HTML page (no network needed)."""

from __future__ import annotations

import json
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:  # imported when a page is made: other commands start without them
    from pegasus.interchange import Graph
    from pegasus.time.decay import DecayRule

MAX_EDGES = 2_000  # the strongest claims shown; a browser lays out a few thousand at most


def page_data(
    graph: Graph, now: datetime, limit: int = MAX_EDGES, rule: DecayRule | None = None
) -> dict[str, Any]:
    from pegasus.time.decay import RULE, edge_state

    rule = rule or RULE
    edges = []
    for edge in graph.edges:
        state = edge_state(edge, now, rule)
        edges.append({
            "source": edge.source, "target": edge.target, "relation": edge.relation,
            "strength": round(state.strength, 2), "stability": edge.stability.value,
            "state": state.label, "snippet": edge.snippet,
            "created_at": f"{edge.created_at:%Y-%m-%d}",
            "touched_at": f"{edge.touched_at:%Y-%m-%d}",
        })  # fmt: skip
    edges.sort(key=lambda e: (e["state"] != "live", -e["strength"]))
    edges = edges[:limit]
    shown = {e["source"] for e in edges} | {e["target"] for e in edges}
    nodes = [
        {"id": n.id, "name": n.name, "kind": n.kind.value, "aliases": n.aliases,
         "properties": n.properties, "self": n.id == graph.self_id}
        for n in graph.nodes
        if n.id in shown or len(graph.edges) <= limit
    ]  # fmt: skip
    return {"as_of": f"{now:%Y-%m-%d}", "nodes": nodes, "edges": edges}


def render(
    graph: Graph, now: datetime, limit: int = MAX_EDGES, rule: DecayRule | None = None
) -> str:
    template = resources.files("pegasus.data").joinpath("view.html").read_text(encoding="utf-8")
    # "</" would end the script element early; "<\/" reads the same to JSON.
    data = json.dumps(page_data(graph, now, limit, rule), ensure_ascii=False)
    data = data.replace("</", "<\\/")
    return template.replace("__GRAPH_JSON__", data)


def view(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Where to write the page.")] = Path(
        "pegasus-view.html"
    ),
    limit: Annotated[int, typer.Option(help="Show at most this many claims, strongest first.")] = (
        MAX_EDGES
    ),
) -> None:
    """Write the memory as a self-contained HTML page: nodes coloured by kind, edge width
    by strength, dormant and superseded claims faded, click for details and snippets."""
    from pegasus.model import utcnow

    memory = ctx.obj.memory
    page = render(memory.export(), utcnow(), limit, memory.rule)
    out.write_text(page, encoding="utf-8")
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("view")(view)

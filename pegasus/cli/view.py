"""``pegasus view``: the graph as one self-contained HTML page (no network needed)."""

from __future__ import annotations

import json
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer

from pegasus.interchange import Graph
from pegasus.model import Edge, utcnow
from pegasus.time.decay import DORMANT_BELOW, strength_at

MAX_EDGES = 2_000  # the strongest claims shown; a browser lays out a few thousand at most


def edge_state(edge: Edge, strength: float, now: datetime) -> str:
    if edge.superseded_by:
        return "superseded"
    if edge.expired or (edge.expires_at is not None and edge.expires_at <= now):
        return "expired"
    if edge.dormant or strength < DORMANT_BELOW:
        return "dormant"
    return "live"


def page_data(graph: Graph, now: datetime, limit: int = MAX_EDGES) -> dict[str, Any]:
    edges = []
    for edge in graph.edges:
        strength = strength_at(edge.strength0, edge.touched_at, edge.stability, now)
        edges.append({
            "source": edge.source, "target": edge.target, "relation": edge.relation,
            "strength": round(strength, 2), "stability": edge.stability.value,
            "state": edge_state(edge, strength, now), "snippet": edge.snippet,
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


def render(graph: Graph, now: datetime, limit: int = MAX_EDGES) -> str:
    template = resources.files("pegasus.data").joinpath("view.html").read_text(encoding="utf-8")
    # "</" would end the script element early; "<\/" reads the same to JSON.
    data = json.dumps(page_data(graph, now, limit), ensure_ascii=False).replace("</", "<\\/")
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
    memory = ctx.obj.memory
    page = render(memory.export(), utcnow(), limit)
    out.write_text(page, encoding="utf-8")
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("view")(view)

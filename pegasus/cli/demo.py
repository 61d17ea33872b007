"""``pegasus demo``: the sample memory in a throwaway embedded store, offline."""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pegasus.cli.inspect import stats_table
from pegasus.memory import Memory
from pegasus.time.decay import DECAY_RATES, strength_at

out = Console()
SELF = "PERSON::trevor"


def sample(name: str) -> Path:
    return Path(str(resources.files("pegasus.data") / name))


def _decay_table(memory: Memory, closed_at: datetime) -> Table:
    table = Table(title="strength after the follow-up conversation closed")
    for column in ("claim", "stability", "now", "+30 days", "+180 days"):
        table.add_column(column, justify="left" if column in ("claim", "stability") else "right")
    graph = memory.export()
    names = {node.id: node.name for node in graph.nodes}
    # Two claims of each stability class, fastest fading first.
    edges = sorted(graph.edges, key=lambda e: (-DECAY_RATES[e.stability], e.id))
    shown: dict[str, int] = {}
    for edge in edges:
        shown[edge.stability] = shown.get(edge.stability, 0) + 1
        if shown[edge.stability] > 2:
            continue
        values = [
            strength_at(edge.strength0, edge.touched_at, edge.stability, closed_at + timedelta(d))
            for d in (0, 30, 180)
        ]
        table.add_row(
            f"{names[edge.source]} -[{edge.relation}]-> {names[edge.target]}",
            edge.stability.value,
            *(f"{v:.1f}" + (" (dormant)" if v < 2 else "") for v in values),
        )
    return table


def demo(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(help="Store to use instead of a temporary embedded one."),
    ] = None,
) -> None:
    """Load the sample memory, recall for two follow-up messages, and show decay."""
    conversation = json.loads(sample("conversation.json").read_text(encoding="utf-8"))
    follow_up = conversation["followup_conversation"]
    started = datetime.fromisoformat(follow_up["started_at"])
    with tempfile.TemporaryDirectory(prefix="pegasus-demo-") as tmp:
        url = store or ctx.obj.store or f"sqlite:///{Path(tmp) / 'demo.db'}"
        with Memory(url, user=ctx.obj.user) as memory:
            with out.status("importing the sample memory and embedding its names..."):
                graph = memory.import_file(sample("graph.json"))
                memory.store.set_self(memory.user, SELF)
            out.print(
                f"[bold]Stored[/bold] {len(graph.nodes)} nodes and {len(graph.edges)} edges "
                f"from Trevor's first conversation into {url}"
            )
            out.print(stats_table(memory.stats()))
            for turn in follow_up["turns"]:
                if turn["role"] != "user":
                    continue
                result = memory.recall(turn["content"], follow_up["id"], started)
                out.rule("user says")
                out.print(turn["content"], highlight=False)
                out.rule("Pegasus injects")
                out.print(result.text or "(nothing: no memory is relevant)", highlight=False)
            reinforced = memory.close_conversation(follow_up["id"], started)
            out.rule()
            out.print(f"Closed the conversation: {reinforced} memories that were used got +15.")
            out.print(_decay_table(memory, started))


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)

"""``pegasus demo``: the sample conversation through the write path into a throwaway
embedded store, then recall and decay. Offline unless a model is configured."""

from __future__ import annotations

import json
import tempfile
from contextlib import ExitStack
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from pegasus.cli.common import stats_table, summary_lines

if TYPE_CHECKING:
    from pegasus.memory import Memory
    from pegasus.time.decay import DecayRule

out = Console()


def sample(name: str) -> Path:
    return Path(str(resources.files("pegasus.data") / name))


def _decay_table(memory: Memory, closed_at: datetime, rule: DecayRule) -> Table:
    from pegasus.time.decay import edge_state

    table = Table(title="strength after the follow-up conversation closed")
    for column in ("claim", "stability", "now", "+30 days", "+180 days"):
        table.add_column(column, justify="left" if column in ("claim", "stability") else "right")
    graph = memory.export()
    names = {node.id: node.name for node in graph.nodes}
    # Two claims of each stability class, fastest fading first.
    edges = sorted(graph.edges, key=lambda e: (-rule.rates[e.stability], e.id))
    shown: dict[str, int] = {}
    for edge in edges:
        shown[edge.stability] = shown.get(edge.stability, 0) + 1
        if shown[edge.stability] > 2:
            continue
        states = [edge_state(edge, closed_at + timedelta(d), rule) for d in (0, 30, 180)]
        table.add_row(
            f"{names[edge.source]} -[{edge.relation}]-> {names[edge.target]}",
            edge.stability.value,
            *(f"{s.strength:.1f}" + (" (dormant)" if s.dormant else "") for s in states),
        )
    return table


def demo(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(help="Store to use instead of a temporary embedded one."),
    ] = None,
) -> None:
    """Ingest the sample conversation, recall for two follow-up messages, show decay."""
    from pegasus.llm import LLM, LLMConfig
    from pegasus.llm.scripted import ScriptedServer, by_round, recorded_rounds
    from pegasus.memory import Memory

    conversation = json.loads(sample("conversation.json").read_text(encoding="utf-8"))
    follow_up = conversation["followup_conversation"]
    started = datetime.fromisoformat(follow_up["started_at"])
    with tempfile.TemporaryDirectory(prefix="pegasus-demo-") as tmp, ExitStack() as stack:
        url = store or ctx.obj.store or f"sqlite:///{Path(tmp) / 'demo.db'}"
        memory = stack.enter_context(Memory.open(url, user=ctx.obj.user))
        llm = None
        if memory.settings.llm_base_url:
            out.print(
                f"Extracting with {memory.settings.llm_model} at {memory.settings.llm_base_url}"
            )
        else:
            # No model configured: an extraction model's recorded answers, replayed
            # over HTTP so the real client and the whole write path still run.
            recording = json.loads(sample("seed_extraction.json").read_text(encoding="utf-8"))
            server = stack.enter_context(ScriptedServer(by_round(recorded_rounds(recording))))
            llm = LLM(LLMConfig(server.base_url, "recorded-extraction"))
            out.print("Extracting with recorded model answers (set PEGASUS_LLM_BASE_URL and "
                      "PEGASUS_LLM_MODEL to use a live model)")  # fmt: skip
        with out.status("ingesting Trevor's first conversation...") as status:
            report = memory.ingest(
                sample("conversation.json"),
                llm=llm,
                progress=lambda text: status.update(f"ingesting: {text}"),
            )
        for line in summary_lines(report):
            out.print(line, highlight=False)
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
        rule = memory.rule
        out.print(
            f"Closed the conversation: {reinforced} memories that were used "
            f"got +{rule.reinforce_by:g}."
        )
        out.print(_decay_table(memory, started, rule))


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)

"""A LoCoMo conversation through the real write path, session by session: the live
model when ``PEGASUS_LLM_*`` is set, else the recorded extraction replayed by the
scripted OpenAI-compatible server over HTTP."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

from bench.locomo.data import Conversation
from pegasus.llm import LLM, LLMConfig
from pegasus.llm.scripted import ScriptedServer, Step, by_round
from pegasus.memory import Memory

RECORDED = Path(__file__).parent / "recorded"
CALLS_PER_ROUND = 8  # a model writes a few calls per reply, as the prompt asks


def recording_of(sample: str, session: int, root: Path = RECORDED) -> list[Step]:
    """The recorded extraction of one session as the model's replies."""
    path = root / sample / f"session_{session:02d}.json"
    if not path.exists():
        raise SystemExit(f"no recorded extraction {path}; set PEGASUS_LLM_* to extract live")
    calls = json.loads(path.read_text(encoding="utf-8"))["calls"]
    return [
        Step(tool_calls=[(c["name"], c["arguments"]) for c in calls[i : i + CALLS_PER_ROUND]])
        for i in range(0, len(calls), CALLS_PER_ROUND)
    ]


def ingest(memory: Memory, conversation: Conversation, live: bool, root: Path = RECORDED,
           progress=print) -> list[str]:  # fmt: skip
    """Every session in order, each as of its own date. Returns the write path's notes."""
    notes: list[str] = []
    for session in conversation.sessions:
        transcript = session.transcript(conversation.sample)
        with ExitStack() as stack:
            llm = None
            if not live:
                server = stack.enter_context(
                    ScriptedServer(
                        by_round(recording_of(conversation.sample, session.number, root))
                    )
                )
                llm = LLM(LLMConfig(server.base_url, "recorded-extraction"))
            report = memory.ingest(transcript, now=session.at, llm=llm)
        notes += report.dropped
        progress(
            f"  {transcript.id}: {len(report.created)} new entities, "
            f"{len(report.relations_added)} claims, {len(report.dropped)} notes"
        )
    return notes

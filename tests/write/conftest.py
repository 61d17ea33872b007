"""Write-path fixtures: a scripted OpenAI-compatible server per test, and helpers to
ingest small conversations through the real pipeline."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pegasus.llm import LLM, LLMConfig
from pegasus.llm.scripted import Responder, ScriptedServer, Step, sequence
from pegasus.memory import Memory
from pegasus.stores import Store
from pegasus.write.transcript import parse_transcript
from tests.conftest import DATA

RECORDING = json.loads((DATA / "seed_extraction.json").read_text())


def llm_for(server: ScriptedServer, **config: Any) -> LLM:
    options = {"retry_wait": 0.01, "retries": 2, "timeout": 5.0} | config
    return LLM(LLMConfig(server.base_url, "scripted-model", **options))


def calls(*pairs: tuple[str, dict[str, Any]]) -> Step:
    return Step(tool_calls=list(pairs))


def entity(name: str, kind: str = "PERSON", **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("add_entity", {"name": name, "kind": kind, **extra})


def relation(source: str, label: str, target: str, snippet: str = "", **extra: Any):
    args = {"source": source, "relation": label, "target": target,
            "snippet": snippet or f"{source} {label.lower()} {target}", **extra}  # fmt: skip
    return ("add_relation", args)


FINISH = ("finish", {"summary": "s", "importance": 0.5, "tags": []})


def chat(*user_turns: str, conversation_id: str = "c1", at: str = "2026-10-01T10:00:00+00:00"):
    turns = []
    for text in user_turns:
        turns += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    return parse_transcript(
        {"id": conversation_id, "started_at": at, "ended_at": at, "turns": turns}
    )


def ingest_steps(
    memory: Memory,
    serve: Callable[[Responder], ScriptedServer],
    steps: list[Step],
    transcript=None,
    **config: Any,
):
    """Ingest ``transcript`` answering with ``steps``. The default transcript is a
    chat in which the user said every snippet, name and value the steps cite (what
    was never said is not kept)."""
    server = serve(sequence(steps))
    return memory.ingest(transcript or chat("hello", *said(steps)), llm=llm_for(server, **config))


def said(steps: list[Step]) -> list[str]:
    """The snippets that ``steps`` cite, and the names, aliases and property values of
    the entities they add, as the user's turns of a chat."""
    turns = []
    for step in steps:
        for name, args in step.tool_calls:
            if not isinstance(args, dict):
                continue
            if name == "add_relation" and args.get("snippet"):
                turns.append(args["snippet"])
            elif name == "add_entity":
                words = [args.get("name"), *args.get("aliases", []),
                         *dict(args.get("properties") or {}).values()]  # fmt: skip
                turns.append(", ".join(str(word) for word in words if word))
    return list(dict.fromkeys(turn for turn in turns if turn))


@pytest.fixture
def memory(store: Store, user: str) -> Memory:
    return Memory.open(store, user=user)

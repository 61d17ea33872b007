"""Extraction that writes as it goes.

The model gets tools; every reply, then the results of its tool calls (in one
write), are appended to the conversation's journal in the store before the next
step, so a model cut off midway, a timeout or a killed process loses nothing: the
next run rebuilds the exact chat from the journal and carries on. Journal entries (JSON):

    {"t": "segment", "start", "end", "hash"}   the turns this extraction covers
    {"t": "reply", "content", "tool_calls"}      a model reply, stored on arrival
    {"t": "result", "id", "name", "text", "args"}  one tool call handled
    {"t": "nudge", "text"}                       a reminder sent after a reply without calls
    {"t": "review", "entity", "answer"}          a merge review answer
    {"t": "end", "reason"}                       the model is done (or was stopped)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pydantic

from pegasus.errors import LLMError, LLMRequestError
from pegasus.llm import LLM, Reply, ToolCall
from pegasus.model import LONE_SURROGATE, Conversation, Node
from pegasus.prompts.extract import ARGUMENTS, TOOLS, AddEntity, AddRelation, Finish
from pegasus.prompts.extract import system_prompt as extract_prompt
from pegasus.stores import Changes, Store
from pegasus.write.clean import clean_entity, clean_relation, is_placeholder

MAX_CALLS = 200  # tool calls per segment
MAX_ROUNDS = 40  # model replies per segment
JSON_TRIES = 2  # answers asked of a model without tools before giving up
JSON_CALL = "json_"  # id prefix of the calls read from a JSON answer
NUDGE = (
    "Record what is worth keeping with add_entity and add_relation, then call finish "
    "(call finish alone if nothing is worth keeping)."
)


def _line(entry: dict[str, Any]) -> str:
    # A model's reply may carry lone surrogates (JSON allows them): no store encodes one.
    return LONE_SURROGATE.sub("\ufffd", json.dumps(entry, ensure_ascii=False))


class Journal:
    """The extraction journal of a conversation; every entry is stored as it comes,
    appended to what is stored (the record itself is not rewritten)."""

    def __init__(self, store: Store, user: str, record: Conversation) -> None:
        self.store, self.user, self.record = store, user, record
        self.entries: list[dict[str, Any]] = [json.loads(line) for line in record.journal]

    def append(self, entry: dict[str, Any]) -> None:
        self.extend([entry])

    def extend(self, entries: Sequence[dict[str, Any]]) -> None:
        """Store several entries in one write."""
        if not entries:
            return
        lines = [_line(entry) for entry in entries]
        self.store.apply(self.user, Changes(journal={self.record.id: lines}))
        self.record = self.record.model_copy(update={"journal": [*self.record.journal, *lines]})
        self.entries += entries

    def restart(self, entry: dict[str, Any]) -> None:
        """Discard what is journaled and start again with ``entry``."""
        line = _line(entry)
        self.record = self.record.evolve(journal=[line])
        self.store.apply(self.user, Changes(conversations=[self.record]))
        self.entries = [entry]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [entry for entry in self.entries if entry["t"] == kind]

    @property
    def ended(self) -> bool:
        return bool(self.of("end"))


@dataclass
class Extraction:
    """What the journal holds so far, as validated arguments."""

    entities: list[AddEntity] = field(default_factory=list)
    relations: list[AddRelation] = field(default_factory=list)
    finish: Finish | None = None
    notes: list[str] = field(default_factory=list)


def collected(journal: Journal) -> Extraction:
    out = Extraction()
    for entry in journal.of("result"):
        if entry["args"] is None:
            # Refused at once (the model was told why and may have fixed it): noted.
            out.notes.append(f"{entry['name']} refused: {entry['text']}")
            continue
        if entry["name"] == "add_entity":
            out.entities.append(AddEntity.model_validate(entry["args"]))
        elif entry["name"] == "add_relation":
            out.relations.append(AddRelation.model_validate(entry["args"]))
        elif entry["name"] == "finish":
            out.finish = Finish.model_validate(entry["args"])
    out.notes += [f"extraction {e['reason']}" for e in journal.of("end") if e["reason"] != "finish"]
    return out


def _problems(exc: pydantic.ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: "
        f"{err['msg'].removeprefix('Value error, ')}"
        for err in exc.errors()
    )


class Extractor:
    """Runs (or resumes) one segment's extraction against the journal."""

    def __init__(
        self,
        llm: LLM,
        journal: Journal,
        known: Callable[[str], list[Node]],
        progress: Callable[[str], None] = lambda _: None,
        use_tools: bool = True,
    ) -> None:
        self.llm, self.journal, self.known = llm, journal, known
        self.progress, self.use_tools = progress, use_tools

    # --- tool handling -------------------------------------------------------------
    def _entity_names(self, pending: Sequence[dict[str, Any]] = ()) -> set[str]:
        names: set[str] = set()
        for entry in [*self.journal.of("result"), *pending]:
            if entry["name"] == "add_entity" and entry["args"]:
                args = entry["args"]
                names |= {n.casefold() for n in [args["name"], *args.get("aliases", [])]}
        return names

    def handle(
        self, call: ToolCall, pending: Sequence[dict[str, Any]] = ()
    ) -> tuple[str, dict[str, Any] | None]:
        """The tool result text, and the validated arguments to keep (None if refused);
        ``pending`` holds this reply's results not stored yet."""
        model = ARGUMENTS.get(call.name)
        if model is None:
            return f"error: unknown tool {call.name!r}; use {', '.join(ARGUMENTS)}.", None
        try:
            raw = json.loads(call.arguments or "{}")
            args = model.model_validate(raw)
        except json.JSONDecodeError as exc:
            return f"error: the arguments are not valid JSON ({exc.msg}); nothing stored.", None
        except pydantic.ValidationError as exc:
            return f"error: {_problems(exc)}. Nothing stored; fix and call again.", None
        if isinstance(args, AddEntity):
            entity, notes = clean_entity(args)
            text = f"stored entity {entity.name!r} ({entity.kind.value})."
            same = [n for n in self.known(entity.name) if n.kind == entity.kind]
            if same:
                text += " It matches the known " + ", ".join(f"{n.id} {n.name!r}" for n in same)
                text += "; the memory will decide on merging."
            return " ".join([text, *notes]), args.model_dump()
        if isinstance(args, AddRelation):
            relation, notes = clean_relation(args)
            if relation is None:
                return "not stored: " + " ".join(notes) + " Fix and call again.", None
            text = f"stored {relation.source} -{relation.relation}-> {relation.target}."
            names = self._entity_names(pending)
            for end in (relation.source, relation.target):
                if not (is_placeholder(end) or end.casefold() in names or self.known(end)):
                    text += f" {end!r} is not a known entity yet: describe it with add_entity."
            return " ".join([text, *notes]), args.model_dump()
        return "finished.", args.model_dump()

    def _handle_pending(self, reply: Reply) -> None:
        # A reply's results are stored together, in one write: handling a call only
        # reads, so a run cut off before that write handles the same calls again.
        done = {entry["id"] for entry in self.journal.of("result")}
        stored = len(done)
        results: list[dict[str, Any]] = []
        for call in reply.tool_calls:
            if call.id in done:
                continue
            if stored + len(results) >= MAX_CALLS:
                text, args = f"not stored: the limit of {MAX_CALLS} calls is reached.", None
            else:
                text, args = self.handle(call, results)
            results.append(
                {"t": "result", "id": call.id, "name": call.name, "text": text, "args": args}
            )
        self.journal.extend(results)

    # --- the loop ---------------------------------------------------------------------
    def messages(self, opening: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The chat so far, rebuilt from the journal."""
        messages = list(opening)
        for entry in self.journal.entries:
            if entry["t"] == "reply":
                messages.append(Reply.from_json(entry).as_message())
            elif entry["t"] == "result":
                messages.append(
                    {"role": "tool", "tool_call_id": entry["id"], "content": entry["text"]}
                )
            elif entry["t"] == "nudge":
                messages.append({"role": "user", "content": entry["text"]})
        return messages

    def run(self, user_message: str) -> Extraction:
        journal = self.journal
        for entry in journal.of("reply"):  # a run killed between a reply and its results
            self._handle_pending(Reply.from_json(entry))
        while not journal.ended:
            results = journal.of("result")
            answered_json = any(r["id"].startswith(JSON_CALL) for r in results)
            if answered_json or any(r["name"] == "finish" and r["args"] for r in results):
                journal.append({"t": "end", "reason": "finish"})
            elif len(results) >= MAX_CALLS:
                journal.append({"t": "end", "reason": f"stopped at the limit of {MAX_CALLS} calls"})
            elif len(journal.of("reply")) >= MAX_ROUNDS:
                journal.append({"t": "end", "reason": f"stopped after {MAX_ROUNDS} replies"})
            elif not self.use_tools:
                self._json_round(user_message)
            else:
                self._tool_round(user_message)
        return collected(journal)

    def _tool_round(self, user_message: str) -> None:
        journal = self.journal
        opening = [
            {"role": "system", "content": extract_prompt()},
            {"role": "user", "content": user_message},
        ]
        self.progress(f"asking the model (reply {len(journal.of('reply')) + 1})")
        try:
            reply = self.llm.chat(self.messages(opening), tools=TOOLS)
        except LLMError as exc:
            if isinstance(exc, LLMRequestError) and "tool" in str(exc).lower() \
                    and not journal.of("reply"):  # fmt: skip
                self.progress("the model takes no tools: asking for JSON instead")
                self.use_tools = False
                return
            raise
        journal.append({"t": "reply", **reply.to_json()})
        if reply.tool_calls:
            self._handle_pending(reply)
        elif journal.entries[-2]["t"] == "nudge":
            journal.append({"t": "end", "reason": "stopped: the model never called finish"})
        else:
            journal.append({"t": "nudge", "text": NUDGE})

    def _json_round(self, user_message: str) -> None:
        """Models without tool calling: one JSON answer, turned into the same calls."""
        messages = [
            {"role": "system", "content": extract_prompt(json_fallback=True)},
            {"role": "user", "content": user_message},
        ]
        self.progress("asking the model for JSON")
        for _ in range(JSON_TRIES):
            reply = self.llm.chat(messages, json_mode=True)
            calls = calls_from_json(reply.content)
            if calls is not None:
                break
            messages += [reply.as_message(),
                         {"role": "user", "content": "That was not one valid JSON object. "
                          "Answer with the JSON object only."}]  # fmt: skip
        else:
            raise LLMError(f"{self.llm.config.base_url} gave no usable JSON in {JSON_TRIES} tries")
        reply = Reply(content="", tool_calls=calls)
        self.journal.append({"t": "reply", **reply.to_json()})
        self._handle_pending(reply)


def calls_from_json(text: str) -> list[ToolCall] | None:
    """The JSON fallback's answer as tool calls, or None when it is not usable."""
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1] if start != -1 else text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    calls: list[ToolCall] = []
    for name, items in (
        ("add_entity", data.get("entities")),
        ("add_relation", data.get("relations")),
    ):
        for item in items if isinstance(items, list) else []:
            calls.append(
                ToolCall(f"{JSON_CALL}{len(calls)}", name, json.dumps(item, ensure_ascii=False))
            )
    finish = {k: data[k] for k in ("summary", "importance", "tags") if k in data}
    calls.append(
        ToolCall(f"{JSON_CALL}{len(calls)}", "finish", json.dumps(finish, ensure_ascii=False))
    )
    return calls

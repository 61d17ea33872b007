"""``pegasus chat``: talk to any OpenAI-compatible model with the memory in the loop."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from pegasus.cli.common import summary_lines
from pegasus.errors import LLMError, PegasusError

out = Console(highlight=False)
HELP = "/memory shows the last injected block, /why why each memory fired, /exit ends the chat."


def chat(
    ctx: typer.Context,
    conversation_id: Annotated[str | None, typer.Option(help="Id for this conversation.")] = None,
) -> None:
    """Chat with memory: each message is recalled into the system prompt; at the end the
    conversation is ingested and closed."""
    from pegasus.chat import ChatSession
    from pegasus.config import data_dir, load_settings
    from pegasus.llm import LLM, LLMConfig

    llm = LLM(LLMConfig.from_settings(load_settings()))
    try:
        memory = ctx.obj.memory
    except PegasusError as exc:  # the chat works without a memory, and says so
        memory, reason = None, str(exc)
    session = ChatSession(memory, llm, conversation_id, notice=lambda text: out.print(f"({text})"))
    if memory is None:
        session.failure = reason
    out.print(f"chatting with {llm.config.model}; {HELP}")
    while True:
        try:
            text = input("you> ").strip()
        except EOFError:
            break
        if not text:
            continue
        if text in ("/exit", "/quit"):
            break
        if text == "/memory":
            block = session.last.text if session.last else ""
            out.print(block or "(nothing was injected)")
            continue
        if text == "/why":
            for line in session.why():
                out.print(line)
            continue
        if text.startswith("/"):
            out.print(HELP)
            continue
        out.print("assistant> ", end="")
        try:
            for piece in session.say(text):
                out.print(piece, end="")
        except LLMError as exc:
            out.print(f"(no reply: {exc})", end="")
        out.print()
    if not session.turns:
        out.print("nothing to remember")
        return
    saved = session.save(data_dir() / "chats")
    with out.status("remembering this conversation..."):
        try:
            report = session.end()
        except PegasusError as exc:
            raise PegasusError(
                f"{exc} (the chat is kept in {saved}: pegasus ingest it later)"
            ) from exc
    if report is None:
        out.print(f"not remembered: the memory was unavailable; the chat is kept in {saved}")
        return
    for line in summary_lines(report):
        out.print(line)


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)

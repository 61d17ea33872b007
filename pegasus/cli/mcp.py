"""``pegasus mcp``: the MCP server (see :mod:`pegasus.integrations.mcp_server`)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer


def mcp(
    ctx: typer.Context,
    transport: Annotated[
        str, typer.Option(help="stdio (a client starts it) or http (streamable HTTP).")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="Address for --transport http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for --transport http.")] = 8766,
) -> None:
    """Serve this memory to an MCP client (tools: recall, remember, forget, show, stats).
    Uses the running memory service when there is one, else loads the model here once."""
    from pegasus.errors import ValidationError
    from pegasus.integrations.backend import Backend
    from pegasus.integrations.mcp_server import build_server
    from pegasus.model import DEFAULT_USER

    kinds: dict[str, Literal["stdio", "streamable-http"]] = {
        "stdio": "stdio", "http": "streamable-http"
    }  # fmt: skip
    if transport not in kinds:
        raise ValidationError(f"--transport {transport!r}: stdio or http")
    backend = Backend(ctx.obj.user or DEFAULT_USER, ctx.obj.store, ctx.obj.local)
    server = build_server(backend)
    try:
        if kinds[transport] == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
    finally:
        backend.close()


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)

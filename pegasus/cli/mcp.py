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
    Uses the running memory service when there is one, else loads the model here once.
    Over HTTP, only this machine's clients get in, as for `pegasus serve`: PEGASUS_TOKEN
    as a bearer token when it is set, and it must be set for a --host beyond it."""
    from pegasus.config import load_settings
    from pegasus.errors import ValidationError
    from pegasus.guard import check_exposure
    from pegasus.integrations.backend import Backend
    from pegasus.integrations.mcp_server import build_server, http_app
    from pegasus.model import DEFAULT_USER

    kinds: dict[str, Literal["stdio", "streamable-http"]] = {
        "stdio": "stdio", "http": "streamable-http"
    }  # fmt: skip
    if transport not in kinds:
        raise ValidationError(f"--transport {transport!r}: stdio or http")
    settings = load_settings()
    if transport == "http":
        check_exposure(host, settings.token, "the MCP server")
    backend = Backend(ctx.obj.user or DEFAULT_USER, ctx.obj.store, ctx.obj.local)
    server = build_server(backend)
    try:
        if kinds[transport] == "stdio":
            server.run("stdio")
        else:
            import uvicorn

            uvicorn.run(http_app(server, host, settings), host=host, port=port)
    finally:
        backend.close()


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)

"""The typer app: global options, error handling, and the command groups."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from pegasus.errors import PegasusError

if TYPE_CHECKING:
    from pegasus.memory import Memory

try:  # typer ships its own click (and its usage errors) in newer releases
    from typer import TyperException as UsageFailure
except ImportError:
    from click import ClickException as UsageFailure

app = typer.Typer(
    name="pegasus",
    help="Long-term memory for LLM assistants, kept as a knowledge graph.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err = Console(stderr=True)


@dataclass
class Context:
    """What every command gets: the global options and a memory opened on first use."""

    store: str | None = None
    user: str | None = None
    debug: bool = False
    local: bool = False
    _memory: Memory | None = field(default=None, repr=False)

    def service(self) -> str | None:
        """The running memory service to ask instead of opening the store here: one
        holding the store named, if any (``pegasus.client.service_for``), and none with
        --local."""
        if self.local:
            return None
        from pegasus.client import service_for

        return service_for(self.store)

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            from threadpoolctl import threadpool_limits

            from pegasus.memory import Memory

            # Recall searches on two threads of its own: numpy's products splitting
            # themselves across the same cores made a recall wait (as in the service).
            threadpool_limits(1, user_api="blas")
            self._memory = Memory.open(self.store, user=self.user)
        return self._memory

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"pegasus {version('pegasus-memory')}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            envvar="PEGASUS_STORE",
            help="sqlite:///path.db for the embedded store, bolt:// or neo4j:// for Neo4j.",
        ),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(envvar="PEGASUS_USER", help="Whose memory (default: 'default')."),
    ] = None,
    debug: Annotated[bool, typer.Option(help="Show a traceback on errors.")] = False,
    local: Annotated[
        bool, typer.Option(help="Work in this process even when a memory service runs.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    context = Context(store=store, user=user, debug=debug, local=local)
    ctx.obj = context
    ctx.call_on_close(context.close)


def _register() -> None:
    from pegasus.cli import (
        chat,
        demo,
        doctor,
        graph_io,
        hooks,
        ingest,
        inspect,
        jobs,
        mcp,
        recall,
        schedule,
        serve,
        view,
    )

    graph_io.register(app)
    ingest.register(app)
    recall.register(app)
    schedule.register(app)
    inspect.register(app)
    demo.register(app)
    chat.register(app)
    view.register(app)
    doctor.register(app)
    serve.register(app)
    jobs.register(app)
    mcp.register(app)
    hooks.register(app)


_register()


def main() -> None:
    """Entry point: every failure is one clear line and the exit code its error
    class names (see :mod:`pegasus.errors`)."""
    debug = "--debug" in sys.argv
    try:
        code = app(standalone_mode=False)
    except PegasusError as exc:
        if debug:
            raise
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    except UsageFailure as exc:  # usage errors, printed as click prints them
        show = getattr(exc, "show", None)
        # An empty message: the help asked for by no arguments, already printed.
        if show is not None and exc.format_message():
            show()
        sys.exit(exc.exit_code)
    except Exception as exc:
        if debug:
            raise
        err.print(f"[red]error:[/red] {type(exc).__name__}: {escape(str(exc))}", highlight=False)
        sys.exit(1)
    # Out of standalone mode typer returns the code of a typer.Exit (130 on Ctrl-C).
    if isinstance(code, int) and code:
        sys.exit(code)

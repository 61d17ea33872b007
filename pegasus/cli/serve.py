"""``pegasus serve``: the memory service (see :mod:`pegasus.service`)."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
from typing import Annotated

import typer
from filelock import FileLock, Timeout

from pegasus.client import store_key
from pegasus.errors import ConfigError
from pegasus.paths import DEFAULT_HOST, DEFAULT_PORT


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.")] = DEFAULT_PORT,
    decay: Annotated[
        bool, typer.Option(help="Run the daily decay pass (catch-up at start).")
    ] = True,
    at: Annotated[str, typer.Option(help="Time of day for the decay pass (HH:MM).")] = "03:00",
    timezone: Annotated[str, typer.Option(help="Time zone of --at.")] = "UTC",
) -> None:
    """Run the memory service: one process holding the store, the embedding model and the
    recall reference, answering a JSON HTTP API (OpenAPI at /docs). Only this
    machine's clients get in: requests need PEGASUS_TOKEN as a bearer token when it is
    set, and it must be set for a --host beyond this machine. Stops cleanly on SIGTERM
    or Ctrl-C."""
    import uvicorn
    from threadpoolctl import threadpool_limits

    from pegasus.config import load_settings, service_file
    from pegasus.guard import check_exposure
    from pegasus.memory import Pegasus
    from pegasus.paths import jobs_dir
    from pegasus.service import create_app
    from pegasus.time.scheduler import parse_clock, start_daily

    check_exposure(host, load_settings().token)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # Requests are served side by side, a thread each: numpy's products splitting
    # themselves across the same cores only made the requests wait on each other
    # (docs/assistants.md, "Recalls per second").
    threadpool_limits(1, user_api="blas")
    # One service per data folder, and the port ours, before anything is loaded or
    # written: a second start leaves the first one and its service.json as they are.
    lock = claim_data_folder()
    listener = bind(host, port)
    core = Pegasus(ctx.obj.store)
    store_url = core.settings.store_url()
    scheduler = start_daily(core.decay, parse_clock(at), timezone) if decay else None
    # The model loads before the service says where it is: a client that finds it
    # never waits for the first recall.
    app = create_app(core, token=core.settings.token, jobs_folder=jobs_dir(), host=host)
    discovery = service_file()
    address = f"[{host}]" if ":" in host else host  # an IPv6 address is bracketed in a URL
    discovery.write_text(json.dumps({"url": f"http://{address}:{port}", "pid": os.getpid(),
                                     "store": store_key(store_url)}))  # fmt: skip
    # uvicorn stops on SIGTERM/SIGINT and then raises the signal again to the handler
    # it found: a quiet one, so that the clean-up below runs and the exit is 0.
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, lambda *_: None)
    try:
        uvicorn.Server(uvicorn.Config(app, host=host, port=port)).run(sockets=[listener])
    finally:
        # An ingest under way is left to die with the process: its job file stays and
        # it resumes from its journal on the next start.
        app.state.ingests.stopping.set()
        discovery.unlink(missing_ok=True)
        if scheduler is not None:
            scheduler.shutdown(wait=True)
        if not app.state.ingests.busy:
            core.close()
        lock.release()  # last: a next service never meets this one's writes


def claim_data_folder() -> FileLock:
    """Held while the service runs; a second ``pegasus serve`` on the same data folder
    is refused, naming the first."""
    from pegasus.client import running_service
    from pegasus.paths import data_dir

    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / "service.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        first = running_service() or {}
        where = f" at {first['url']} (pid {first.get('pid')})" if first else ""
        raise ConfigError(f"a memory service already runs{where} on {folder}: stop it first, "
                          "or give this one its own data folder") from None  # fmt: skip
    return lock


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, or a clear error when the address is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    if os.name != "nt":  # as uvicorn does: a port left in TIME_WAIT can be taken again
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc} "
                          "(another program holds it? --port picks another)") from None  # fmt: skip
    listener.listen(2048)
    return listener


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)

"""A memory service running for real (uvicorn on a free port, in this process)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from pegasus.llm import LLM
from pegasus.memory import Pegasus
from pegasus.service import create_app
from tests.test_serve import free_port


@contextmanager
def running_service(
    core: Pegasus,
    llm: LLM | None = None,
    jobs_folder: Path | None = None,
    token: str | None = None,
) -> Iterator[str]:
    """The service's URL while it runs."""
    app = create_app(core, token=token, llm=llm, jobs_folder=jobs_folder)
    server = uvicorn.Server(uvicorn.Config(app, port=free_port(), log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.05)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def wait_for(check, seconds: float = 60.0) -> bool:
    for _ in range(int(seconds * 10)):
        if check():
            return True
        threading.Event().wait(0.1)
    return False

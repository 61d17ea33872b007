"""Recalls answered by helper processes (``pegasus serve --recall-workers N``).

One Python process runs Python on one core at a time, and a recall spends most of
its time in Python: at 100k edges, threads recalling in one process stopped at
about 55 a second on two cores however many there were, a fifth of the cores
idle; two processes answered 82 (docs/assistants.md, "Recalls per second"). Each
helper opens the service's store, loads the model and holds the owners' keys and
graphs as the service would (that memory once more for each), and recalls,
noting the claims a conversation was shown as a recall does; ingest, the decay
and every other call stay in the service."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from typing import Any

from pegasus.errors import StoreError
from pegasus.memory import Pegasus
from pegasus.recall.engine import RecallResult
from pegasus.recall.presets import RecallSettings
from pegasus.stores import deadline, within

log = logging.getLogger(__name__)

START_SECONDS = 600  # for every helper to open the store and load the model
_core: Pegasus | None = None  # a helper's own, opened when it starts
_all_warm: Any = None  # the barrier every helper meets once warm


def _start(store_url: str, started: Any) -> None:
    from threadpoolctl import threadpool_limits

    global _core, _all_warm
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the service, which stops us
    threading.Thread(target=_end_with, args=(os.getppid(),), daemon=True).start()
    threadpool_limits(1, user_api="blas")  # as in the service (pegasus/cli/serve.py)
    _core, _all_warm = Pegasus(store_url), started
    _core.warm()


def _end_with(service: int) -> None:
    """A service killed outright (out of memory, SIGKILL) never tells its helpers:
    they would wait for work for ever, holding their memory."""
    while os.getppid() == service:
        time.sleep(1)
    os._exit(0)


def _warm() -> None:
    _all_warm.wait(START_SECONDS)  # each helper runs one task at a time: all are warm


def _recall(
    user: str, message: str, conversation_id: str | None, now: datetime | None,
    settings: RecallSettings, waits: float | None,
) -> RecallResult:  # fmt: skip
    assert _core is not None, "started by _start"
    with within(waits):  # the request's deadline, as in the service
        return _core.for_user(user).recall(message, conversation_id, now, settings)


class RecallWorkers:
    """``count`` helper processes over the store at ``store_url``, started and warmed
    before the constructor returns. Safe to share between threads."""

    def __init__(self, store_url: str, count: int) -> None:
        self.store_url, self.count = store_url, count
        self._lock = threading.Lock()
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        # Spawned, not forked: the service's threads, model and store connections
        # must not be copied half-way through their work.
        spawn = multiprocessing.get_context("spawn")
        started = spawn.Barrier(self.count)
        pool = ProcessPoolExecutor(self.count, spawn, _start, (self.store_url, started))
        # Each task asked now starts a helper of its own, and waits until all are warm.
        try:
            for ready in [pool.submit(_warm) for _ in range(self.count)]:
                ready.result()
        except (BrokenProcessPool, threading.BrokenBarrierError) as exc:  # could not open the store
            pool.shutdown(wait=False, cancel_futures=True)
            raise StoreError(
                f"the recall workers could not start (their error is logged above): {exc}"
            ) from exc
        return pool

    def recall(
        self, user: str, message: str, conversation_id: str | None, now: datetime | None,
        settings: RecallSettings,
    ) -> RecallResult:  # fmt: skip
        pool = self._pool
        try:
            asked = pool.submit(_recall, user, message, conversation_id, now, settings, deadline())
            return asked.result()
        except BrokenProcessPool as exc:  # a helper died: this recall and those asked meanwhile
            with self._lock:
                if self._pool is pool:
                    log.warning("a recall worker stopped; starting them again")
                    self._pool = self._new_pool()
            raise StoreError("a recall worker stopped; they have been started again") from exc

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

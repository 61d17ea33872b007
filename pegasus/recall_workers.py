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
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime

from pegasus.errors import StoreError
from pegasus.memory import Pegasus
from pegasus.recall.engine import RecallResult
from pegasus.recall.presets import RecallSettings

log = logging.getLogger(__name__)

_core: Pegasus | None = None  # a helper's own, opened when it starts


def _start(store_url: str) -> None:
    from threadpoolctl import threadpool_limits

    global _core
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the service, which stops us
    threadpool_limits(1, user_api="blas")  # as in the service (pegasus/cli/serve.py)
    _core = Pegasus(store_url)
    _core.warm()


def _recall(
    user: str, message: str, conversation_id: str | None, now: datetime | None,
    settings: RecallSettings,
) -> RecallResult:  # fmt: skip
    assert _core is not None, "started by _start"
    return _core.for_user(user).recall(message, conversation_id, now, settings)


class RecallWorkers:
    """``count`` helper processes over the store at ``store_url``, started and warmed
    before the constructor returns. Safe to share between threads."""

    def __init__(self, store_url: str, count: int) -> None:
        self.store_url, self.count = store_url, count
        self._lock = threading.Lock()
        self._pool = self._started()

    def _started(self) -> ProcessPoolExecutor:
        # Spawned, not forked: the service's threads, model and store connections
        # must not be copied half-way through their work.
        pool = ProcessPoolExecutor(
            self.count, multiprocessing.get_context("spawn"), _start, (self.store_url,)
        )
        # Each task asked now starts a helper; each waits for its helper to be warm.
        try:
            for ready in [pool.submit(int) for _ in range(self.count)]:
                ready.result()
        except BrokenProcessPool as exc:  # a helper could not open the store or the model
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
            return pool.submit(_recall, user, message, conversation_id, now, settings).result()
        except BrokenProcessPool as exc:  # a helper died (killed, out of memory)
            with self._lock:
                if self._pool is pool:
                    log.warning("a recall worker stopped; starting them again")
                    self._pool = self._started()
            raise StoreError("a recall worker stopped; they have been started again") from exc

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

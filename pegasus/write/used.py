"""The edges a recall used, noted on their conversation after the answer went out.

A recall with a conversation id answers first; the note is a write, and a write may
wait (another process writing the SQLite file, a store that is down). So notes go to
a queue that one background thread writes, merged per conversation; a write the
store refuses for now (busy, down, a full disk) is kept and tried again. Reading a
conversation's used edges (closing, ingesting, forgetting or exporting it) first
writes what is pending: nothing noted is lost or reinforced late.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable

from pegasus.errors import StoreError
from pegasus.stores.base import Changes, Store, patience

log = logging.getLogger("pegasus.used")
FIRST_PAUSE, LONGEST_PAUSE = 0.5, 30.0  # seconds between tries while writes fail


class UsedNotes:
    """Pending notes, ``(user, conversation) -> edge ids``, written by a daemon thread
    started on the first note."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pending: dict[tuple[str, str], dict[str, None]] = {}
        self._flying: dict[tuple[str, str], dict[str, None]] = {}  # being written
        self._arrived = threading.Condition()
        self._writing = threading.Lock()  # one batch at a time, flush or thread
        self._thread: threading.Thread | None = None
        self._closed = False

    def note(self, user: str, conversation_id: str, edge_ids: Iterable[str]) -> None:
        with self._arrived:
            self._pending.setdefault((user, conversation_id), {}).update(dict.fromkeys(edge_ids))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="used-notes", daemon=True)
                self._thread.start()
            self._arrived.notify()

    @property
    def pending(self) -> int:
        """Conversations with notes not written yet."""
        with self._arrived:
            return len(self._pending.keys() | self._flying.keys())

    def flush(self) -> None:
        """Writes every pending note now, in this thread; a failure raises, the notes kept.
        Inside a request's deadline, a write under way elsewhere is waited for that long."""
        wait = patience(math.inf)
        if not self._writing.acquire(timeout=-1 if wait == math.inf else wait):
            raise StoreError("busy: the edges recall used are being noted; try again")
        try:
            self._flush()
        finally:
            self._writing.release()

    def _flush(self) -> None:
        with self._arrived:
            batch, self._pending = self._pending, {}
            self._flying = dict(batch)
        try:
            by_user: dict[str, dict[str, list[str]]] = {}
            for (user, conversation), edges in batch.items():
                by_user.setdefault(user, {})[conversation] = list(edges)
            for user, used in by_user.items():
                try:
                    self.store.apply(user, Changes(used=used))
                except StoreError:
                    raise  # the store may come back: kept for the next try
                except Exception:  # noqa: BLE001 (never writable: one owner's notes only)
                    log.exception("used edges of %s not noted, and dropped", user)
                for conversation in used:
                    del batch[(user, conversation)]
        except BaseException:
            with self._arrived:  # kept, and merged with what came meanwhile
                for key, edges in batch.items():
                    self._pending.setdefault(key, {}).update(edges)
            raise
        finally:
            with self._arrived:
                self._flying = {}

    def close(self) -> None:
        """Writes what is pending (a process's last recalls); logs what cannot be."""
        with self._arrived:
            self._closed = True
            self._arrived.notify()
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001 (a stop must go on; say what is lost)
            log.warning("used edges of %d conversations not noted: %s", self.pending, exc)

    def _run(self) -> None:
        pause = FIRST_PAUSE
        while True:
            with self._arrived:
                while not self._pending and not self._closed:
                    self._arrived.wait()
                if self._closed:
                    return
            try:
                self.flush()
                pause = FIRST_PAUSE
            except Exception as exc:  # noqa: BLE001 (kept; tried again after a pause)
                log.warning("noting used edges waits %.1f s: %s", pause, exc)
                with self._arrived:
                    self._arrived.wait_for(lambda: self._closed, timeout=pause)
                pause = min(pause * 2, LONGEST_PAUSE)

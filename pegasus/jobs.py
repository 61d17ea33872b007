"""The service's ingest queue: one job at a time on a background thread, each job a
file until it ends.

A job cut short by a stop (SIGTERM, a crash, a power cut) is still a file on the
next start, and runs again: ingest resumes from its journal, so the graph ends as
an uninterrupted run would have left it. Hook commands that find no service running
leave their transcripts here too (``pegasus.client.queue_ingest``)."""

from __future__ import annotations

import json
import logging
import queue
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from pegasus.client import ingest_job, queue_ingest
from pegasus.errors import LLMError, StoreError
from pegasus.llm import LLM
from pegasus.memory import Pegasus
from pegasus.write.pipeline import IngestReport
from pegasus.write.transcript import Transcript, parse_transcript

log = logging.getLogger("pegasus.jobs")
TRANSIENT = (StoreError, LLMError)  # worth another try on the next start
KEPT = 1000  # finished jobs whose status can still be asked for


class Job(BaseModel):
    id: str
    user: str
    conversation_id: str
    state: Literal["queued", "running", "done", "failed"] = "queued"
    report: IngestReport | None = None
    error: str | None = None
    resumed: bool = False  # queued before this service started


class IngestQueue:
    """Jobs kept in ``folder`` (None: in memory only) and run by one daemon thread, so a
    stop never waits for a model call to end."""

    def __init__(self, core: Pegasus, folder: Path | None, llm: LLM | None = None) -> None:
        self.core, self.folder, self.llm = core, folder, llm
        self.jobs: dict[str, Job] = {}
        self._waiting: queue.Queue[tuple[Job, Transcript, str | None]] = queue.Queue()
        self._lock = threading.Lock()
        self._running: Job | None = None
        self.stopping = threading.Event()  # set on shutdown: a job failing now is kept
        threading.Thread(target=self._work, name="ingest", daemon=True).start()

    @property
    def busy(self) -> bool:
        return self._running is not None or not self._waiting.empty()

    def submit(
        self,
        user: str,
        transcript: Any,
        conversation_id: str | None = None,
        now: datetime | None = None,
    ) -> Job:
        """Checks the transcript (a bad one raises ValidationError, nothing queued), keeps
        the job, and queues it."""
        parsed = parse_transcript(transcript, conversation_id)
        spec = ingest_job(user, transcript, parsed.id, now.isoformat() if now else None)
        if self.folder is not None:
            queue_ingest(spec, self.folder)
        return self._enqueue(spec, parsed, resumed=False)

    def resume(self) -> list[Job]:
        """Queues every job left in the folder, oldest first. A file that cannot be read
        is renamed ``*.unreadable`` and logged, never deleted."""
        if self.folder is None or not self.folder.is_dir():
            return []
        resumed = []
        for path in sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime):
            try:
                spec = json.loads(path.read_text(encoding="utf-8"))
                parsed = parse_transcript(spec["transcript"], spec.get("conversation_id"))
                resumed.append(self._enqueue(spec, parsed, resumed=True))
            except Exception as exc:  # noqa: BLE001 (whatever is wrong, the file is kept)
                path.rename(path.with_suffix(".unreadable"))
                log.error("ingest job %s cannot be read and is set aside: %s", path.name, exc)
        return resumed

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self.jobs.get(job_id)

    def _enqueue(self, spec: dict[str, Any], transcript: Transcript, resumed: bool) -> Job:
        job = Job(
            id=spec["id"],
            user=spec["user"],
            conversation_id=transcript.id,
            resumed=resumed,
        )
        with self._lock:
            self.jobs[job.id] = job
        self._waiting.put((job, transcript, spec.get("now")))
        return job

    def _work(self) -> None:
        while True:
            job, transcript, now = self._waiting.get()
            self._running, job.state = job, "running"
            keep = False
            try:
                memory = self.core.for_user(job.user)
                at = datetime.fromisoformat(now) if now else None
                job.report = memory.ingest(transcript, now=at, llm=self.llm)
                job.state = "done"
            except Exception as exc:  # noqa: BLE001 (the job says why; the queue goes on)
                keep = isinstance(exc, TRANSIENT) or self.stopping.is_set()
                job.state, job.error = "failed", str(exc) or type(exc).__name__
                if keep and self.folder is not None:
                    job.error += " (kept: it runs again on the next start)"
                log.error("ingest job %s failed: %s", job.id, job.error)
            finally:
                if self.folder is not None and not keep:
                    (self.folder / f"{job.id}.json").unlink(missing_ok=True)
                self._running = None
                self._forget_old()

    def _forget_old(self) -> None:
        with self._lock:
            finished = [i for i, j in self.jobs.items() if j.state in ("done", "failed")]
            for job_id in finished[: max(0, len(finished) - KEPT)]:
                del self.jobs[job_id]

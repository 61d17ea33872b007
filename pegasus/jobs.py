"""The service's ingest queue: one job at a time on a background thread, each job a
file until it is learned or dropped.

No session is lost on the way. A job that cannot run now (no language model
configured, the model or the store down) is *waiting*: its file stays, it says why,
and it is tried again with a growing pause while the service runs, and at the next
start. A job cut short by a stop (SIGTERM, a crash, a power cut) is still a file on
the next start and runs again: ingest resumes from its journal, so the graph ends as
an uninterrupted run would have left it. A job that fails for any other reason is
*failed*, its file kept until ``pegasus jobs retry`` or ``pegasus jobs drop``. Hook
commands and the opencode plugin that get no answer leave their transcripts here too
(``pegasus.client.queue_ingest``), taken in at the next start or within a second."""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from pegasus.client import ingest_job, queue_ingest
from pegasus.config import load_settings
from pegasus.errors import ConfigError, LLMError, NotFoundError, StoreError, ValidationError
from pegasus.llm import LLM, LLMConfig
from pegasus.memory import Pegasus
from pegasus.write.pipeline import IngestReport
from pegasus.write.transcript import Transcript, parse_transcript, within_limit

log = logging.getLogger("pegasus.jobs")
# Worth another try later: a setting put right, a model or a store back.
TEMPORARY = (StoreError, LLMError, ConfigError)
FIRST_PAUSE = 30.0  # seconds before the second try, doubling up to LONGEST_PAUSE
LONGEST_PAUSE = 1800.0
KEPT = 1000  # learned jobs whose status can still be asked for
NO_MODEL = "no language model configured: set PEGASUS_LLM_BASE_URL and PEGASUS_LLM_MODEL"

State = Literal["queued", "running", "waiting", "done", "failed"]


class Job(BaseModel):
    id: str
    user: str
    conversation_id: str
    state: State = "queued"
    report: IngestReport | None = None
    error: str | None = None  # why it failed
    waiting_for: str | None = None  # why it has not run yet; it runs again by itself
    tries: int = 0
    next_try: datetime | None = None  # when a waiting job runs again by itself
    resumed: bool = False  # found in the folder, not handed to this service


def _written(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # dropped meanwhile: read last, and then found gone
        return float("inf")


def pause_before(tries: int, first: float = FIRST_PAUSE) -> float:
    """Seconds to wait after the ``tries``-th failed try."""
    return min(first * 2 ** max(0, tries - 1), LONGEST_PAUSE)


class IngestQueue:
    """Jobs kept in ``folder`` (None: in memory only) and run by one daemon thread, so a
    stop never waits for a model call to end. ``first_pause`` sets the retry pace."""

    def __init__(
        self,
        core: Pegasus,
        folder: Path | None,
        llm: LLM | None = None,
        first_pause: float = FIRST_PAUSE,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.core, self.folder, self.llm = core, folder, llm
        self.first_pause, self.clock = first_pause, clock
        self.jobs: dict[str, Job] = {}
        self._specs: dict[str, dict[str, Any]] = {}  # kept jobs' files, as read
        self._waiting: queue.Queue[Job] = queue.Queue()
        self._lock = threading.Lock()
        self._running: Job | None = None
        # Set on shutdown: a job failing now is kept, and no other starts.
        self.stopping = threading.Event()
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
        the job, and queues it; with no model configured it waits from the start."""
        parsed = self._parsed(transcript, conversation_id)
        spec = ingest_job(user, transcript, parsed.id, now.isoformat() if now else None)
        job = Job(id=spec["id"], user=user, conversation_id=parsed.id)
        missing = self._model_missing()
        if missing:
            self._wait(job, missing, spec)
        else:
            self._keep(job, spec)
            self._waiting.put(job)
        return job

    def resume(self) -> list[Job]:
        """Takes up every job left in the folder, oldest first: failed ones stay failed
        (listed, for ``retry`` or ``drop``), the others are queued. A file that cannot be
        read is renamed ``*.unreadable`` and logged, never deleted."""
        if self.folder is None or not self.folder.is_dir():
            return []
        resumed = []
        for path in sorted(self.folder.glob("*.json"), key=_written):
            with self._lock:
                if path.stem in self.jobs:
                    continue
            try:
                spec = json.loads(path.read_text(encoding="utf-8"))
                parsed = self._parsed(spec["transcript"], spec.get("conversation_id"))
                status = spec.get("status") or {}
                job = Job(id=spec["id"], user=spec["user"], conversation_id=parsed.id,
                          resumed=True, tries=status.get("tries", 0))  # fmt: skip
                self._keep(job, spec, write=False)
                if status.get("state") == "failed":
                    job.state, job.error = "failed", status.get("error")
                else:
                    self._waiting.put(job)
                resumed.append(job)
            except Exception as exc:  # noqa: BLE001 (whatever is wrong, the file is kept)
                with contextlib.suppress(OSError):  # unless it was dropped meanwhile
                    path.rename(path.with_suffix(".unreadable"))
                log.error("ingest job %s cannot be read and is set aside: %s", path.name, exc)
        return resumed

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self.jobs.get(job_id)

    def listed(self, user: str | None = None) -> list[Job]:
        """Jobs not yet learned (and those learned lately), oldest first."""
        with self._lock:
            return [job for job in self.jobs.values() if user is None or job.user == user]

    def retry(self, job_id: str) -> Job:
        """A waiting or failed job, queued now."""
        with self._lock:
            job = self.jobs.get(job_id)
            if job is None:
                raise NotFoundError(f"no job {job_id!r}")
            if job.state not in ("waiting", "failed"):
                raise ValidationError(f"job {job_id} is {job.state}: only a waiting or "
                                      "failed job is retried")  # fmt: skip
            before = job.model_copy()
            job.state, job.next_try, job.waiting_for, job.error = "queued", None, None, None
            job.tries = 0
        try:
            self._write(job)
        except Exception:  # a full disk: the job stays as it was, for another retry
            with self._lock:
                for field in ("state", "next_try", "waiting_for", "error", "tries"):
                    setattr(job, field, getattr(before, field))
            raise
        self._waiting.put(job)
        return job

    def drop(self, job_id: str) -> Job:
        """Removes a job that is not running, and its file: its session is not learned."""
        with self._lock:
            job = self.jobs.get(job_id)
            if job is None:
                raise NotFoundError(f"no job {job_id!r}")
            if job.state == "running":
                raise ValidationError(f"job {job_id} is running: drop it once it stops")
            del self.jobs[job_id]
            self._specs.pop(job_id, None)
            if self.folder is not None:  # under the lock: never read back meanwhile
                (self.folder / f"{job_id}.json").unlink(missing_ok=True)
        return job

    def counts(self) -> dict[str, int]:
        with self._lock:
            jobs = list(self.jobs.values())
        return {state: sum(job.state == state for job in jobs)
                for state in ("queued", "running", "waiting", "failed")}  # fmt: skip

    def problems(self) -> list[str]:
        """Why sessions are not learned, each reason once."""
        with self._lock:
            reasons = [job.waiting_for or job.error for job in self.jobs.values()
                       if job.state in ("waiting", "failed")]  # fmt: skip
        return list(dict.fromkeys(reason for reason in reasons if reason))

    # --- inside -----------------------------------------------------------------
    def _parsed(self, transcript: Any, conversation_id: str | None) -> Transcript:
        """A transcript the write path takes: well formed, within the size limit."""
        parsed = parse_transcript(transcript, conversation_id)
        return within_limit(parsed, self.core.settings.max_transcript_chars)

    def _model_missing(self) -> str | None:
        if self.llm is not None:
            return None
        try:
            settings = load_settings()
        except ConfigError as exc:
            return str(exc)
        return None if settings.llm_base_url and settings.llm_model else NO_MODEL

    @staticmethod
    def _model() -> LLM:
        """The model as the settings name it now: one put right while the service
        runs is used from the next try on."""
        return LLM(LLMConfig.from_settings(load_settings()))

    def _keep(self, job: Job, spec: dict[str, Any], write: bool = True) -> None:
        """Takes the job in; one whose file cannot be written is not taken (the
        session is then refused, not lost silently)."""
        with self._lock:
            self.jobs[job.id] = job
            self._specs[job.id] = spec
        if write:
            try:
                self._write(job)
            except Exception:
                with self._lock:
                    self.jobs.pop(job.id, None)
                    self._specs.pop(job.id, None)
                raise

    def _write(self, job: Job) -> None:
        """The job's file, with its state, so that a later start or ``pegasus jobs``
        without the service knows it."""
        spec = self._specs.get(job.id)
        if self.folder is None or spec is None:
            return
        status = {"state": job.state, "error": job.error, "waiting_for": job.waiting_for,
                  "tries": job.tries}  # fmt: skip
        queue_ingest({**spec, "status": status}, self.folder)

    def _wait(self, job: Job, reason: str, spec: dict[str, Any] | None = None) -> None:
        """Waiting for ``reason`` to pass: tried again after a pause, for as long as
        it takes."""
        pause = pause_before(job.tries, self.first_pause)
        job.state, job.waiting_for, job.error = "waiting", reason, None
        job.next_try = self.clock() + timedelta(seconds=pause)
        if spec is not None:
            self._keep(job, spec)
        else:
            self._write(job)
        log.warning("ingest job %s waits %.0f s: %s", job.id, pause, reason)

    def _due(self) -> None:
        """Queues the waiting jobs whose pause is over, and the files a hook or the
        plugin left in the folder while no answer came from here."""
        self.resume()
        now = self.clock()
        with self._lock:
            due = [job for job in self.jobs.values()
                   if job.state == "waiting" and job.next_try and job.next_try <= now]  # fmt: skip
            for job in due:
                job.state, job.next_try = "queued", None  # waiting_for stays till it runs
        for job in due:
            self._waiting.put(job)

    def _work(self) -> None:
        while not self.stopping.is_set():
            try:
                with contextlib.suppress(queue.Empty):
                    self._run(self._waiting.get(timeout=1.0))
                self._due()
            except Exception:  # a job file that cannot be written: the next job still runs
                log.exception("the ingest queue could not keep a job's file up to date")

    def _run(self, job: Job) -> None:
        missing = self._model_missing()
        with self._lock:  # a drop takes the job whole, or not at all
            spec = self._specs.get(job.id)
            if spec is None or job.state != "queued":  # dropped, or queued twice
                return
            if not missing:
                self._running, job.state, job.waiting_for = job, "running", None
                job.tries += 1
        if missing:
            self._wait(job, missing)
            return
        try:
            transcript = self._parsed(spec["transcript"], spec.get("conversation_id"))
            memory = self.core.for_user(job.user)
            at = datetime.fromisoformat(spec["now"]) if spec.get("now") else None
            job.report = memory.ingest(transcript, now=at, llm=self.llm or self._model())
            job.state, job.error, job.waiting_for = "done", None, None
        except Exception as exc:  # noqa: BLE001 (the job says why; the queue goes on)
            reason = str(exc) or type(exc).__name__
            if isinstance(exc, TEMPORARY) or self.stopping.is_set():
                self._wait(job, reason)
            else:
                job.state, job.error = "failed", reason
                self._write(job)
                log.error("ingest job %s failed: %s", job.id, reason)
        finally:
            if job.state == "done":
                self._specs.pop(job.id, None)
                if self.folder is not None:
                    (self.folder / f"{job.id}.json").unlink(missing_ok=True)
            self._running = None
            self._forget_old()

    def _forget_old(self) -> None:
        with self._lock:
            learned = [i for i, j in self.jobs.items() if j.state == "done"]
            for job_id in learned[: max(0, len(learned) - KEPT)]:
                del self.jobs[job_id]

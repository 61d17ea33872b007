"""The daily decay daemon: a thin loop over apscheduler.

The pass is computed from ``strength0`` and ``touched_at``, so running it late or
twice changes nothing: catching up after downtime is simply running once at start.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable
from datetime import time as clock_time

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from pegasus.errors import ValidationError
from pegasus.time.decay import DecayReport

log = logging.getLogger("pegasus.scheduler")
STOP_POLL_SECONDS = 0.2


def parse_clock(value: str) -> clock_time:
    """'03:30' -> 03:30; raises ValidationError with the expected form."""
    try:
        return clock_time.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError(f"time of day {value!r} must look like 03:30") from exc


def start_daily(
    run_pass: Callable[[], DecayReport], at: clock_time, timezone: str = "UTC"
) -> BackgroundScheduler:
    """Run ``run_pass`` now (catch-up after downtime), then every day at ``at`` in a
    background thread; a failed pass is logged and the next one catches up."""
    try:
        scheduler = BackgroundScheduler(timezone=timezone)
    except (LookupError, ValueError) as exc:  # zoneinfo's: not a time zone it knows
        raise ValidationError(f"unknown time zone {timezone!r}") from exc

    def job() -> None:
        try:
            report = run_pass()
        except Exception:  # the daemon outlives one failed pass; the next one catches up
            log.exception("decay pass failed")
            return
        log.info(
            "decay pass: %d edges, %d dormant, %d expired", report.edges, report.dormant,
            report.expired,
        )  # fmt: skip

    scheduler.add_job(
        job,
        CronTrigger(hour=at.hour, minute=at.minute, timezone=timezone),
        id="decay",
        coalesce=True,
        misfire_grace_time=24 * 3600,
        max_instances=1,
    )
    log.info("catching up: one pass now, then daily at %s %s", at.strftime("%H:%M"), timezone)
    job()
    scheduler.start()
    return scheduler


def run_daily(run_pass: Callable[[], DecayReport], at: clock_time, timezone: str = "UTC") -> None:
    """:func:`start_daily`, then wait until SIGTERM/SIGINT."""
    received: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        # Only note it: a handler that raised or took a lock could leave one of the
        # scheduler's locks held (seen as a rare hang on SIGTERM).
        received.append(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    scheduler = start_daily(run_pass, at, timezone)
    while not received:
        time.sleep(STOP_POLL_SECONDS)
    log.info("stopping on signal %d", received[0])
    scheduler.shutdown(wait=True)  # a pass in progress finishes first
    log.info("stopped")

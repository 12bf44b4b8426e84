"""Scheduled jobs. `@app.schedule` handlers in AWS and the in-process scheduler of
`annals serve` both call exactly these functions, looked up by name in JOBS."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .extract import extract_session, pending_sessions
from .services import Services

log = logging.getLogger("annals.jobs")


@dataclass(frozen=True)
class JobResult:
    job: str
    sessions: int
    events: int
    detail: dict

    def as_dict(self) -> dict:
        return {"job": self.job, "sessions": self.sessions, "events": self.events,
                **self.detail}


def quiet_window(services: Services, now: datetime | None = None) -> JobResult:
    """Extract every session whose last message is at least `quiet_minutes` old."""
    now = now or services.clock()
    quiet = timedelta(minutes=services.settings.quiet_minutes)
    done, events = [], 0
    for state in pending_sessions(services):
        if state.last_message_at is None or now - state.last_message_at < quiet:
            continue
        written = extract_session(services, state.space, state.session, now)
        done.append(f"{state.space}/{state.session}")
        events += len(written)
    if done:
        log.info("quiet-window extracted %d events from %s", events, ", ".join(done))
    return JobResult("quiet-window", len(done), events, {"extracted": done})


JOBS: dict[str, Callable[[Services, datetime | None], JobResult]] = {
    "quiet-window": quiet_window,
}


def run_job(name: str, services: Services, now: datetime | None = None) -> JobResult:
    try:
        job = JOBS[name]
    except KeyError:
        raise KeyError(f"unknown job {name!r}; known: {', '.join(sorted(JOBS))}") from None
    return job(services, now)

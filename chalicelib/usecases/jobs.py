"""Background work as plain functions of (services, …):

- scheduled jobs (quiet-window, merge, cooldown): `@app.schedule` handlers in AWS and the
  in-process scheduler of `annals serve` both call them, looked up by name in JOBS;
- queued extraction jobs: the SQS worker (`handle_extract_batch`). Jobs are
  {"kind": "check-session" | "extract-session", "space", "session"}; a check extracts only
  when the session is ready. It returns the ids of the records that failed, so the Lambda
  reports a partial batch failure and only those are retried (then dead-lettered);
- background jobs (chalicelib.usecases.background, e.g. POST …/extract of a large backlog):
  {"kind": "run-job", "space", "job"}; the worker runs the job until the Lambda's time is
  nearly up, then sends the same message again for the rest.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from chalicelib.domain.models import Message, SessionState
from chalicelib.domain.records import JobFailure
from chalicelib.ports import Services
from chalicelib.usecases import background, forgetting
from chalicelib.usecases.extract import extract_session, journal, pending_sessions
from chalicelib.usecases.merge import merge_space, sessions_fingerprint
from chalicelib.usecases.reading import leased_sessions, read_with_upstream
from chalicelib.usecases.recall.recipes import resolve
from chalicelib.usecases.spaces import known_spaces

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


def count_reply_packs(messages: Sequence[Message]) -> int:
    """Completed reply packs (seed 004): user turn(s) answered by the assistant. A user
    message still waiting for its answer is not a pack yet."""
    packs, asked = 0, False
    for msg in messages:
        if msg.role == "user":
            asked = True
        elif msg.role == "assistant" and asked:
            packs, asked = packs + 1, False
    return packs


def session_readiness(services: Services, state: SessionState, now: datetime) -> str | None:
    """Why a session should be extracted now, or None to keep waiting. Ready when it has gone
    quiet with enough completed packs (or was edited), or has waited too long regardless."""
    settings = services.settings
    if state.pending_since and now - state.pending_since >= timedelta(
            hours=settings.max_wait_hours):
        return "max_wait"
    if state.last_message_at is None or now - state.last_message_at < timedelta(
            minutes=settings.quiet_minutes):
        return None
    if state.dirty_from is not None:
        return "edited"
    pending = services.store.get_messages(state.space, state.session,
                                          seq_from=state.extracted_upto + 1)
    if count_reply_packs(pending) >= settings.min_reply_packs:
        return "quiet"
    return None


QUARANTINE_AFTER = 3  # failures in a row before a unit is skipped until its state changes


def isolated(services: Services, job: str, space: str, unit: str, fingerprint: str,
             now: datetime, work: Callable[[], object], result: dict) -> object | None:
    """Run one unit of a job (a session, a space) so that its failure stays its own: the
    exception is logged with the space and cause, kept as a JobFailure record (shown by
    /stats), counted in `result["failed"]`, and the job goes on with the next unit. A unit
    that failed QUARANTINE_AFTER times in a row is skipped while its fingerprint is the same
    (new messages, an edit, … change it and it is tried again)."""
    record = services.store.get_record(JobFailure, job, unit)
    if record and record.quarantined and record.fingerprint == fingerprint:
        result.setdefault("quarantined", []).append(unit)
        return None
    try:
        out = work()
    except Exception as exc:
        cause = f"{type(exc).__name__}: {str(exc)[:300]}"
        log.exception("job %s failed for %s (space %s): %s", job, unit, space, cause)
        failures = (record.failures + 1) if record else 1
        services.store.put_record(JobFailure(
            scope=job, key=unit, space=space, error=cause, failures=failures,
            first_at=record.first_at if record else now, last_at=now, fingerprint=fingerprint,
            quarantined=failures >= QUARANTINE_AFTER))
        result.setdefault("failed", []).append(unit)
        return None
    if record is not None:
        services.store.delete_records(JobFailure, job, [unit])
    return out


def session_fingerprint(state: SessionState) -> str:
    return (f"{state.extracted_upto}|{state.message_count}|{state.dirty_from}|"
            f"{state.last_message_at}")


def quiet_window(services: Services, now: datetime | None = None) -> JobResult:
    """Extract every session that is ready (see session_readiness); sessions never combine,
    and one that fails is recorded and skipped, never holding the others back."""
    now = now or services.clock()
    done, reasons, detail, events = [], {}, {}, 0
    leased: dict[str, set[str]] = {}  # per space, read once a sweep: sessions out with a host
    for state in pending_sessions(services):
        key = f"{state.space}/{state.session}"

        def extract_if_ready(state: SessionState = state, key: str = key) -> int:
            reason = session_readiness(services, state, now)
            if reason is None:
                return 0
            if state.space not in leased:
                leased[state.space] = leased_sessions(services, state.space, now)
            if state.session in leased[state.space]:
                return 0  # a host is reading it (usecases.reading)
            done.append(key)
            reasons[key] = reason
            if services.queue is not None:  # AWS: the SQS worker extracts (retries, a DLQ)
                services.queue.send({"kind": "extract-session", "space": state.space,
                                     "session": state.session})
                return 0
            # ANNALS_GATEWAY_READS=on: the chats' own upstream model reads it first
            read = read_with_upstream(services, state, now) or 0
            return read + len(extract_session(services, state.space, state.session, now))

        events += isolated(services, "quiet-window", state.space, key,
                           session_fingerprint(state), now, extract_if_ready, detail) or 0
    if done:
        log.info("quiet-window extracted %d events from %s", events, ", ".join(done))
    return JobResult("quiet-window", len(done), events,
                     {"extracted": done, "reasons": reasons, **detail})


def cooldown(services: Services, now: datetime | None = None) -> JobResult:
    """Bookkeeping: purge deliveries older than every cooldown (DynamoDB's TTL does it there;
    its purge is a no-op), compact extraction journals past their retention, and let
    low-retention events fade into the archive (chalicelib.usecases.forgetting) — space by
    space, a failing space recorded and skipped."""
    now = now or services.clock()
    settings = services.settings
    recipe = resolve(settings.recipe, settings)
    keep = timedelta(minutes=recipe.cooldown_minutes) + timedelta(days=1)
    purged = services.store.purge_deliveries(now - keep)
    retention = timedelta(days=settings.journal_retention_days)
    by_space = sessions_by_space(services)
    compacted, faded, detail = 0, {}, {}
    for space, sessions in sorted(by_space.items()):
        def tend(space: str = space, sessions: list[SessionState] = sessions) -> tuple:
            count = sum(journal.compact(services, space, s.session, now, retention)
                        for s in sessions)
            return count, forgetting.fade_space(services, space, now)

        out = isolated(services, "cooldown", space, space, sessions_fingerprint(sessions), now,
                       tend, detail)
        if out:
            compacted += out[0]
            if out[1]:
                faded[space] = [e.id for e in out[1]]
    return JobResult("cooldown", 0, 0, {"purged_deliveries": purged,
                                        "compacted_journal_batches": compacted,
                                        "faded": faded, **detail})


def forget_space(services: Services, space: str, now: datetime | None = None) -> dict:
    """The cooldown job's work for one space, now (POST …/forget, the web app's "forget
    now"): compact its extraction journals past their retention and let low-retention events
    fade into the archive. A failure is the caller's answer, not a JobFailure record."""
    now = now or services.clock()
    retention = timedelta(days=services.settings.journal_retention_days)
    compacted = sum(journal.compact(services, space, s.session, now, retention)
                    for s in services.store.list_sessions(space))
    faded = forgetting.fade_space(services, space, now)
    return {"space": space, "faded": [e.id for e in faded],
            "compacted_journal_batches": compacted}


def sessions_by_space(services: Services) -> dict[str, list[SessionState]]:
    by_space: dict[str, list[SessionState]] = {}
    for state in services.store.list_sessions(None):
        by_space.setdefault(state.space, []).append(state)
    return by_space


def merge_job(services: Services, now: datetime | None = None) -> JobResult:
    """Every space with `merge_every` new events since its last merge (usecases.merge): the
    spaces with sessions and those whose events came another way (saved by hand, a graph
    import: usecases.spaces). A space is read only when its fingerprint moved: its sessions,
    and when such a write last added events."""
    now = now or services.clock()
    merged: dict[str, dict] = {}
    detail: dict = {}
    changes = 0
    by_space = sessions_by_space(services)
    known = known_spaces(services)
    for space in sorted({*by_space, *known}):
        fingerprint = sessions_fingerprint(by_space.get(space, []))
        if space in known and known[space].events_at is not None:
            fingerprint += f"|{known[space].events_at.isoformat()}"
        summary = isolated(services, "merge", space, space, fingerprint, now,
                           lambda space=space, fp=fingerprint: merge_space(
                               services, space, now, fingerprint=fp), detail)
        if summary and summary["merged"]:
            merged[space] = summary
            changes += summary["created"] + summary["updated"] + summary["superseded"]
    return JobResult("merge", 0, changes, {"spaces": merged, **detail})


JOBS: dict[str, Callable[[Services, datetime | None], JobResult]] = {
    "quiet-window": quiet_window,
    "merge": merge_job,  # after quiet-window, so a tick merges what it just extracted
    "cooldown": cooldown,
}


def run_job(name: str, services: Services, now: datetime | None = None) -> JobResult:
    try:
        job = JOBS[name]
    except KeyError:
        raise KeyError(f"unknown job {name!r}; known: {', '.join(sorted(JOBS))}") from None
    return job(services, now)


# ------------------------------------------------------------------ queued extraction jobs

JOB_KINDS = ("check-session", "extract-session", background.QUEUE_MESSAGE)
# A background job stops taking new steps this long before the Lambda's time is up: the
# step under way (one session) must finish inside it.
JOB_MARGIN_SECONDS = 20.0


@dataclass(frozen=True)
class QueueRecord:
    id: str  # SQS messageId
    body: str


def parse_job(body: str) -> dict:
    job = json.loads(body)
    if not isinstance(job, dict) or job.get("kind") not in JOB_KINDS:
        raise ValueError(f"not an extraction job: {body[:200]!r}")
    needs = ("space", "job") if job["kind"] == background.QUEUE_MESSAGE else ("space", "session")
    if not all(isinstance(job.get(k), str) and job[k] for k in needs):
        raise ValueError(f"a {job['kind']} job needs {' and '.join(needs)}")
    return job


def run_background_job(services: Services, job: dict) -> dict:
    """{"kind": "run-job"}: run the background job until it is done or `job["deadline"]`
    (epoch seconds) comes — one step at least, so every delivery gets somewhere — then queue
    the same message for the rest (a fresh message, so its own idempotency record). Safe to
    run twice: a finished job is left as it is."""
    deadline = job.get("deadline")
    should_stop = (lambda: time.time() >= deadline) if deadline else None
    ran = background.run(services, job["space"], job["job"], should_stop=should_stop,
                         min_steps=1)
    if ran is None:
        log.warning("no background job %s in space %s", job["job"], job["space"])
        return {"space": job["space"], "job": job["job"], "status": "missing"}
    if ran.status not in background.FINAL and services.queue is not None:
        services.queue.send({"kind": background.QUEUE_MESSAGE, "space": ran.space,
                             "job": ran.id})
    return {"space": ran.space, "job": ran.id, "status": ran.status,
            "done": ran.progress.done, "total": ran.progress.total}


def run_extract_job(services: Services, job: dict, now: datetime | None = None) -> dict:
    """One job. Safe to run twice: event ids are deterministic over their evidence."""
    if job["kind"] == background.QUEUE_MESSAGE:
        return run_background_job(services, job)
    now = now or services.clock()
    space, session = job["space"], job["session"]
    if job["kind"] == "check-session":
        state = services.store.get_session(space, session)
        if state is None or session_readiness(services, state, now) is None:
            return {"space": space, "session": session, "extracted": 0, "ready": False}
    events = extract_session(services, space, session, now)
    return {"space": space, "session": session, "extracted": len(events), "ready": True}


def handle_extract_batch(services: Services, records: Sequence[QueueRecord],
                         run: Callable[[dict], dict] | None = None,
                         remaining: Callable[[], float] | None = None) -> list[str]:
    """`run(job)` runs one job (default: run_extract_job; the Lambda wraps it in Powertools
    idempotency). `remaining()`: seconds the Lambda has left (a background job pauses
    JOB_MARGIN_SECONDS before). Returns the ids of the records that failed."""
    run = run or (lambda job: run_extract_job(services, job))
    failed: list[str] = []
    for record in records:
        try:
            job = parse_job(record.body)
        except ValueError as exc:  # a malformed job will never succeed: drop it, loudly
            log.error("dropping SQS message %s: %s", record.id, exc)
            continue
        job["message_id"] = record.id  # the idempotency key: SQS redelivers with the same id
        if job["kind"] == background.QUEUE_MESSAGE and remaining is not None:
            job["deadline"] = time.time() + remaining() - JOB_MARGIN_SECONDS
        try:
            result = run(job)
            log.info("extraction job done", extra={"job": job, "result": result})
        except Exception:
            log.exception("extraction job failed: %s", job)
            failed.append(record.id)
    return failed

"""Background jobs: long work a request hands off and a client follows (GET …/jobs/{id}) —
extracting a large backlog today; graph imports and bulk saves later. (The scheduled jobs,
quiet-window, merge and cooldown, are chalicelib.usecases.jobs.)

A job is a `Job` record (chalicelib.domain.records; scope = its space, key = "job_…"): its
kind, what was asked (`params`), where it stands (`status` queued → running → done | failed,
`progress`) and what came of it (`result`, or `error`). Each kind is a `JobKind` registered in
KINDS: `plan` says how much work there is when the job first starts, `run` does it a step at a
time through a `JobRun`, which writes the progress after every step and says when to stop.

Who runs a job: `submit` sends it to SQS on AWS ({"kind": "run-job", "space", "job"}: the
extract worker, chalicelib.usecases.jobs), and locally leaves a `JobTicket` for the worker of
`annals serve` (chalicelib.local.worker) and wakes it.

Fairness across spaces. Locally the worker takes turns: one step of a job, then a job of the
next space by name that has one queued (a space's own jobs in turn too), so a space's long
job (an extraction of thousands of messages) delays another space's job by one step per
other space queued, not by the whole job. On AWS nothing takes turns: the queue is a standard
SQS queue, read roughly in arrival order in batches of 10 by at most `queue_concurrency`
(3) workers at once (infra settings); a run-job message holds its worker until
JOB_MARGIN_SECONDS before the Lambda's 60 s end, then sends itself again, to the back of the
queue. So a long job holds one worker for about one Lambda run at a time, another space's
job waits for a free worker (while fewer long jobs run than there are workers, not at all),
and the messages behind it in its batch of 10 wait for that run, then get one step each.

`run` may be called again on the same job, at any time: a finished job is returned as it is;
one that stopped part-way (a Lambda's deadline, a server shutting down, a crash) goes on from
the first step it had not finished. Steps must be idempotent; extraction's are (deterministic
event ids, journalled batches). A job that starts MAX_ATTEMPTS times without finishing a step
fails, so a step that always crashes its worker cannot come back forever.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chalicelib.domain.errors import NotFound, TooManyRequests
from chalicelib.domain.models import Event, ExtractRequest, SessionState
from chalicelib.domain.records import (
    JOB_QUEUE_SCOPE,
    Job,
    JobProgress,
    JobStatus,
    JobTicket,
)
from chalicelib.ports import Services, iter_events
from chalicelib.usecases.extract import extract_session_result, pending_sessions

log = logging.getLogger("annals.background")

FINAL: tuple[JobStatus, ...] = ("done", "failed")
MAX_ATTEMPTS = 5  # starts without finishing a step before a job is failed
KEEP_FINISHED = 50  # finished jobs kept per space; older ones go when a new one is submitted
MAX_RESULT_IDS = 5000  # event ids a job's result lists (its progress counts them all)
QUEUE_MESSAGE = "run-job"  # the SQS message kind: {"kind": "run-job", "space", "job"}

Gate = Callable[[], AbstractContextManager[None]]


# ------------------------------------------------------------------ kinds


@dataclass
class JobRun:
    """What a kind's `run` works through: the job, a gate to take around each step (the local
    traffic gate: recalls first), and `step_done` to record a finished step (it writes the
    job, progress included). `should_stop()` true: return False (paused) before the next
    step — never before `min_steps` steps of this run, so a worker always gets somewhere,
    and always once `max_steps` are done (a worker's turn: the local worker takes one step
    of a job, then serves the next space's)."""

    services: Services
    job: Job
    gate: Gate
    stop: Callable[[], bool]
    on_progress: Callable[[Job], None] | None = None
    min_steps: int = 0
    steps: int = 0
    max_steps: int | None = None

    def should_stop(self) -> bool:
        if self.max_steps is not None and self.steps >= self.max_steps:
            return True
        return self.steps >= self.min_steps and self.stop()

    def step_done(self) -> None:
        self.steps += 1
        self.job.attempts = 0
        save(self.services, self.job)
        if self.on_progress is not None:
            self.on_progress(self.job)


@dataclass(frozen=True)
class JobKind:
    name: str
    unit: str  # what progress counts
    plan: Callable[[Services, Job], None]  # set job.state (the steps) and progress.total
    run: Callable[[JobRun], bool]  # True: finished; False: paused (should_stop)
    estimate: Callable[[Services, str, dict[str, Any]], int] | None = None  # total, at submit


KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    KINDS[kind.name] = kind
    return kind


# ------------------------------------------------------------------ records


_last_ms = 0
_id_lock = threading.Lock()


def new_job_id(now: datetime) -> str:
    """"job_" + milliseconds (hex, fixed width; in this process never the same twice) +
    random: ids sort in the order the jobs were made."""
    global _last_ms
    with _id_lock:
        _last_ms = max(int(now.timestamp() * 1000), _last_ms + 1)
        ms = _last_ms
    return f"job_{ms:012x}{secrets.token_hex(4)}"


def save(services: Services, job: Job) -> None:
    job.updated_at = services.clock()
    services.store.put_record(job)


def get_job(services: Services, space: str, job_id: str) -> Job:
    job = services.store.get_record(Job, space, job_id)
    if job is None:
        raise NotFound(f"no job {job_id!r} in space {space!r}", code="not_found")
    return job


def list_jobs(services: Services, space: str, *, limit: int = 20,
              status: JobStatus | None = None, kind: str | None = None) -> list[Job]:
    """The space's jobs, newest first."""
    jobs = [j for j in reversed(services.store.list_records(Job, space))
            if (status is None or j.status == status) and (kind is None or j.kind == kind)]
    return jobs[:limit]


def submit(services: Services, space: str, kind: str, params: dict[str, Any] | None = None, *,
           dispatch: bool = True, reuse: bool = False) -> Job:
    """A new queued job of `kind`, handed to whoever runs jobs here (SQS on AWS, the local
    worker's queue otherwise) unless `dispatch` is False (the caller runs it: `run_here`).
    `reuse`: a job of the same kind and params that is queued and has not started yet is
    returned instead (it will see everything this one would)."""
    spec = KINDS[kind]
    params = dict(params or {})
    if reuse:
        for job in list_jobs(services, space, limit=KEEP_FINISHED, status="queued", kind=kind):
            if job.params == params and not job.state and job.started_at is None:
                return job
    check_room(services, space)
    now = services.clock()
    total = spec.estimate(services, space, params) if spec.estimate else 0
    job = Job(scope=space, key=new_job_id(now), kind=kind, params=params,
              progress=JobProgress(total=total, unit=spec.unit), created_at=now,
              updated_at=now)
    services.store.put_record(job)
    if dispatch:
        try:
            _dispatch(services, job)
        except Exception as exc:  # never left queued with no one to run it; the caller
            _finish(services, job, "failed",  # retries with a new one (a 503 when transient)
                    error=f"could not be queued: {type(exc).__name__}: {str(exc)[:300]}")
            raise
    prune(services, space)
    return job


def check_room(services: Services, space: str) -> None:
    """Queued work per space is bounded (ANNALS_LIMIT_SPACE_JOBS jobs queued or running):
    past it a new job is refused with 429, so one space cannot queue hours of work."""
    limit = services.settings.limit_space_jobs
    waiting = sum(1 for j in services.store.list_records(Job, space) if j.status not in FINAL)
    if waiting >= limit:
        raise TooManyRequests(f"space {space!r} has {waiting} background jobs queued or "
                              f"running, its limit (ANNALS_LIMIT_SPACE_JOBS={limit}); retry "
                              "when one has finished (GET …/jobs)", retry_after=30)


def _dispatch(services: Services, job: Job) -> None:
    if services.queue is not None:
        services.queue.send({"kind": QUEUE_MESSAGE, "space": job.space, "job": job.id})
        return
    services.store.put_record(JobTicket(scope=JOB_QUEUE_SCOPE, key=job.id, space=job.space))
    wake()


def prune(services: Services, space: str, keep: int = KEEP_FINISHED) -> int:
    """Delete the oldest finished jobs of the space beyond the newest `keep`."""
    finished = [j.key for j in services.store.list_records(Job, space) if j.status in FINAL]
    old = finished[:-keep] if keep else finished
    return services.store.delete_records(Job, space, old) if old else 0


# ------------------------------------------------------------------ running


def run(services: Services, space: str, job_id: str, *, gate: Gate | None = None,
        should_stop: Callable[[], bool] | None = None, min_steps: int = 0,
        max_steps: int | None = None,
        on_progress: Callable[[Job], None] | None = None) -> Job | None:
    """Run (or go on with) one job; the job as it ends: done, failed, or queued again when
    `should_stop` asked it to pause (asked between steps, after `min_steps` of them) or
    `max_steps` steps are done (a later run goes on from there). None: no such job. A
    failure of the work is the job's (status failed, `error`), never raised."""
    job = services.store.get_record(Job, space, job_id)
    if job is None or job.status in FINAL:
        return job
    spec = KINDS.get(job.kind)
    now = services.clock()
    job.attempts += 1
    if spec is None or job.attempts > MAX_ATTEMPTS:
        why = (f"unknown job kind {job.kind!r}" if spec is None else
               f"stopped {MAX_ATTEMPTS} times without finishing a step")
        return _finish(services, job, "failed", error=why)
    job.status = "running"
    job.started_at = job.started_at or now
    job.error = None
    try:
        if not job.state:
            spec.plan(services, job)
        save(services, job)
        if on_progress is not None:
            on_progress(job)
        finished = spec.run(JobRun(services, job, gate or nullcontext,
                                   should_stop or (lambda: False), on_progress, min_steps,
                                   max_steps=max_steps))
    except Exception as exc:
        cause = f"{type(exc).__name__}: {str(exc)[:500]}"
        log.exception("job %s (%s) of space %s failed: %s", job.id, job.kind, space, cause)
        return _finish(services, job, "failed", error=cause, on_progress=on_progress)
    if not finished:  # paused cleanly: a start that finished no step is not held against it
        job.status = "queued"
        job.attempts = max(0, job.attempts - 1)
        save(services, job)
        return job
    return _finish(services, job, "done", on_progress=on_progress)


def _finish(services: Services, job: Job, status: JobStatus, *, error: str | None = None,
            on_progress: Callable[[Job], None] | None = None) -> Job:
    job.status = status
    job.error = error
    job.finished_at = services.clock()
    save(services, job)
    if on_progress is not None:
        on_progress(job)
    return job


def run_here(services: Services, space: str, kind: str, params: dict[str, Any] | None = None,
             on_progress: Callable[[Job], None] | None = None) -> Job:
    """Submit a job and run it in this process now (the CLI on the local data dir): the job is
    listed like any other, and no worker picks it up."""
    job = submit(services, space, kind, params, dispatch=False)
    done = run(services, space, job.id, on_progress=on_progress)
    assert done is not None
    return done


# ------------------------------------------------------------------ the local queue


def tickets(services: Services) -> list[JobTicket]:
    """The jobs waiting for the local worker, oldest first (it takes them in turns: one
    step of a job, then the next space's, chalicelib.local.worker)."""
    return services.store.list_records(JobTicket, JOB_QUEUE_SCOPE)


def drop_ticket(services: Services, ticket: JobTicket) -> None:
    services.store.delete_records(JobTicket, JOB_QUEUE_SCOPE, [ticket.key])


_listeners: list[Callable[[], None]] = []
_listeners_lock = threading.Lock()


@contextmanager
def listening(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` (from the submitting thread) whenever a job is queued in this
    process, for as long as the block runs: the local worker's wake-up."""
    with _listeners_lock:
        _listeners.append(callback)
    try:
        yield
    finally:
        with _listeners_lock:
            _listeners.remove(callback)


def wake() -> None:
    with _listeners_lock:
        callbacks = list(_listeners)
    for callback in callbacks:
        callback()


# ------------------------------------------------------------------ API shapes


class JobView(BaseModel):
    """A background job as the API shows it (GET …/jobs/{id})."""

    id: str = Field(description='"job_…"; ids sort in the order jobs were made')
    space: str
    kind: str = Field(description='what it does: "extract"')
    status: JobStatus = Field(description="queued → running → done | failed; a job paused "
                                          "part-way (a worker's deadline) is queued again")
    progress: JobProgress = Field(description="done of total units (extract: messages) and "
                                              "the events written so far")
    params: dict[str, Any] = Field(description="what was asked (extract: the session or null)")
    result: dict[str, Any] | None = Field(
        default=None, description='so far, then in the end (extract: {"events": [ids], '
                                  '"sessions": n, "drafts": {"repaired", "dropped"}})')
    error: str | None = Field(default=None, description="why it failed")
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    updated_at: datetime
    events: list[Event] | None = Field(
        default=None, description="with ?events=true: the events result.events names, in "
                                  "that order, as they are now")

    @classmethod
    def of(cls, job: Job, events: list[Event] | None = None) -> JobView:
        return cls(id=job.id, space=job.space, kind=job.kind, status=job.status,
                   progress=job.progress, params=job.params, result=job.result,
                   error=job.error, created_at=job.created_at, started_at=job.started_at,
                   finished_at=job.finished_at, updated_at=job.updated_at, events=events)


class JobList(BaseModel):
    jobs: list[JobView] = Field(description="newest first")


class JobListQuery(BaseModel):
    """Query string of GET …/jobs."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=KEEP_FINISHED)
    status: JobStatus | None = None
    kind: str | None = Field(default=None, max_length=64, pattern=r"^[a-z][a-z0-9-]*$")


class JobQuery(BaseModel):
    """Query string of GET …/jobs/{job_id}."""

    model_config = ConfigDict(extra="forbid")

    events: bool = Field(default=False, description="also return the events the job wrote")


def job_view(services: Services, space: str, job_id: str, *, events: bool = False) -> JobView:
    job = get_job(services, space, job_id)
    return JobView.of(job, job_events(services, job) if events else None)


def job_views(services: Services, space: str, query: JobListQuery) -> JobList:
    return JobList(jobs=[JobView.of(j) for j in list_jobs(
        services, space, limit=query.limit, status=query.status, kind=query.kind)])


def job_events(services: Services, job: Job) -> list[Event]:
    """The events the job's result names, in its order (those still stored)."""
    ids = list((job.result or {}).get("events") or [])
    found = {e.id: e for e in services.store.load_events(job.space, ids)}
    return [found[i] for i in ids if i in found]


# ------------------------------------------------------------------ extraction as a job


class ExtractJobRequest(ExtractRequest):
    """Body of POST …/extract."""

    wait: bool = Field(
        default=True,
        description="true: answer with the events (200) when at most "
                    "ANNALS_EXTRACT_SYNC_MAX_MESSAGES messages are pending (default 30), "
                    "else 202 with a job; false: always 202 with a job")


def pending_messages(services: Services, space: str, session: str | None = None, *,
                     stop_after: int | None = None) -> int:
    """Messages extraction would read now: of the named session, or of every pending one of
    the space. Counting stops once it passes `stop_after`."""
    return sum(count for _, count in _pending_plan(services, space, session, stop_after))


def _pending_plan(services: Services, space: str, session: str | None,
                  stop_after: int | None = None) -> list[tuple[str, int]]:
    """(session, pending messages) in the order run_extraction takes them."""
    if session:
        state = services.store.get_session(space, session)
        states = [state] if state is not None else []
        names = [session]
    else:
        states = pending_sessions(services, space)
        names = [s.session for s in states]
    counts = {}
    total = 0
    for state in states:
        counts[state.session] = _pending_in(services, state)
        total += counts[state.session]
        if stop_after is not None and total > stop_after:
            break
    return [(name, counts.get(name, 0)) for name in names]


def _pending_in(services: Services, state: SessionState) -> int:
    """The messages extract_session would read: from the first edited or not extracted seq.
    A session never extracted reads them all (seqs are ≥ 0): its count, without a query."""
    if not state.has_unread:
        return 0
    if state.extracted_upto < 0:
        return state.message_count
    return len(services.store.get_messages(state.space, state.session,
                                           seq_from=state.unread_from))


def extract_later(services: Services, space: str, session: str | None, *,
                  wait: bool = True) -> Job | None:
    """POST …/extract: None when the pending work is small enough to run in the request
    (at most `extract_sync_max_messages` messages of at most `extract_sync_max_chars`
    characters in all, and `wait`); else the job that will run
    it (a queued one of the same request if there is one)."""
    limit = services.settings.extract_sync_max_messages
    if (wait and pending_messages(services, space, session, stop_after=limit) <= limit
            and pending_chars(services, space, session)
            <= services.settings.extract_sync_max_chars):
        return None
    return submit(services, space, "extract", {"session": session}, reuse=True)


def pending_chars(services: Services, space: str, session: str | None) -> int:
    """The characters of the pending messages (asked only once they are few: at most
    `extract_sync_max_messages`): thirty 20,000-character messages are not a small job."""
    if session:
        state = services.store.get_session(space, session)
        states = [state] if state is not None else []
    else:
        states = pending_sessions(services, space)
    return sum(len(m.content) for state in states for m in _pending_of(services, state))


def _pending_of(services: Services, state: SessionState) -> list:
    if state.dirty_from is None and state.pending_since is None:
        return []
    start = 0 if state.extracted_upto < 0 else state.extracted_upto + 1
    if state.dirty_from is not None:
        start = min(start, state.dirty_from)
    return services.store.get_messages(state.space, state.session, seq_from=start)


def _extract_estimate(services: Services, space: str, params: dict[str, Any]) -> int:
    return pending_messages(services, space, params.get("session"))


def _extract_plan(services: Services, job: Job) -> None:
    """The sessions to extract, with their pending messages, counted when the job starts
    (messages PUT meanwhile count too)."""
    plan = _pending_plan(services, job.space, job.params.get("session"))
    job.state = {"sessions": [[name, count] for name, count in plan], "done": []}
    job.progress.total = sum(count for _, count in plan)
    job.result = {"events": [], "sessions": 0, "drafts": {"repaired": 0, "dropped": 0}}


def _extract_run(work: JobRun) -> bool:
    """One step per session, in the order run_extraction takes them, so the events are those
    a synchronous run writes (same ids, same text), and the draft checkpoint's counts summed
    as POST …/extract sums them. Progress moves per session: extract_session reads all of a
    session's pending messages in one batch (cutting it would change what the extractor
    sees)."""
    job = work.job
    done = set(job.state["done"])
    unfinished = job.state.get("current")  # a step an earlier run began and never finished
    result = job.result if job.result is not None else {"events": [], "sessions": 0}
    job.result = result
    for name, count in job.state["sessions"]:
        if name in done:
            continue
        if work.should_stop():
            return False
        job.state["current"] = name
        save(work.services, job)
        with work.gate():
            out = extract_session_result(work.services, job.space, name)
        events = out.events
        drafts = result.setdefault("drafts", {})
        for key, value in out.drafts.as_dict().items():
            drafts[key] = int(drafts.get(key, 0)) + value
        if name == unfinished and count and not events:
            # The earlier run finished the session but died before noting it: its events
            # are those citing the session written since the job started.
            events = _written_since(work.services, job, name)
        ids = result.setdefault("events", [])
        room = max(0, MAX_RESULT_IDS - len(ids))
        ids.extend(e.id for e in events[:room])
        if len(events) > room:
            result["events_truncated"] = True
        result["sessions"] = int(result.get("sessions", 0)) + 1
        job.state["done"].append(name)
        job.state["current"] = None
        done.add(name)
        job.progress.done += count
        job.progress.events += len(events)
        work.step_done()
    return True


def _written_since(services: Services, job: Job, session: str) -> list[Event]:
    since = job.started_at or job.created_at
    found = [e for e in iter_events(services.store, job.space)  # summaries are not returned
             if e.created_at >= since and e.kind != "summary"
             and any(s.session == session for s in e.sources)]
    return sorted(found, key=lambda e: (min(s.seq_start for s in e.sources
                                            if s.session == session), e.created_at))


EXTRACT = register(JobKind(name="extract", unit="messages", plan=_extract_plan,
                           run=_extract_run, estimate=_extract_estimate))

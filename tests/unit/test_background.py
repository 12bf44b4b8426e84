"""Background jobs (chalicelib.usecases.background): submit → run → done, progress written per
step, a failure recorded with its error, a job run twice or stopped part-way and run again
ending with the events a synchronous extraction writes; the local worker
(chalicelib.local.worker) and the SQS message kind "run-job" (chalicelib.usecases.jobs)."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager

import pytest

from chalicelib.domain.errors import NotFound
from chalicelib.domain.records import JOB_QUEUE_SCOPE, Job, JobTicket
from chalicelib.local.worker import JobWorker
from chalicelib.usecases import background, jobs
from chalicelib.usecases.extract import run_extraction
from tests.conftest import make_services
from tests.synthetic import conversation, fingerprint, put_all

SPACE = "sp"
CHAT = conversation(sessions=4, per_session=10)  # 40 messages in four sessions


@pytest.fixture
def chat(services):
    put_all(services, SPACE, CHAT)
    return services


def reference_events(tmp_path) -> list:
    """What a synchronous extraction of CHAT writes, in a store of its own."""
    other = make_services(tmp_path / "reference", store="memory")
    put_all(other, SPACE, CHAT)
    return run_extraction(other, SPACE)


def test_extract_job_runs_every_session_and_writes_progress(chat, tmp_path):
    job = background.submit(chat, SPACE, "extract", {"session": None}, dispatch=False)
    assert job.status == "queued" and job.id.startswith("job_")
    assert job.progress.total == 40 and job.progress.unit == "messages"
    seen = []
    done = background.run(chat, SPACE, job.id,
                          on_progress=lambda j: seen.append((j.status, j.progress.done)))
    assert done.status == "done" and done.error is None
    assert done.started_at and done.finished_at and done.finished_at >= done.started_at
    assert seen == [("running", 0), ("running", 10), ("running", 20), ("running", 30),
                    ("running", 40), ("done", 40)]  # once a session
    events = background.job_events(chat, done)
    assert fingerprint(events) == fingerprint(reference_events(tmp_path))
    assert done.progress.events == len(events) == len(done.result["events"])
    assert done.result["sessions"] == 4
    stored = chat.store.get_record(Job, SPACE, job.id)
    assert stored.status == "done" and stored.progress.done == 40


def test_a_finished_job_run_again_is_left_as_it_is(chat):
    job = background.submit(chat, SPACE, "extract", dispatch=False)
    first = background.run(chat, SPACE, job.id)
    again = background.run(chat, SPACE, job.id)
    assert again.model_dump() == first.model_dump()


def test_a_job_stopped_part_way_resumes_where_it_stopped(chat, tmp_path):
    job = background.submit(chat, SPACE, "extract", dispatch=False)
    steps = []
    paused = background.run(chat, SPACE, job.id, should_stop=lambda: steps[-2:] == [10, 20],
                            on_progress=lambda j: steps.append(j.progress.done))
    assert paused.status == "queued" and paused.progress.done == 20  # two sessions done
    assert paused.state["done"] == ["1", "2"] and paused.attempts == 0
    done = background.run(chat, SPACE, job.id)
    assert done.status == "done" and done.progress.done == 40
    assert fingerprint(background.job_events(chat, done)) == \
        fingerprint(reference_events(tmp_path))


def test_a_job_that_crashed_mid_step_is_run_again_and_ends_the_same(chat, tmp_path,
                                                                    monkeypatch):
    """A worker that died inside a session's extraction (the job stays "running"): the next
    run does that session again, resuming its journalled batch, and the job's events are
    those of one clean run, in the same order."""
    job = background.submit(chat, SPACE, "extract", dispatch=False)
    real = chat.store.mark_extracted
    marks = []

    def dies_before_marking_2(space, session, upto):
        marks.append(session)
        if session == "2" and marks.count("2") == 1:
            raise SystemExit("killed")
        return real(space, session, upto)

    monkeypatch.setattr(chat.store, "mark_extracted", dies_before_marking_2)
    with pytest.raises(SystemExit):
        background.run(chat, SPACE, job.id)
    crashed = chat.store.get_record(Job, SPACE, job.id)
    assert crashed.status == "running" and crashed.state["done"] == ["1"]
    assert crashed.state["current"] == "2"
    done = background.run(chat, SPACE, job.id)
    assert done.status == "done" and marks == ["1", "2", "2", "3", "4"]
    assert fingerprint(background.job_events(chat, done)) == \
        fingerprint(reference_events(tmp_path))


def test_a_job_that_died_right_after_a_step_still_lists_its_events(chat, tmp_path,
                                                                   monkeypatch):
    """Died after session 2 was extracted and marked, before the job noted it: the session
    has nothing pending any more, and its events are found by what they cite."""
    job = background.submit(chat, SPACE, "extract", dispatch=False)
    real = background.extract_session_result
    calls = []

    def dies_after_session_2(services, space, session, now=None):
        calls.append(session)
        events = real(services, space, session, now)
        if session == "2" and calls.count("2") == 1:
            raise SystemExit("killed")
        return events

    monkeypatch.setattr(background, "extract_session_result", dies_after_session_2)
    with pytest.raises(SystemExit):
        background.run(chat, SPACE, job.id)
    done = background.run(chat, SPACE, job.id)
    assert done.status == "done" and calls == ["1", "2", "2", "3", "4"]
    assert sorted(fingerprint(background.job_events(chat, done))) == \
        sorted(fingerprint(reference_events(tmp_path)))


def test_a_failure_is_recorded_with_its_error(chat, monkeypatch):
    def boom(services, space, session, now=None):
        raise RuntimeError(f"extractor broke on {session}")

    monkeypatch.setattr(background, "extract_session_result", boom)
    job = background.submit(chat, SPACE, "extract", dispatch=False)
    failed = background.run(chat, SPACE, job.id)
    assert failed.status == "failed" and failed.finished_at is not None
    assert failed.error == "RuntimeError: extractor broke on 1"
    assert chat.store.get_record(Job, SPACE, job.id).error == failed.error


def test_a_job_that_never_finishes_a_step_fails_after_max_attempts(chat, monkeypatch):
    def killed(services, space, session, now=None):
        raise SystemExit("the worker died")

    monkeypatch.setattr(background, "extract_session_result", killed)
    job = background.submit(chat, SPACE, "extract", dispatch=False)
    for _ in range(background.MAX_ATTEMPTS):
        with pytest.raises(SystemExit):
            background.run(chat, SPACE, job.id)
    given_up = background.run(chat, SPACE, job.id)
    assert given_up.status == "failed" and "without finishing a step" in given_up.error


def test_unknown_jobs_and_kinds(chat):
    assert background.run(chat, SPACE, "job_nope") is None
    with pytest.raises(NotFound):
        background.get_job(chat, SPACE, "job_nope")
    now = chat.clock()
    chat.store.put_record(Job(scope=SPACE, key="job_0", kind="gone", created_at=now,
                              updated_at=now))
    assert background.run(chat, SPACE, "job_0").error == "unknown job kind 'gone'"


def test_kinds_are_pluggable(services):
    seen = []

    def run(work):
        for step in work.job.state["steps"]:
            if step not in work.job.state["done"]:
                seen.append(step)
                work.job.state["done"].append(step)
                work.job.progress.done += 1
                work.step_done()
        work.job.result = {"ok": len(seen)}
        return True

    def plan(_services, job):
        job.state = {"steps": ["a", "b", "c"], "done": []}
        job.progress.total = 3

    kind = background.register(background.JobKind("count", "steps", plan, run))
    try:
        job = background.submit(services, SPACE, "count", dispatch=False)
        done = background.run(services, SPACE, job.id)
    finally:
        background.KINDS.pop(kind.name)
    assert done.status == "done" and done.result == {"ok": 3} and seen == ["a", "b", "c"]
    assert done.progress.model_dump() == {"done": 3, "total": 3, "unit": "steps", "events": 0}


def test_listing_is_newest_first_and_old_finished_jobs_are_pruned(chat):
    made = []
    for _ in range(background.KEEP_FINISHED + 5):
        job = background.submit(chat, SPACE, "extract", dispatch=False)
        background.run(chat, SPACE, job.id)
        made.append(job.id)
    kept = [j.id for j in background.list_jobs(chat, SPACE, limit=100)]
    assert len(kept) <= background.KEEP_FINISHED + 1
    assert kept == sorted(kept, reverse=True) and kept[0] == made[-1]
    assert made[0] not in kept


def test_a_queued_job_not_started_yet_is_reused(chat):
    first = background.submit(chat, SPACE, "extract", {"session": None}, reuse=True)
    again = background.submit(chat, SPACE, "extract", {"session": None}, reuse=True)
    other = background.submit(chat, SPACE, "extract", {"session": "1"}, reuse=True)
    assert again.id == first.id and other.id != first.id
    assert [t.key for t in background.tickets(chat)] == [first.id, other.id]


def test_job_ids_sort_in_the_order_made(services):
    now = services.clock()
    ids = [background.new_job_id(now) for _ in range(50)]  # the same millisecond
    assert ids == sorted(ids) and len(set(ids)) == 50


def test_extract_later_decides_by_the_pending_messages(chat):
    assert background.pending_messages(chat, SPACE) == 40
    assert background.pending_messages(chat, SPACE, "2") == 10
    assert background.pending_messages(chat, SPACE, "nope") == 0
    chat.settings = chat.settings.model_copy(update={"extract_sync_max_messages": 10})
    assert background.extract_later(chat, SPACE, "2") is None  # 10: in the request
    job = background.extract_later(chat, SPACE, None)
    assert job is not None and job.progress.total == 40
    assert background.extract_later(chat, SPACE, "3", wait=False) is not None


# ------------------------------------------------------------------ who runs them


class RecordingTraffic:
    def __init__(self):
        self.writes = 0

    @contextmanager
    def reading(self):
        yield

    @contextmanager
    def writing(self):
        self.writes += 1
        yield


def test_the_local_worker_runs_queued_jobs_a_step_at_a_time_at_the_gate(chat):
    traffic = RecordingTraffic()
    worker = JobWorker(chat, traffic, poll_seconds=30)
    job = background.submit(chat, SPACE, "extract")  # a ticket, and a wake-up
    assert [t.key for t in background.tickets(chat)] == [job.id]
    worker.start()
    try:
        for _ in range(1200):  # up to 60 s: the worker runs at nice 10, slow on a busy box
            if background.get_job(chat, SPACE, job.id).status == "done":
                break
            threading.Event().wait(0.05)
    finally:
        worker.stop()
    assert background.get_job(chat, SPACE, job.id).status == "done"
    assert traffic.writes == 4  # one writer's turn per session
    assert chat.store.list_records(JobTicket, JOB_QUEUE_SCOPE) == []


def test_a_stopped_worker_leaves_the_job_queued_for_the_next_start(chat):
    worker = JobWorker(chat)
    job = background.submit(chat, SPACE, "extract")
    worker._stop.set()  # stopping as the first step would begin
    assert worker.run_pending() == 0
    assert background.get_job(chat, SPACE, job.id).status == "queued"
    assert [t.key for t in background.tickets(chat)] == [job.id]
    assert JobWorker(chat).run_pending() == 1  # the next start
    assert background.get_job(chat, SPACE, job.id).status == "done"
    assert background.tickets(chat) == []


class FakeQueue:
    def __init__(self):
        self.sent: list[dict] = []

    def send(self, job: dict, delay_seconds: int = 0) -> None:
        self.sent.append(job)


def test_on_aws_submit_sends_run_job_and_the_worker_continues_past_its_deadline(chat,
                                                                                monkeypatch):
    """The SQS worker runs the job until JOB_MARGIN_SECONDS before the Lambda's end, then
    queues the same message again; the next delivery finishes it."""
    queue = FakeQueue()
    chat.queue = queue
    job = background.submit(chat, SPACE, "extract")
    assert queue.sent == [{"kind": "run-job", "space": SPACE, "job": job.id}]
    assert background.tickets(chat) == []  # SQS holds it, not the local queue
    clock = {"t": 1000.0}
    monkeypatch.setattr(jobs.time, "time", lambda: clock["t"])
    real = background.extract_session_result

    def slow(services, space, session, now=None):
        clock["t"] += 15  # each session takes 15 s of the Lambda's time
        return real(services, space, session, now)

    monkeypatch.setattr(background, "extract_session_result", slow)
    record = jobs.QueueRecord(id="m1", body=json.dumps(queue.sent.pop()))
    start = clock["t"]
    failed = jobs.handle_extract_batch(chat, [record],
                                       remaining=lambda: 60 - (clock["t"] - start))
    assert failed == []
    paused = background.get_job(chat, SPACE, job.id)
    assert paused.status == "queued" and paused.state["done"] == ["1", "2", "3"]
    assert queue.sent == [{"kind": "run-job", "space": SPACE, "job": job.id}]  # the rest
    again = jobs.QueueRecord(id="m2", body=json.dumps(queue.sent.pop()))
    assert jobs.handle_extract_batch(chat, [again], remaining=lambda: 60.0) == []
    assert background.get_job(chat, SPACE, job.id).status == "done" and queue.sent == []


def test_a_job_that_could_not_be_queued_is_failed_not_left_waiting(chat):
    class Down:
        def send(self, job, delay_seconds=0):
            raise ConnectionError("SQS is unreachable")

    chat.queue = Down()
    with pytest.raises(ConnectionError):
        background.submit(chat, SPACE, "extract", reuse=True)
    (job,) = background.list_jobs(chat, SPACE)
    assert job.status == "failed" and "SQS is unreachable" in job.error
    chat.queue = FakeQueue()
    again = background.submit(chat, SPACE, "extract", reuse=True)  # the retry: a new job
    assert again.id != job.id and chat.queue.sent[0]["job"] == again.id


def test_run_job_messages_are_checked(chat):
    with pytest.raises(ValueError, match="needs space and job"):
        jobs.parse_job(json.dumps({"kind": "run-job", "space": SPACE}))
    out = jobs.run_extract_job(chat, {"kind": "run-job", "space": SPACE, "job": "job_x"})
    assert out["status"] == "missing"

"""Fair queues (issue 23): the vector lane and the local job worker take work round-robin
across spaces, so one space's backlog never delays another space's new work by more than
about one batch (the lane) or one step per space queued (the worker)."""

from __future__ import annotations

import pytest

from chalicelib.domain.models import Message, MessageIn
from chalicelib.domain.records import JobFailure
from chalicelib.local.worker import JobWorker
from chalicelib.usecases import background
from chalicelib.usecases.indexing import OutboxIndexWriter
from tests.conftest import FixedClock, make_services
from tests.synthetic import conversation, put_all
from tests.unit.conftest import T0

# ------------------------------------------------------------------ the vector lane


@pytest.fixture
def lane(tmp_path):
    svc = make_services(tmp_path, index="background")
    svc.clock = FixedClock(T0)
    assert isinstance(svc.index, OutboxIndexWriter)
    return svc


def queue(services, space: str, n: int, session_size: int = 50) -> None:
    """`n` messages stored and queued in `space` (as another process leaves them)."""
    for start in range(0, n, session_size):
        session = f"s{start // session_size}"
        msgs = [Message.from_input(space, session, MessageIn(
            seq=i - start, role="user", speaker="Ana", content=f"note {i} of {space}", at=T0))
            for i in range(start, min(n, start + session_size))]
        services.store.upsert_messages(space, session, msgs, T0)


def vector_pending(services, space: str) -> int:
    return services.index.outbox.pending(space).vector_pending


def test_a_new_message_in_b_is_in_the_first_batch_beside_1000_queued_in_a(lane):
    queue(lane, "a", 1000)
    queue(lane, "b", 1)
    batch = lane.index.outbox.take("vector", 32)
    assert len(batch) == 32
    assert [e.space for e in batch].count("b") == 1
    a_ids = sorted(e.id for e in batch if e.space == "a")
    oldest = [e.id for e in lane.index.outbox.take("vector", 31, "a")]
    assert a_ids == oldest  # A's share is its oldest entries, in order
    assert lane.index.drain("vector") == 32
    assert vector_pending(lane, "b") == 0 and vector_pending(lane, "a") == 1000 - 31


def test_the_small_space_of_a_shared_batch_is_embedded_and_written_first(lane):
    """B's one message is findable once its own part is written, not after A's 31."""
    queue(lane, "a", 1000)
    queue(lane, "b", 1)
    outbox, order = lane.index.outbox, []
    done = outbox.done

    def noting(lane_name, ids):
        order.append(sorted({e.space for e in pending if e.id in set(ids)}))
        return done(lane_name, ids)

    pending = outbox.take("vector", 32)
    outbox.done = noting
    assert lane.index.drain("vector") == 32
    assert order == [["b"], ["a"]]


def test_a_batch_is_shared_evenly_and_what_a_space_lacks_goes_to_the_others(lane):
    queue(lane, "a", 100)
    queue(lane, "b", 100)
    queue(lane, "c", 3)
    spaces = [e.space for e in lane.index.outbox.take("vector", 32)]
    assert spaces[:3] == ["a", "b", "c"]  # round-robin: the oldest of each in turn
    assert spaces.count("c") == 3 and spaces.count("a") + spaces.count("b") == 29
    assert abs(spaces.count("a") - spaces.count("b")) <= 1


def test_the_lane_goes_round_when_more_spaces_wait_than_a_batch_holds(lane):
    lane.index.vector_batch = 8
    queue(lane, "a", 200)
    for i in range(40):
        queue(lane, f"b{i:02d}", 1)
    for _ in range(6):  # 41 spaces, 8 a batch: every one served within ⌈41 / 8⌉ batches
        assert lane.index.drain("vector") == 8
    assert all(vector_pending(lane, f"b{i:02d}") == 0 for i in range(40))
    assert vector_pending(lane, "a") == 200 - (48 - 40)


def test_a_space_queued_later_is_served_in_the_next_batch(lane):
    queue(lane, "a", 500)
    assert lane.index.drain("vector") == 32  # A alone: all of it A's
    queue(lane, "0-first-by-name", 1)  # sorts before "a", queued after
    queue(lane, "z-last-by-name", 1)
    lane.index.drain("vector")
    assert vector_pending(lane, "0-first-by-name") == 0
    assert vector_pending(lane, "z-last-by-name") == 0


def test_a_failing_entry_is_isolated_from_the_batch_that_failed(lane, monkeypatch):
    """The lane moves on only once a batch is indexed: `isolate` takes the same batch, so
    the bad entry is in it each time and is quarantined after three tries."""
    lane.index.vector_batch = 4
    for i in range(10):
        queue(lane, f"s{i}", 1)
    real = lane.embedder.embed_passages

    def fragile(texts):
        if any("of s5" in t for t in texts):
            raise RuntimeError("cannot embed this one")
        return real(texts)

    monkeypatch.setattr(lane.embedder, "embed_passages", fragile)
    for _ in range(10):  # what BackgroundIndexer does: a batch, or isolate after a failure
        try:
            if lane.index.drain("vector") == 0:
                break
        except RuntimeError:
            lane.index.isolate("vector", T0)
    assert lane.index.outbox.pending().vector_pending == 0
    failures = lane.store.list_records(JobFailure, "index")
    assert [f.key for f in failures] == ["s5/vector/message:s0:0"]
    assert all(lane.vectors.count(f"s{i}") == (0 if i == 5 else 1) for i in range(10))


def test_the_keyword_lane_still_drains_everything(lane):
    queue(lane, "a", 300)
    queue(lane, "b", 2)
    assert lane.index.drain_all("keyword") == 302
    assert lane.index.outbox.pending().keyword_pending == 0


# ------------------------------------------------------------------ the job worker


@pytest.fixture
def steps_kind():
    """A job kind of `n` steps that logs (space, job, step, how the other jobs stand)."""
    log: list[tuple] = []
    hooks: dict = {}

    def plan(_services, job):
        job.state = {"steps": job.params["n"], "done": 0}
        job.progress.total = job.params["n"]

    def run(work):
        job = work.job
        while job.state["done"] < job.state["steps"]:
            if work.should_stop():
                return False
            step = job.state["done"]
            log.append((job.space, job.params.get("name", job.space), step))
            if (hook := hooks.get((job.space, step))) is not None:
                hook()
            job.state["done"] += 1
            job.progress.done += 1
            work.step_done()
        return True

    kind = background.register(background.JobKind("steps", "steps", plan, run))
    yield log, hooks
    background.KINDS.pop(kind.name)


def test_the_worker_alternates_steps_between_two_spaces_jobs(services, steps_kind):
    log, _ = steps_kind
    a = background.submit(services, "a", "steps", {"n": 4})
    b = background.submit(services, "b", "steps", {"n": 3})
    assert JobWorker(services).run_pending() == 2
    assert log == [("a", "a", 0), ("b", "b", 0), ("a", "a", 1), ("b", "b", 1),
                   ("a", "a", 2), ("b", "b", 2), ("a", "a", 3)]
    assert all(background.get_job(services, s, j.id).status == "done"
               for s, j in (("a", a), ("b", b)))
    assert background.tickets(services) == []


def test_a_paused_job_stays_queued_and_goes_on_from_its_last_step(services, steps_kind):
    log, hooks = steps_kind
    a = background.submit(services, "a", "steps", {"n": 3})
    background.submit(services, "b", "steps", {"n": 2})
    seen = {}

    def look():  # during B's first step, A has had its first turn
        seen["a"] = background.get_job(services, "a", a.id)
        seen["tickets"] = [t.key for t in background.tickets(services)]

    hooks[("b", 0)] = look
    JobWorker(services).run_pending()
    assert seen["a"].status == "queued" and seen["a"].progress.done == 1
    assert seen["a"].state["done"] == 1 and a.id in seen["tickets"]
    assert [step for space, _, step in log if space == "a"] == [0, 1, 2]  # none twice


def test_a_job_alone_runs_on_until_another_space_queues_one(services, steps_kind):
    log, hooks = steps_kind
    background.submit(services, "a", "steps", {"n": 5})
    hooks[("a", 1)] = lambda: background.submit(services, "b", "steps", {"n": 2})
    assert JobWorker(services).run_pending() == 2
    # B, queued during A's step 1, has its turn right after that step
    assert log == [("a", "a", 0), ("a", "a", 1), ("b", "b", 0), ("a", "a", 2),
                   ("b", "b", 1), ("a", "a", 3), ("a", "a", 4)]


def test_a_spaces_own_jobs_take_turns_too(services, steps_kind):
    log, _ = steps_kind
    background.submit(services, "a", "steps", {"n": 2, "name": "first"})
    background.submit(services, "a", "steps", {"n": 2, "name": "second"})
    background.submit(services, "b", "steps", {"n": 2})
    JobWorker(services).run_pending()
    assert log == [("a", "first", 0), ("b", "b", 0), ("a", "second", 0), ("b", "b", 1),
                   ("a", "first", 1), ("a", "second", 1)]


def test_a_stopped_worker_takes_no_further_turn(services, steps_kind):
    log, hooks = steps_kind
    worker = JobWorker(services)
    a = background.submit(services, "a", "steps", {"n": 3})
    background.submit(services, "b", "steps", {"n": 3})
    hooks[("b", 0)] = worker._stop.set  # SIGTERM during B's first step
    assert worker.run_pending() == 0
    assert log == [("a", "a", 0), ("b", "b", 0)]  # the step under way finished
    assert len(background.tickets(services)) == 2
    assert background.get_job(services, "a", a.id).status == "queued"
    JobWorker(services).run_pending()  # the next start goes on from the next steps
    assert sorted(log[2:]) == [("a", "a", 1), ("a", "a", 2), ("b", "b", 1), ("b", "b", 2)]


def test_a_short_extraction_is_not_held_behind_a_long_one(services, monkeypatch):
    """Extraction jobs, one session a step: B's one-session job ends after A's first."""
    put_all(services, "a", conversation(sessions=4, per_session=10))
    put_all(services, "b", conversation(sessions=1, per_session=10, seed=3))
    steps: list[tuple[str, str]] = []
    real = background.extract_session_result

    def recorded(svc, space, session, now=None):
        steps.append((space, session))
        return real(svc, space, session, now)

    monkeypatch.setattr(background, "extract_session_result", recorded)
    long = background.submit(services, "a", "extract", {"session": None})
    short = background.submit(services, "b", "extract", {"session": None})
    assert JobWorker(services).run_pending() == 2
    assert steps == [("a", "1"), ("b", "1"), ("a", "2"), ("a", "3"), ("a", "4")]
    assert background.get_job(services, "a", long.id).progress.done == 40
    assert background.get_job(services, "b", short.id).status == "done"

"""chalicelib.usecases.jobs: the quiet-window extraction job, run_job, and the two ways it is scheduled
(the `@app.schedule` Lambda handler and the in-process scheduler of `annals serve`)."""

from __future__ import annotations

import threading
from datetime import UTC, timedelta

import pytest

from chalicelib.local.scheduler import Scheduler
from chalicelib.usecases import jobs
from tests.conftest import make_services
from tests.unit.conftest import SPACE, T0

CONVO = [  # two user turns to remember, then the companion's reply (context, no event)
    (0, "user", "小明", "我下周要去成都出差三天。"),
    (1, "user", "小明", "我家的猫奶糖被确诊了肾病，医生说要每天吃药。"),
    (2, "assistant", "Aki", "我家的狗上个月也做了手术，现在恢复得很好。"),
]
LAST = T0 + timedelta(minutes=2)  # the time of the last message in CONVO
QUIET = timedelta(minutes=20)  # the default quiet_minutes


@pytest.fixture(autouse=True)
def one_pack_is_enough(request):
    """Most tests here are about the quiet window itself: one reply pack is enough for them.
    TestReplyPacks runs with the default (5)."""
    if request.cls is not None and request.cls.__name__ == "TestReplyPacks":
        return
    if "services" in request.fixturenames:
        request.getfixturevalue("services").settings.min_reply_packs = 1


def all_events(services, space=SPACE):
    return services.store.list_events(space, statuses=("active", "archived", "superseded"),
                                      limit=500).events


class TestQuietWindow:
    def test_not_extracted_before_the_quiet_window(self, services, put):
        put("c1", CONVO)
        result = jobs.quiet_window(services, LAST + QUIET - timedelta(seconds=1))
        assert (result.sessions, result.events, result.detail) == (0, 0, {"extracted": [], "reasons": {}})
        assert all_events(services) == []
        assert services.store.get_session(SPACE, "c1").extracted_upto == -1

    def test_extracted_once_quiet_for_the_full_window(self, services, put):
        put("c1", CONVO)
        result = jobs.quiet_window(services, LAST + QUIET)
        assert result.as_dict() == {"job": "quiet-window", "sessions": 1, "events": 2,
                                    "extracted": [f"{SPACE}/c1"],
                                    "reasons": {f"{SPACE}/c1": "quiet"}}
        assert sorted(e.sources[0].seq_start for e in all_events(services) if e.kind == "event") == [0, 1]
        state = services.store.get_session(SPACE, "c1")
        assert (state.extracted_upto, state.pending_since) == (2, None)

    def test_running_twice_extracts_nothing_new(self, services, put):
        put("c1", CONVO)
        jobs.quiet_window(services, LAST + QUIET)
        before = all_events(services)
        again = jobs.quiet_window(services, LAST + QUIET + timedelta(hours=1))
        assert (again.sessions, again.events) == (0, 0)
        assert all_events(services) == before

    def test_only_new_messages_are_extracted_later(self, services, put):
        put("c1", CONVO)
        jobs.quiet_window(services, LAST + QUIET)
        later = T0 + timedelta(hours=2)
        put("c1", [(3, "user", "小明", "奶糖今天第一次自己吃完了药，胃口也好多了。"),
                   (4, "assistant", "Aki", "嗯嗯")], base=later - timedelta(minutes=5))
        assert jobs.quiet_window(services, later + timedelta(minutes=5)).events == 0
        result = jobs.quiet_window(services, later + QUIET)
        assert result.events == 1
        assert sorted(e.sources[0].seq_start for e in all_events(services) if e.kind == "event") == [0, 1, 3]

    def test_each_session_has_its_own_window(self, services, put):
        put("quiet", CONVO)
        put("busy", CONVO, base=T0 + timedelta(minutes=15))
        result = jobs.quiet_window(services, LAST + QUIET)
        assert result.detail["extracted"] == [f"{SPACE}/quiet"]
        assert services.store.get_session(SPACE, "busy").extracted_upto == -1

    def test_a_session_with_no_memories_is_still_marked_done(self, services, put):
        put("c1", [(0, "user", "小明", "你好呀"), (1, "assistant", "Aki", "你好")])
        result = jobs.quiet_window(services, T0 + timedelta(hours=1))
        assert (result.sessions, result.events) == (1, 0)
        assert jobs.quiet_window(services, T0 + timedelta(hours=2)).sessions == 0

    def test_an_edited_session_is_reextracted_when_quiet(self, services, put):
        put("c1", CONVO)
        jobs.quiet_window(services, LAST + QUIET)
        put("c1", [(1, "user", "小明", "我家的猫奶糖被确诊了胃炎，医生说要每天吃药。")])
        result = jobs.quiet_window(services, LAST + QUIET + timedelta(minutes=1))
        assert result.sessions == 1
        statuses = {e.summary: e.status for e in all_events(services)}
        assert statuses["小明家的猫奶糖被确诊了肾病，医生说要每天吃药。"] == "superseded"
        assert statuses["小明家的猫奶糖被确诊了胃炎，医生说要每天吃药。"] == "active"

    def test_quiet_minutes_is_a_setting(self, tmp_path):
        services = make_services(tmp_path, quiet_minutes=5, min_reply_packs=0)
        from chalicelib.domain.models import MessageIn, PutMessagesRequest
        from chalicelib.usecases import ingest

        ingest.put_messages(services, SPACE, "c1", PutMessagesRequest(messages=[
            MessageIn(seq=0, role="user", speaker="Mel", at=T0,
                      content="I adopted a puppy named Luna from the shelter.")]))
        assert jobs.quiet_window(services, T0 + timedelta(minutes=4)).sessions == 0
        assert jobs.quiet_window(services, T0 + timedelta(minutes=5)).sessions == 1

    def test_defaults_to_the_services_clock(self, services, put, clock):
        put("c1", CONVO)
        clock.now = LAST + QUIET - timedelta(minutes=1)
        assert jobs.quiet_window(services).sessions == 0
        clock.now = LAST + QUIET
        assert jobs.quiet_window(services).sessions == 1


def chat(packs: int, *, unanswered: int = 0) -> list[tuple]:
    """`packs` user→assistant exchanges, then `unanswered` user turns with no reply yet."""
    rows, seq = [], 0
    for i in range(packs):
        rows += [(seq, "user", "小明", f"第{i}件事：今天去了第{i}家店买东西。"),
                 (seq + 1, "assistant", "Aki", f"第{i}家店怎么样？")]
        seq += 2
    rows += [(seq + j, "user", "小明", f"还有一件事{j}，我决定明年去学游泳。")
             for j in range(unanswered)]
    return rows


class TestReplyPacks:
    """Seed 004: ≥ 5 completed packs and 20 quiet minutes, or the maximum wait."""

    def test_count_reply_packs(self, services, put):
        put("c1", chat(2, unanswered=3))
        msgs = services.store.get_messages(SPACE, "c1")
        assert jobs.count_reply_packs(msgs) == 2
        assert jobs.count_reply_packs([m for m in msgs if m.role == "user"]) == 0

    def test_four_packs_wait_five_go(self, services, put):
        put("few", chat(4, unanswered=4))  # unanswered user turns are not packs
        put("enough", chat(5))
        last = T0 + timedelta(minutes=30)
        result = jobs.quiet_window(services, last + QUIET)
        assert result.detail["extracted"] == [f"{SPACE}/enough"]
        assert services.store.get_session(SPACE, "few").extracted_upto == -1

    def test_max_wait_extracts_whatever_is_pending(self, services, put):
        put("few", chat(1))
        state = services.store.get_session(SPACE, "few")
        wait = timedelta(hours=services.settings.max_wait_hours)
        assert jobs.quiet_window(services, state.pending_since + wait
                                 - timedelta(seconds=1)).sessions == 0
        result = jobs.quiet_window(services, state.pending_since + wait)
        assert result.detail["reasons"] == {f"{SPACE}/few": "max_wait"}


class TestRunJob:
    def test_by_name(self, services, put):
        put("c1", CONVO)
        assert jobs.run_job("quiet-window", services, LAST + QUIET).events == 2

    def test_unknown_job(self, services):
        with pytest.raises(KeyError, match="unknown job 'nope'; known: cooldown, merge, quiet-window"):
            jobs.run_job("nope", services)


@pytest.fixture
def spy_job(monkeypatch):
    """Replace the quiet-window entry of JOBS with a recorder that still does the real work."""
    calls: list[tuple] = []
    real = jobs.JOBS["quiet-window"]

    def spy(services, now=None):
        calls.append((services, now))
        return real(services, now)

    monkeypatch.setitem(jobs.JOBS, "quiet-window", spy)
    return calls


def cw_event(client, time: str) -> dict:
    event = client.events.generate_cw_event(source="aws.events", detail_type="Scheduled Event",
                                            detail={}, resources=[])
    event["time"] = time
    return event


class TestSchedulers:
    def test_local_scheduler_and_lambda_handler_run_the_same_job_function(
            self, services, put, clock, client, spy_job):
        put("c1", CONVO)
        clock.now = LAST + QUIET
        tick = [r for r in Scheduler(services, interval_seconds=60).tick()
                if r["job"] == "quiet-window"]
        assert tick == [{"job": "quiet-window", "sessions": 1, "events": 2,
                         "extracted": [f"{SPACE}/c1"],
                                    "reasons": {f"{SPACE}/c1": "quiet"}}]

        scheduled = (LAST + QUIET + timedelta(minutes=5)).astimezone(UTC)
        invoked = client.lambda_.invoke(
            "quiet-window", cw_event(client, scheduled.strftime("%Y-%m-%dT%H:%M:%SZ")))
        assert invoked.payload == {"job": "quiet-window", "sessions": 0, "events": 0,
                                   "extracted": [], "reasons": {}}
        assert [c[0] for c in spy_job] == [services, services]
        assert spy_job[1][1] == scheduled  # the handler decides by EventBridge's time

    def test_lambda_handler_uses_the_scheduled_time_not_the_wall_clock(self, services, put,
                                                                        clock, client):
        put("c1", CONVO)
        clock.now = LAST + timedelta(days=1)  # the wall clock says "long quiet"
        early = (LAST + QUIET - timedelta(minutes=1)).astimezone(UTC)
        payload = client.lambda_.invoke(
            "quiet-window", cw_event(client, early.strftime("%Y-%m-%dT%H:%M:%SZ"))).payload
        assert payload["sessions"] == 0
        on_time = (LAST + QUIET).astimezone(UTC)
        payload = client.lambda_.invoke(
            "quiet-window", cw_event(client, on_time.strftime("%Y-%m-%dT%H:%M:%SZ"))).payload
        assert (payload["sessions"], payload["events"]) == (1, 2)

    def test_a_failing_job_does_not_stop_the_others(self, services, put, clock, monkeypatch):
        def broken(services, now=None):
            raise RuntimeError("boom")

        monkeypatch.setitem(jobs.JOBS, "broken", broken)
        put("c1", CONVO)
        clock.now = LAST + QUIET
        results = Scheduler(services, 60, jobs=["broken", "quiet-window"]).tick()
        assert [r["job"] for r in results] == ["quiet-window"]
        assert results[0]["events"] == 2

    def test_background_thread_reports_results(self, services, put, clock):
        put("c1", CONVO)
        clock.now = LAST + QUIET
        got: list[dict] = []
        done = threading.Event()

        def on_result(result):
            got.append(result)
            done.set()

        scheduler = Scheduler(services, interval_seconds=0.01, on_result=on_result)
        scheduler.start()
        try:
            assert done.wait(5)
        finally:
            scheduler.stop()
        assert got[0]["events"] == 2
        assert sum(r["events"] for r in got) == 2  # later ticks find nothing new

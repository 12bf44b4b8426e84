"""Poison data stays in its own space: out-of-range times are refused at the door, and a
space that still holds one (stored before times were checked) fails alone — the jobs extract
every other space, and /stats names the failing one."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.domain.models import Message
from chalicelib.usecases import jobs
from tests.conftest import AUTH

T0 = datetime(2026, 6, 15, 10, 0, tzinfo=UTC)
CHAT = [("user", "小明", "奶糖昨天进行了体检，结果一切正常"), ("assistant", "Aki", "太好了"),
        ("user", "小明", "我们下个月带它去打疫苗"), ("assistant", "Aki", "记得预约")]


def body(at: str) -> str:
    return json.dumps({"messages": [{"seq": 1, "role": "user", "content": "hi", "at": at}]})


@pytest.mark.parametrize("at", ["9999-12-31T23:59:59+00:00", "0001-01-01T00:00:00+14:00",
                                "1899-12-31T23:59:59+00:00", "2200-01-01T00:00:00+00:00"])
def test_times_outside_the_supported_range_are_refused(client, at):
    res = client.http.put("/v1/spaces/p/sessions/s/messages", headers=AUTH, body=body(at))
    assert res.status_code == 422 and json.loads(res.body)["error"]["code"] == "validation_error"


def test_relative_times_at_the_edges_of_the_range_never_fail(client):
    client.http.put("/v1/spaces/p/sessions/s/messages", headers=AUTH,
                    body=body("2026-06-01T10:00:00+00:00"))  # a space to recall in
    for now in ("1900-01-01T00:00:00+00:00", "2199-12-31T23:00:00+14:00"):
        res = client.http.post("/v1/spaces/p/recall", headers=AUTH, body=json.dumps(
            {"query": "我们明年和上个世纪去海边的事 next year, 3 days ago", "now": now}))
        assert res.status_code == 200, res.body


@pytest.fixture
def sqlite_client(sqlite_services):
    from chalice.test import Client

    from app import app
    from chalicelib.wiring import set_services

    set_services(sqlite_services)
    with Client(app) as c:
        yield c


def test_a_poisoned_space_fails_alone_and_is_named(sqlite_services, sqlite_client):
    services, client = sqlite_services, sqlite_client
    services.clock = lambda: T0 + timedelta(hours=1)
    real = services.extractor.extract

    def extract(messages, ctx):  # whatever goes wrong with one space's data
        if ctx.space == "poison":
            raise OverflowError("date value out of range")
        return real(messages, ctx)

    services.extractor.extract = extract
    for space in ("a", "b", "c", "poison"):
        msgs = [{"seq": i, "role": role, "speaker": who, "content": text,
                 "at": (T0 + timedelta(minutes=i)).isoformat()}
                for i, (role, who, text) in enumerate(CHAT)]
        assert client.http.put(f"/v1/spaces/{space}/sessions/s1/messages", headers=AUTH,
                               body=json.dumps({"messages": msgs})).status_code == 200
    # Stored directly, as data written before times were range-checked would be.
    poison = Message.model_construct(
        space="poison", session="s1", seq=0, role="user", speaker="x", content="boom",
        at=datetime(9999, 12, 31, 23, 59, tzinfo=UTC), content_hash="h")
    services.store.upsert_messages("poison", "s2", [poison], T0)

    result = jobs.run_job("quiet-window", services, T0 + timedelta(hours=7)).as_dict()
    assert sorted(result["extracted"]) == ["a/s1", "b/s1", "c/s1", "poison/s1"]  # s2: not due
    assert result["failed"] == ["poison/s1"] and result["events"] > 0
    for space in ("a", "b", "c"):
        assert services.store.list_events(space).events
    stats = json.loads(client.http.get("/v1/spaces/poison/stats", headers=AUTH).body)
    assert stats["failures"][0]["job"] == "quiet-window"
    assert stats["failures"][0]["unit"] == "poison/s1" and stats["failures"][0]["error"]

    # Retried on the next runs, then quarantined until the session changes.
    for _ in range(2):
        jobs.run_job("quiet-window", services, T0 + timedelta(hours=8))
    again = jobs.run_job("quiet-window", services, T0 + timedelta(hours=9)).as_dict()
    assert again.get("quarantined") == ["poison/s1"] and "failed" not in again
    for job in ("merge", "cooldown"):  # the other jobs go on for every space too
        assert jobs.run_job(job, services, T0 + timedelta(hours=9)).as_dict()
    recall = client.http.post("/v1/spaces/poison/recall", headers=AUTH,
                              body=json.dumps({"query": "boom"}))
    assert recall.status_code == 200

"""Issue 36: "春节我哪天回宜昌" asked on 2026-01-25 finds the plan for the coming 春节
(2026-02-17); the time path anchored on the one past (2025-01-29) and answered "forgot"."""

from __future__ import annotations

from tests.conftest import call

SP = "/v1/spaces/mei"


def test_a_plan_for_the_coming_holiday_is_found_when_asked_before_it(client):
    plan = call(client, "post", f"{SP}/events", status=201, body={
        "summary": "阿梅春节回宜昌，高铁票买好了", "happened_at": "2026-02-17T09:00:00+08:00"})
    call(client, "post", f"{SP}/events", status=201, body={
        "summary": "阿梅去年春节在宜昌吃了年夜饭", "happened_at": "2025-01-29T19:00:00+08:00"})
    answer = call(client, "post", f"{SP}/recall", {"query": "春节我哪天回宜昌",
                                                   "now": "2026-01-25T10:00:00+08:00"})
    assert answer["verdict"] == "hit"
    assert answer["cards"][0]["ref"] == f"event:{plan['id']}"

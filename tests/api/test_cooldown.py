"""Cooldown (seed 004): a card a window injected is skipped there for a while and never
replaced by a weaker one; other windows still see it."""

from __future__ import annotations

import json

from chalicelib.usecases.recall.recipes import HYBRID
from tests.conftest import AUTH

SP = "/v1/spaces/cool"
MSGS = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "奶糖体检的结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "小明", "content": "奶糖今天打了疫苗，体检前要空腹",
     "at": "2026-06-16T10:00:00+08:00"},
    {"seq": 3, "role": "user", "speaker": "小明", "content": "给奶糖买了新的猫爬架",
     "at": "2026-06-17T10:00:00+08:00"},
]


def recall(client, window, **extra):
    body = {"query": "奶糖体检", "max_cards": 2, **extra}
    if window:
        body["window"] = window
    resp = client.http.post(f"{SP}/recall", headers=AUTH, body=json.dumps(body))
    assert resp.status_code == 200, resp.body
    return json.loads(resp.body)


def deliver(client, window, ids, at=None):
    body = {"window": window, "ids": ids, **({"at": at} if at else {})}
    resp = client.http.post(f"{SP}/deliveries", headers=AUTH, body=json.dumps(body))
    assert resp.status_code == 201


def seed(client):
    client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH, body=json.dumps({"messages": MSGS}))
    client.http.post(f"{SP}/extract", headers=AUTH, body="{}")


def test_delivered_card_is_skipped_without_backfill_in_that_window_only(client):
    seed(client)
    first = recall(client, "w1")
    assert len(first["cards"]) == 2 and first["injected"] is False
    top = first["recalled_ids"][0]
    deliver(client, "w1", [top])

    second = recall(client, "w1")
    assert top not in second["recalled_ids"]
    assert second["recalled_ids"] == first["recalled_ids"][1:]  # no weaker card moved up
    assert any("冷却" in line for line in second["trace"])

    other = recall(client, "w2")
    assert other["recalled_ids"] == first["recalled_ids"]


def test_cooldown_ends_after_n_recalls(client, services):
    seed(client)
    top = recall(client, "w1")["recalled_ids"][0]
    deliver(client, "w1", [top])
    cooling = [top in recall(client, "w1")["recalled_ids"]
               for _ in range(HYBRID.cooldown_recalls + 1)]
    assert cooling == [False] * HYBRID.cooldown_recalls + [True]


def test_cooldown_ends_after_the_time_limit(client):
    seed(client)
    top = recall(client, "w1", now="2026-07-01T10:00:00+08:00")["recalled_ids"][0]
    deliver(client, "w1", [top], at="2026-07-01T10:00:00+08:00")
    soon = recall(client, "w1", now="2026-07-01T10:10:00+08:00")
    assert top not in soon["recalled_ids"]
    later = recall(client, "w1", now="2026-07-01T10:31:00+08:00")
    assert top in later["recalled_ids"]


def test_every_format_has_a_token_estimate_and_timeline_stars_key_events(client, services):
    seed(client)
    services.settings.highlight_threshold = 1  # every event is a key event now
    out = {}
    for fmt in ("blocks", "timeline", "compact"):
        out[fmt] = recall(client, None, format=fmt, max_cards=3)
        assert out[fmt]["context_tokens"] > 0
    assert "[typed_memory ref=" in out["blocks"]["context"]
    assert "├─ ★" in out["timeline"]["context"] and "2026-06" in out["timeline"]["context"]
    assert out["compact"]["context"].split("\n\n", 1)[1].startswith("- [2026-06-")

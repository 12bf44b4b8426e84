"""Issue 6, history safety (seed 001): an edited or deleted message takes the facts drawn from
it out of recall; the old facts stay in history as superseded, never deleted."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from chalicelib.usecases import jobs
from tests.conftest import AUTH

SP = "/v1/spaces/hs"
T0 = datetime.fromisoformat("2026-06-10T20:00:00+08:00")


def chat(plan: str) -> list[dict]:
    turns = [("user", "小明", "这周末天气不错"), ("assistant", "Aki", "是呀，很适合出门"),
             ("user", "小明", plan), ("assistant", "Aki", "好呀，记得带水"),
             ("user", "小明", "我还买了新的登山鞋"), ("assistant", "Aki", "那正好试试")]
    return [{"seq": i, "role": r, "speaker": s, "content": c,
             "at": (T0 + timedelta(minutes=i)).isoformat()} for i, (r, s, c) in enumerate(turns)]


def put(client, messages):
    resp = client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH,
                           body=json.dumps({"messages": messages}))
    assert resp.status_code == 200
    return json.loads(resp.body)


def recall_texts(client, query="爬山"):
    resp = client.http.post(f"{SP}/recall", headers=AUTH, body=json.dumps(
        {"query": query, "max_cards": 10, "now": "2026-06-11T09:00:00+08:00"}))
    return [c["text"] for c in json.loads(resp.body)["cards"]]


def all_events(services):
    return services.store.list_events("hs", statuses=("active", "archived", "superseded"),
                                      limit=500).events


def test_edit_replaces_the_fact_and_keeps_the_old_one_in_history(client, services):
    services.settings.min_reply_packs = 3
    put(client, chat("我们约好周六去爬山"))
    jobs.quiet_window(services, T0 + timedelta(minutes=30))
    assert any("周六" in t and "爬山" in t for t in recall_texts(client))

    edited = put(client, [chat("我们约好周日去爬山")[2]])
    assert edited["changed"] == 1
    result = jobs.quiet_window(services, T0 + timedelta(minutes=60))
    assert result.detail["reasons"] == {"hs/s1": "edited"}

    texts = recall_texts(client)
    assert any("周日" in t and "爬山" in t for t in texts)
    assert not any("周六" in t for t in texts)
    saturday = [e for e in all_events(services) if "周六" in e.summary and "爬山" in e.summary]
    assert saturday and all(e.status == "superseded" for e in saturday)
    history = json.loads(client.http.get(f"{SP}/events/{saturday[0].id}/history",
                                         headers=AUTH).body)["versions"]
    assert [v["status"] for v in history] == ["active", "superseded"]


def test_delete_takes_the_fact_out_of_recall(client, services):
    services.settings.min_reply_packs = 3
    put(client, chat("我们约好周六去爬山"))
    jobs.quiet_window(services, T0 + timedelta(minutes=30))
    assert client.http.delete(f"{SP}/sessions/s1/messages/2", headers=AUTH).status_code == 200
    jobs.quiet_window(services, T0 + timedelta(minutes=60))
    assert not any("爬山" in t for t in recall_texts(client))
    assert any("登山鞋" in t for t in recall_texts(client, "登山鞋"))  # other facts stay
    gone = [e for e in all_events(services) if "爬山" in e.summary]
    assert gone and all(e.status == "superseded" for e in gone)


def test_each_batch_is_journalled_and_rolls_back_exactly(client, services):
    from chalicelib.usecases.extract import journal

    services.settings.min_reply_packs = 3
    put(client, chat("我们约好周六去爬山"))
    jobs.quiet_window(services, T0 + timedelta(minutes=30))
    before = {e.id: (e.status, e.summary) for e in all_events(services)}
    put(client, [chat("我们约好周日去爬山")[2]])
    jobs.quiet_window(services, T0 + timedelta(minutes=60))

    first, second = journal.batches(services, "hs", "s1")
    assert set(first.created) == set(before)
    assert {e for e, _ in second.superseded} >= {e for e, (_, s) in before.items() if "周六" in s}
    assert second.created and all(e not in before for e in second.created)

    journal.rollback(services, "hs", "s1", second.key, T0 + timedelta(minutes=70))
    after = {e.id: (e.status, e.summary) for e in all_events(services)
             if e.status != "superseded" or e.id in before}
    assert {k: v for k, v in after.items() if k in before} == before
    assert all(services.store.get_event("hs", e).status == "superseded" for e in second.created)
    assert any("周六" in t and "爬山" in t for t in recall_texts(client))
    assert journal.rollback(services, "hs", "s1", second.key, T0) == []  # only once
    assert journal.compact(services, "hs", "s1", T0 + timedelta(days=40),
                           timedelta(days=30)) == 2

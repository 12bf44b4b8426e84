"""Every route through chalice.test.Client: the real app object, routing, middleware and
error mapping, on embedded stores with the hash embedder."""

from __future__ import annotations

import json

import pytest

from tests.conftest import AUTH
from tests.extract_double import OneEventPerStatement

SP = "/v1/spaces/demo"

NAITANG = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "assistant", "speaker": "Aria", "content": "好可爱的名字！",
     "at": "2026-06-01T20:00:30+08:00"},
    {"seq": 3, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 4, "role": "user", "speaker": "Sam",
     "content": "I finally booked the flight to Lisbon for my sister's wedding",
     "at": "2026-06-20T09:00:00+08:00"},
]


def put(client, messages, session="s1", headers=AUTH):
    return client.http.put(f"{SP}/sessions/{session}/messages", headers=headers,
                           body=json.dumps({"messages": messages}))


def body(resp):
    return json.loads(resp.body)


@pytest.fixture
def seeded(client):
    assert put(client, NAITANG).status_code == 200
    resp = client.http.post(f"{SP}/extract", headers=AUTH, body="{}")
    assert resp.status_code == 200
    return body(resp)["events"]


def test_health_is_public(client):
    resp = client.http.get("/v1/health")
    assert resp.status_code == 200
    assert body(resp)["status"] == "ok"


def test_put_is_idempotent_and_counts_changes(client):
    first = body(put(client, NAITANG))
    assert first["accepted"] == 4 and first["unchanged"] == 0
    again = body(put(client, NAITANG))
    assert again["accepted"] == 0 and again["unchanged"] == 4
    edited = [dict(NAITANG[0], content="我今天领养了一只白猫")]
    changed = body(put(client, edited))
    assert changed["changed"] == 1 and changed["accepted"] == 0


def test_extract_cites_the_right_seqs(seeded):
    by_seq = {s["seq_start"]: e for e in seeded for s in e["sources"]}
    assert 3 in by_seq and "体检" in by_seq[3]["summary"]
    assert 4 in by_seq and "Lisbon" in by_seq[4]["summary"]
    assert 2 not in by_seq  # "好可爱的名字！" is small talk


def test_events_listed_oldest_first_and_paginated(client, seeded):
    listed = body(client.http.get(f"{SP}/events", headers=AUTH))
    starts = [e["when"]["start"] for e in listed["events"]]
    assert len(starts) >= 3 and starts == sorted(starts)
    page1 = body(client.http.get(f"{SP}/events?limit=2", headers=AUTH))
    assert len(page1["events"]) == 2 and page1["next_cursor"]
    page2 = body(client.http.get(f"{SP}/events?limit=2&cursor={page1['next_cursor']}",
                                 headers=AUTH))
    ids = [e["id"] for e in page1["events"] + page2["events"]]
    assert ids == [e["id"] for e in listed["events"]][: len(ids)]


def walk(client, query: str) -> list[dict]:
    """Every page of GET …/events?{query}; each page but the last is full."""
    out, cursor = [], None
    while True:
        page = body(client.http.get(f"{SP}/events?{query}" + (f"&cursor={cursor}" if cursor
                                                              else ""), headers=AUTH))
        assert page["next_cursor"] is None or len(page["events"]) == int(
            query.split("limit=")[1].split("&")[0])
        out += page["events"]
        cursor = page["next_cursor"]
        if not cursor:
            return out


def test_events_lists_events_and_notes_summaries_on_request(client, services):
    services.extractor = OneEventPerStatement()  # three events: the session has a summary
    assert put(client, NAITANG).status_code == 200
    seeded = body(client.http.post(f"{SP}/extract", headers=AUTH, body="{}"))["events"]
    assert len(seeded) == 3
    note = body(client.http.post(f"{SP}/events", headers=AUTH, body=json.dumps(
        {"summary": "奶糖对鸡肉过敏", "happened_at": "2026-06-10T08:00:00+08:00"})))
    timeline = walk(client, "limit=1")
    assert {e["kind"] for e in timeline} == {"event", "note"}
    assert {e["id"] for e in timeline} == {e["id"] for e in seeded} | {note["id"]}
    assert walk(client, "limit=2&kind=event,note") == timeline
    (summary,) = walk(client, "limit=1&kind=summary")
    assert summary["kind"] == "summary" and "level:1" in summary["tags"]
    both = walk(client, "limit=1&kind=event,%20summary")
    assert {e["id"] for e in both} == {e["id"] for e in seeded} | {summary["id"]}
    every = walk(client, "limit=3&kind=all")
    assert sorted(e["id"] for e in every) == sorted(e["id"] for e in [*timeline, summary])
    for bad in ("summaries", "", "event,,note", "all,event", "EVENT", "x" * 100):
        resp = client.http.get(f"{SP}/events?kind={bad}", headers=AUTH)
        assert resp.status_code == 422, bad
        error = body(resp)["error"]
        assert error["code"] == "validation_error" and error["details"][0]["loc"] == "kind"
        assert error["message"]


def test_get_event_with_evidence_and_unknown_is_404(client, seeded):
    event = next(e for e in seeded if "体检" in e["summary"])
    got = body(client.http.get(f"{SP}/events/{event['id']}?evidence=true", headers=AUTH))
    assert [m["seq"] for m in got["evidence"]] == [3]
    missing = client.http.get(f"{SP}/events/ev_nope", headers=AUTH)
    assert missing.status_code == 404
    assert body(missing)["error"]["code"] == "not_found"


def test_recall_puts_the_checkup_first(client, seeded):
    resp = client.http.post(f"{SP}/recall", headers=AUTH,
                            body=json.dumps({"query": "奶糖体检", "max_cards": 3}))
    out = body(resp)
    assert resp.status_code == 200
    assert "体检" in out["cards"][0]["text"]
    assert out["injected"] is False
    assert out["recalled_ids"] == [c["ref"] for c in out["cards"]]
    assert out["context"] and out["trace"]


def test_manual_save_patch_conflict_archive_history(client):
    saved = client.http.post(f"{SP}/events", headers=AUTH, body=json.dumps(
        {"summary": "Sam prefers window seats", "importance": 4,
         "happened_at": "2026-06-21T10:00:00+08:00"}))
    assert saved.status_code == 201
    ev = body(saved)
    patched = client.http.patch(f"{SP}/events/{ev['id']}", headers=AUTH,
                                body=json.dumps({"version": ev["version"], "importance": 7}))
    assert patched.status_code == 200 and body(patched)["version"] == ev["version"] + 1
    stale = client.http.patch(f"{SP}/events/{ev['id']}", headers=AUTH,
                              body=json.dumps({"version": ev["version"], "importance": 2}))
    assert stale.status_code == 409 and body(stale)["error"]["code"] == "version_conflict"
    archived = client.http.delete(f"{SP}/events/{ev['id']}", headers=AUTH)
    assert body(archived)["status"] == "archived"
    history = body(client.http.get(f"{SP}/events/{ev['id']}/history", headers=AUTH))
    assert [v["version"] for v in history["versions"]] == [1, 2, 3]
    listed = body(client.http.get(f"{SP}/events", headers=AUTH))
    assert ev["id"] not in [e["id"] for e in listed["events"]]


def test_delete_message(client):
    put(client, NAITANG)
    resp = client.http.delete(f"{SP}/sessions/s1/messages/2", headers=AUTH)
    assert resp.status_code == 200 and body(resp)["deleted"]["seq"] == 2
    assert client.http.delete(f"{SP}/sessions/s1/messages/2", headers=AUTH).status_code == 404
    bad = client.http.delete(f"{SP}/sessions/s1/messages/x", headers=AUTH)
    assert bad.status_code == 400 and body(bad)["error"]["code"] == "invalid_seq"


def test_deliveries_are_recorded(client):
    saved = body(client.http.post(f"{SP}/events", headers=AUTH,
                                  body=json.dumps({"summary": "Sam prefers window seats"})))
    ref = f"event:{saved['id']}"
    resp = client.http.post(f"{SP}/deliveries", headers=AUTH,
                            body=json.dumps({"window": "w1", "ids": [ref]}))
    assert resp.status_code == 201
    assert [d["ref"] for d in body(resp)["recorded"]] == [ref]


def test_export_markdown_and_json(client, seeded):
    md = client.http.get(f"{SP}/export", headers=AUTH)
    assert md.status_code == 200 and md.headers["Content-Type"].startswith("text/markdown")
    text = md.body.decode()
    assert "2026-06" in text and "├─" in text
    js = body(client.http.get(f"{SP}/export?format=json", headers=AUTH))
    assert len([e for e in js["events"] if e["kind"] == "event"]) == len(seeded)
    assert [e["kind"] for e in js["events"] if e["kind"] != "event"] == ["summary"]
    bad = client.http.get(f"{SP}/export?format=pdf", headers=AUTH)
    assert bad.status_code == 400


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer wrong"},
    {"Authorization": "test-key"},
    {"Authorization": "Basic dGVzdC1rZXk="},
])
def test_auth_required_everywhere_but_health(client, headers):
    resp = client.http.get(f"{SP}/events", headers=headers)
    assert resp.status_code == 401
    assert body(resp)["error"]["code"] == "unauthorized"


def test_malformed_json_is_400(client):
    resp = client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH, body="{not json")
    assert resp.status_code == 400
    assert body(resp)["error"]["code"] == "malformed_json"


@pytest.mark.parametrize("payload, where", [
    ({"messages": []}, "messages"),
    ({"messages": [{"seq": 1, "role": "user", "content": "hi", "at": "2026-06-01T10:00"}]},
     "at"),  # naive time: we refuse to guess a zone
    ({"messages": [{"seq": -1, "role": "user", "content": "hi",
                    "at": "2026-06-01T10:00:00Z"}]}, "seq"),
    ({"messages": [{"seq": 1, "role": "robot", "content": "hi",
                    "at": "2026-06-01T10:00:00Z"}]}, "role"),
    ({"messages": [{"seq": 1, "role": "user", "content": "hi", "at": "2026-06-01T10:00:00Z",
                    "extra": 1}]}, "extra"),
])
def test_invalid_body_is_422_and_nothing_written(client, payload, where):
    resp = client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH, body=json.dumps(payload))
    assert resp.status_code == 422
    err = body(resp)["error"]
    assert err["code"] == "validation_error" and where in json.dumps(err)
    listed = body(client.http.post(f"{SP}/extract", headers=AUTH, body="{}"))
    assert listed["events"] == []


def test_half_bad_batch_writes_nothing(client, services):
    batch = [NAITANG[0], dict(NAITANG[1], content="")]
    assert put(client, batch).status_code == 422
    assert services.store.get_messages("demo", "s1") == []


def test_too_large_body_is_413(client):
    huge = json.dumps({"messages": [{"seq": i, "role": "user", "content": "x" * 19_000,
                                     "at": "2026-06-01T10:00:00Z"} for i in range(120)]})
    resp = client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH, body=huge)
    assert resp.status_code == 413
    assert body(resp)["error"]["code"] == "payload_too_large"


def test_bad_ids_and_unknown_routes(client):
    bad_space = client.http.get("/v1/spaces/has%20space/events", headers=AUTH)
    assert bad_space.status_code in (400, 422)
    assert "error" in body(bad_space)
    missing = client.http.get("/v1/nothing-here", headers=AUTH)
    assert missing.status_code in (403, 404)
    wrong_method = client.http.put(f"{SP}/events", headers=AUTH, body="{}")
    assert wrong_method.status_code == 405 and "error" in body(wrong_method)


def test_recall_rejects_bad_requests(client, seeded):
    assert client.http.post(f"{SP}/recall", headers=AUTH, body="").status_code == 400
    resp = client.http.post(f"{SP}/recall", headers=AUTH,
                            body=json.dumps({"query": "x", "max_cards": 0}))
    assert resp.status_code == 422
    resp = client.http.post(f"{SP}/recall", headers=AUTH,
                            body=json.dumps({"query": "x", "format": "yaml"}))
    assert resp.status_code == 422
    resp = client.http.post(f"{SP}/recall", headers=AUTH,
                            body=json.dumps({"query": "x", "recipe": "nope"}))
    assert resp.status_code in (400, 422)


def test_stats_and_consolidate(client, seeded):
    stats = body(client.http.get(f"{SP}/stats", headers=AUTH))
    assert stats["events"]["active"] == len(seeded)
    resp = client.http.post(f"{SP}/consolidate", headers=AUTH, body="")
    assert resp.status_code == 200
    assert client.http.get("/v1/spaces/other/stats").status_code == 401

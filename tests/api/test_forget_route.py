"""POST /v1/spaces/{space}/forget: the cooldown job's forgetting for one space, now (the web
app's "Forget now"); a write, like the other job routes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.conftest import AUTH, FixedClock

SP = "/v1/spaces/demo"


def test_forget_archives_what_faded_in_this_space_only(client, services):
    services.clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    for space in ("demo", "other"):
        saved = client.http.post(f"/v1/spaces/{space}/events", headers=AUTH, body=json.dumps(
            {"summary": "bought a pencil", "importance": 2}))
        assert saved.status_code == 201
    kept = json.loads(client.http.post(SP + "/events", headers=AUTH, body=json.dumps(
        {"summary": "my sister's wedding", "importance": 9})).body)
    services.clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=120))

    resp = client.http.post(SP + "/forget", headers=AUTH)
    assert resp.status_code == 200
    body = json.loads(resp.body)
    assert body["space"] == "demo" and len(body["faded"]) == 1
    assert body["compacted_journal_batches"] == 0
    faded = json.loads(client.http.get(f"{SP}/events/{body['faded'][0]}", headers=AUTH).body)
    assert faded["status"] == "archived" and "faded" in faded["tags"]
    assert json.loads(client.http.get(f"{SP}/events/{kept['id']}", headers=AUTH).body)[
        "status"] == "active"
    other = json.loads(client.http.get("/v1/spaces/other/events", headers=AUTH).body)
    assert [e["status"] for e in other["events"]] == ["active"]  # another space is untouched
    again = json.loads(client.http.post(SP + "/forget", headers=AUTH).body)
    assert again["faded"] == []


def test_forget_needs_a_write_key(client):
    created = json.loads(client.http.post("/v1/keys", headers=AUTH, body=json.dumps(
        {"spaces": ["demo"], "access": "read"})).body)
    reader = {"Authorization": f"Bearer {created['key']}"}
    assert client.http.post(SP + "/forget", headers=reader).status_code == 403
    assert client.http.post("/v1/spaces/bad space/forget", headers=AUTH).status_code == 400

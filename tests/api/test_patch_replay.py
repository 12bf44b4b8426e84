"""Issue 21 item 9: PATCH …/events/{id} with a stale version answers 409, unless it repeats
the change that made the current version (a retry whose first answer was lost): that replay
answers 200 with the current event and writes nothing."""

from __future__ import annotations

import json

from tests.conftest import AUTH

SP = "/v1/spaces/me"


def call(client, method: str, path: str, payload: dict | None = None):
    resp = getattr(client.http, method)(path, headers=AUTH,
                                        body=json.dumps(payload) if payload else None)
    return resp.status_code, json.loads(resp.body)


def test_a_replayed_patch_is_200_and_writes_nothing(client):
    status, saved = call(client, "post", SP + "/events", {"summary": "Sam prefers window seats"})
    assert status == 201 and saved["version"] == 1
    path = f"{SP}/events/{saved['id']}"
    status, first = call(client, "patch", path, {"version": 1, "importance": 8})
    assert status == 200 and first["version"] == 2

    status, again = call(client, "patch", path, {"version": 1, "importance": 8})
    assert status == 200 and again == first  # the same answer, no version 3
    status, history = call(client, "get", path + "/history")
    assert [v["version"] for v in history["versions"]] == [1, 2]

    status, other = call(client, "patch", path, {"version": 1, "importance": 3})
    assert status == 409 and other["error"]["code"] == "version_conflict"
    assert other["error"]["details"] == {"current_version": 2}


def test_a_replay_after_a_later_change_is_a_409(client):
    status, saved = call(client, "post", SP + "/events", {"summary": "Sam prefers window seats"})
    path = f"{SP}/events/{saved['id']}"
    assert call(client, "patch", path, {"version": 1, "importance": 8})[0] == 200
    assert call(client, "patch", path, {"version": 2, "title": "Window seats"})[0] == 200
    status, stale = call(client, "patch", path, {"version": 1, "importance": 8})
    assert status == 409 and stale["error"]["details"] == {"current_version": 3}

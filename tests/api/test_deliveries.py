"""Issue 21 item 6: POST …/deliveries records only refs that name a memory of the space.
A report with any unknown ref is a 422 `unknown_ref` listing them, and records nothing (all or
nothing); the MCP tool report_delivery answers the same."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.api.test_mcp import Rpc
from tests.conftest import AUTH

SP = "/v1/spaces/me"
SINCE = datetime.now(UTC) - timedelta(days=1)


def post(client, path: str, payload: dict):
    resp = client.http.post(path, headers=AUTH, body=json.dumps(payload))
    return resp.status_code, json.loads(resp.body)


def memories(client) -> tuple[str, str]:
    """An event saved by hand and a stored message: (event ref, message ref)."""
    status, saved = post(client, SP + "/events", {"summary": "奶糖对鸡肉过敏"})
    assert status == 201
    put = client.http.put(SP + "/sessions/s1/messages", headers=AUTH, body=json.dumps(
        {"messages": [{"seq": 1, "role": "user", "content": "奶糖今天打了疫苗",
                       "at": "2026-06-01T20:00:00+08:00"}]}))
    assert put.status_code == 200
    return f"event:{saved['id']}", "message:s1:1"


def delivered(services, window: str) -> list[str]:
    return [d.ref for d in services.store.recent_deliveries("me", window, SINCE)]


def test_known_refs_are_recorded(client, services):
    event, message = memories(client)
    status, out = post(client, SP + "/deliveries", {"window": "w", "ids": [event, message]})
    assert status == 201 and [d["ref"] for d in out["recorded"]] == [event, message]
    assert sorted(delivered(services, "w")) == sorted([event, message])


def test_the_readme_placeholder_ref_is_a_422(client, services):
    status, out = post(client, SP + "/deliveries", {"window": "chat-1", "ids": ["event:<id>"]})
    assert status == 422 and out["error"]["code"] == "unknown_ref"
    assert [d["ref"] for d in out["error"]["details"]] == ["event:<id>"]
    assert delivered(services, "chat-1") == []


def test_some_unknown_refs_record_nothing_and_are_listed(client, services):
    event, message = memories(client)
    ids = [event, "event:ev_nope", message, "message:s1:99", "message:other:1"]
    status, out = post(client, SP + "/deliveries", {"window": "w", "ids": ids})
    assert status == 422 and out["error"]["code"] == "unknown_ref"
    details = out["error"]["details"]
    assert [d["ref"] for d in details] == ["event:ev_nope", "message:s1:99", "message:other:1"]
    assert [d["loc"] for d in details] == ["ids.1", "ids.3", "ids.4"]
    assert "event:ev_nope" in out["error"]["message"]
    assert delivered(services, "w") == []  # all or nothing: the known ones neither


def test_a_ref_of_another_space_is_unknown_here(client):
    event, _ = memories(client)
    status, out = post(client, "/v1/spaces/elsewhere/deliveries", {"window": "w", "ids": [event]})
    assert status == 422 and out["error"]["details"][0]["ref"] == event


def test_the_mcp_tool_validates_the_same(client, services):
    event, _ = memories(client)
    rpc = Rpc(client)
    rpc.initialize()
    bad = rpc.call("report_delivery", window="w", ids=[event, "ev_nope"])
    assert bad["isError"] is True
    text = bad["content"][0]["text"]
    assert "unknown_ref" in text and "event:ev_nope" in text
    assert delivered(services, "w") == []
    assert rpc.ok("report_delivery", window="w", ids=[event])["recorded"] == [event]

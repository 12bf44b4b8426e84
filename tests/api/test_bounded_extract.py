"""POST …/extract runs in the request only when the pending work is small in messages and in
characters: a few very long messages become a job too (each embeds up to 2 windows)."""

from __future__ import annotations

import json

from tests.conftest import AUTH

SP = "/v1/spaces/long"


def put(client, contents: list[str]) -> None:
    messages = [{"seq": i, "role": "user" if i % 2 == 0 else "assistant", "content": c,
                 "at": f"2026-03-01T10:{i:02d}:00Z"} for i, c in enumerate(contents)]
    resp = client.http.put(SP + "/sessions/s1/messages", headers=AUTH,
                           body=json.dumps({"messages": messages}))
    assert resp.status_code == 200, resp.body


def test_few_long_messages_are_a_job(client):
    put(client, ["We booked the Ryokan Kiku in Kyoto for April. " * 110] * 3)  # 15k chars
    resp = client.http.post(SP + "/extract", headers=AUTH, body="{}")
    assert resp.status_code == 202, resp.body
    assert json.loads(resp.body)["job"]["kind"] == "extract"


def test_few_short_messages_run_in_the_request(client):
    put(client, ["We booked the Ryokan Kiku in Kyoto for April.", "Lovely!"])
    resp = client.http.post(SP + "/extract", headers=AUTH, body="{}")
    assert resp.status_code == 200, resp.body

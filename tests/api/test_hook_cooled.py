"""Issue 36 item 3: a hook call whose cards were all sent to the window lately answered
verdict `hit` with nothing to inject; it says `cooled` now (plain recall too), and the
OpenAPI document says that `none` and `cooled` both mean "add nothing"."""

from __future__ import annotations

import json

from chalicelib.api.openapi import openapi_document
from tests.conftest import AUTH

SP = "/v1/spaces/cool"
MSGS = [{"seq": 1, "role": "user", "speaker": "小明", "content": "奶糖体检的结果一切正常",
         "at": "2026-06-15T10:00:00+08:00"},
        {"seq": 2, "role": "user", "speaker": "小明", "content": "给奶糖买了新的猫爬架",
         "at": "2026-06-17T10:00:00+08:00"}]


def post(client, path: str, body: dict, status: int = 200) -> dict:
    resp = client.http.post(f"{SP}/{path}", headers=AUTH, body=json.dumps(body))
    assert resp.status_code == status, resp.body
    return json.loads(resp.body)


def test_a_hook_whose_cards_all_cooled_says_cooled_and_injects_nothing(client):
    client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH,
                    body=json.dumps({"messages": MSGS}))
    ask = {"query": "奶糖体检", "window": "w1"}
    first = post(client, "hook/recall", ask)
    assert first["verdict"] in ("hit", "expanded") and first["recalled_ids"]
    post(client, "deliveries", {"window": "w1", "ids": first["recalled_ids"]}, 201)
    again = post(client, "hook/recall", ask)
    assert (again["verdict"], again["additional_context"], again["recalled_ids"]) == (
        "cooled", "", [])
    assert post(client, "recall", {**ask, "max_cards": 1})["verdict"] == "cooled"
    elsewhere = post(client, "hook/recall", {**ask, "window": "w2"})
    assert elsewhere["verdict"] == first["verdict"]  # another window is not cooled


def test_the_document_says_none_and_cooled_both_add_nothing():
    schemas = openapi_document()["components"]["schemas"]
    for name in ("HookRecallResponse", "RecallResponse"):
        verdict = schemas[name]["properties"]["verdict"]
        assert "cooled" in verdict["enum"]
        assert "none and cooled both mean: add nothing" in verdict["description"]

"""Issue 36 item 7: GET …/sessions/{session}/messages lists what a session holds, in seq order,
a page at a time like the events list (`limit`, `cursor`) — the gateway's turns too; 404
unknown_space / unknown_session; in the OpenAPI document and the typed client."""

from __future__ import annotations

import json
from urllib.parse import quote

from chalicelib.api.openapi import openapi_document
from tests.api.test_gateway import sdk
from tests.conftest import AUTH

SP = "/v1/spaces/me"
SEQS = [0, 1, 2, 3, 4, 10, 1000, 5_000_000, 2**53]  # dense, then ever sparser


def put(client, session: str, seqs: list[int]):
    messages = [{"seq": s, "role": "user", "content": f"turn {s}",
                 "at": "2026-06-01T20:00:00+08:00"} for s in seqs]
    resp = client.http.put(f"{SP}/sessions/{quote(session, safe='')}/messages", headers=AUTH,
                           body=json.dumps({"messages": messages}))
    assert resp.status_code == 200, resp.body


def get(client, path: str, status: int = 200) -> dict:
    resp = client.http.get(path, headers=AUTH)
    assert resp.status_code == status, resp.body
    return json.loads(resp.body)


def test_pages_walk_the_whole_session_in_seq_order(client):
    put(client, "s1", SEQS)
    client.http.delete(f"{SP}/sessions/s1/messages/3", headers=AUTH)
    seen, cursor, pages = [], None, 0
    while True:
        page = get(client, f"{SP}/sessions/s1/messages?limit=2"
                           + (f"&cursor={cursor}" if cursor else ""))
        seen += [(m["seq"], m["content"], m["session"]) for m in page["messages"]]
        pages += 1
        cursor = page["next_cursor"]
        if not cursor:
            break
    kept = [s for s in SEQS if s != 3]
    assert seen == [(s, f"turn {s}", "s1") for s in kept] and pages == 4
    whole = get(client, f"{SP}/sessions/s1/messages")  # limit 50 by default
    assert [m["seq"] for m in whole["messages"]] == kept and whole["next_cursor"] is None


def test_a_chinese_session_is_listed(client):
    put(client, "沈砚-2026-11-02@20h05m00s", [0, 1])
    page = get(client, f"{SP}/sessions/{quote('沈砚-2026-11-02@20h05m00s')}/messages")
    assert [m["session"] for m in page["messages"]] == ["沈砚-2026-11-02@20h05m00s"] * 2


def test_the_gateway_s_turns_are_listed(lam, double):
    double.reply_text("奶糖是一只橘猫。")
    sdk(lam, window="w1", space="tavern").chat.completions.create(
        model="m", messages=[{"role": "user", "content": "奶糖是什么猫？"}])
    page = get(lam, "/v1/spaces/tavern/sessions/w1/messages")
    assert [(m["role"], m["content"]) for m in page["messages"]] == [
        ("user", "奶糖是什么猫？"), ("assistant", "奶糖是一只橘猫。")]


def test_unknown_spaces_sessions_and_bad_queries_are_4xx(client):
    assert get(client, f"{SP}/sessions/s1/messages", 404)["error"]["code"] == "unknown_space"
    put(client, "s1", [0])
    assert get(client, f"{SP}/sessions/s2/messages", 404)["error"]["code"] == "unknown_session"
    assert get(client, f"{SP}/sessions/a%20b/messages", 400)["error"]["code"] == \
        "invalid_session"
    for query, status, code in (("cursor=x", 400, "invalid_cursor"),
                                ("cursor=99999999999999999999", 400, "invalid_cursor"),
                                ("limit=0", 422, "validation_error"),
                                ("limit=501", 422, "validation_error"),
                                ("page=2", 422, "validation_error")):
        answer = get(client, f"{SP}/sessions/s1/messages?{query}", status)
        assert answer["error"]["code"] == code, query


def test_the_document_has_the_route_with_its_page_parameters():
    op = openapi_document()["paths"]["/v1/spaces/{space}/sessions/{session}/messages"]["get"]
    assert op["operationId"] == "list_messages"
    assert {p["name"] for p in op["parameters"]} == {"space", "session", "limit", "cursor"}
    assert "404" in op["responses"]

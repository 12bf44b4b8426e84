"""Scoped API keys through chalice.test.Client: /v1/keys (admin only), GET /v1/spaces, and the
401 / 403 decisions on every route of the app."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from chalicelib.api.auth import HEADER_SPACE_PATHS, current_scope
from chalicelib.domain.errors import Unauthorized
from tests.conftest import AUTH

MSG = [{"seq": 1, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检",
        "at": "2026-06-15T10:00:00+08:00"}]
PUBLIC = {"/v1/health", "/v1/openapi.json", "/", "/web/{version}/{asset}"}  # the web app


def body(resp):
    return json.loads(resp.body)


def auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


def make_key(client, headers=AUTH, **spec) -> dict:
    resp = client.http.post("/v1/keys", headers=headers, body=json.dumps(spec))
    assert resp.status_code == 201, resp.body
    return body(resp)


def put(client, space, headers):
    return client.http.put(f"/v1/spaces/{space}/sessions/s1/messages", headers=headers,
                           body=json.dumps({"messages": MSG}))


def recall(client, space, headers):
    return client.http.post(f"/v1/spaces/{space}/recall", headers=headers,
                            body=json.dumps({"query": "奶糖", "now": "2026-06-16T10:00:00+08:00"}))


def is_forbidden(resp) -> bool:
    if resp.status_code == 403 and not resp.body:  # a HEAD: the GET's status, no body
        return True
    return resp.status_code == 403 and body(resp)["error"]["code"] == "forbidden"


def test_create_answers_the_key_once(client):
    created = make_key(client, spaces=["a"], access="read", label="reader")
    assert set(created) == {"id", "key", "label", "access", "spaces", "created_at",
                            "last_used_at", "revoked", "revoked_at"}
    assert created["key"].startswith(f"ak_{created['id']}_")
    assert created["spaces"] == ["a"] and created["access"] == "read" and not created["revoked"]


def test_read_key_cannot_write(client):
    assert put(client, "a", AUTH).status_code == 200
    key = make_key(client, spaces=["a"], access="read")["key"]
    assert client.http.get("/v1/spaces/a/events", headers=auth(key)).status_code == 200
    assert recall(client, "a", auth(key)).status_code == 200  # POST …/recall reads
    denied = put(client, "a", auth(key))
    assert is_forbidden(denied)
    assert "read" in body(denied)["error"]["message"]
    assert is_forbidden(client.http.post("/v1/spaces/a/events", headers=auth(key),
                                         body=json.dumps({"summary": "x"})))
    # nothing was written by the refused requests
    listed = body(client.http.get("/v1/spaces/a/events", headers=AUTH))["events"]
    assert listed == []


def test_space_key_cannot_read_another_space(client):
    for space in ("a", "b"):
        assert put(client, space, AUTH).status_code == 200
    key = make_key(client, spaces=["a"], access="write")["key"]
    assert put(client, "a", auth(key)).status_code == 200  # write implies read, own space
    assert client.http.get("/v1/spaces/a/stats", headers=auth(key)).status_code == 200
    for resp in (client.http.get("/v1/spaces/b/events", headers=auth(key)),
                 recall(client, "b", auth(key)),
                 client.http.get("/v1/spaces/b/export", headers=auth(key)),
                 put(client, "b", auth(key))):
        assert is_forbidden(resp)
        assert "'b'" in body(resp)["error"]["message"]


def test_all_spaces_key(client):
    key = make_key(client, spaces="*", access="write")["key"]
    for space in ("a", "zz"):
        assert put(client, space, auth(key)).status_code == 200
        assert recall(client, space, auth(key)).status_code == 200


def test_revoked_key_gets_401_on_the_next_request(client):
    created = make_key(client, spaces=["a"], access="write")
    assert put(client, "a", auth(created["key"])).status_code == 200
    revoked = client.http.delete(f"/v1/keys/{created['id']}", headers=AUTH)
    assert revoked.status_code == 200 and body(revoked)["revoked"] is True
    resp = put(client, "a", auth(created["key"]))
    assert resp.status_code == 401 and body(resp)["error"]["code"] == "unauthorized"
    assert client.http.delete("/v1/keys/0123456789abcdef",
                              headers=AUTH).status_code == 404


def test_plaintext_is_never_listed(client, services):
    a = make_key(client, spaces=["a"], access="read", label="one")
    b = make_key(client, spaces="*", access="write", label="two")
    assert put(client, "a", AUTH).status_code == 200
    assert client.http.get("/v1/spaces/a/events", headers=auth(a["key"])).status_code == 200
    listed = client.http.get("/v1/keys", headers=AUTH)
    assert listed.status_code == 200
    text = listed.body.decode() if isinstance(listed.body, bytes) else listed.body
    for created in (a, b):
        assert created["key"] not in text
        assert created["key"].split("_", 2)[2] not in text
        assert hashlib.sha256(created["key"].encode()).hexdigest() not in text
    rows = {k["id"]: k for k in json.loads(text)["keys"]}
    assert rows[a["id"]]["label"] == "one" and rows[a["id"]]["last_used_at"]
    assert rows[b["id"]]["spaces"] == "*" and rows[b["id"]]["last_used_at"] is None
    assert not re.search(r"ak_[0-9a-f]{16}_", text)


def test_key_management_is_admin_only(client):
    write_all = make_key(client, spaces="*", access="write")["key"]
    for resp in (client.http.get("/v1/keys", headers=auth(write_all)),
                 client.http.post("/v1/keys", headers=auth(write_all),
                                  body=json.dumps({"spaces": "*", "access": "write"})),
                 client.http.delete("/v1/keys/0123456789abcdef", headers=auth(write_all))):
        assert is_forbidden(resp)


def test_create_validates_the_body(client):
    for spec in ({}, {"spaces": []}, {"spaces": ["a"], "access": "owner"},
                 {"spaces": ["bad space"]}, {"spaces": ["a"], "access": "admin"}):
        resp = client.http.post("/v1/keys", headers=AUTH, body=json.dumps(spec))
        assert resp.status_code == 422, spec
    assert client.http.post("/v1/keys", headers=AUTH, body="").status_code == 400


def test_rotation_with_two_admin_keys(client):
    """A second admin key manages keys too; the old one is revoked without downtime."""
    old = make_key(client, access="admin", label="old")
    new = make_key(client, headers=auth(old["key"]), access="admin", label="new")
    assert new["spaces"] == "*"
    assert put(client, "a", auth(new["key"])).status_code == 200
    assert client.http.delete(f"/v1/keys/{old['id']}",
                              headers=auth(new["key"])).status_code == 200
    assert client.http.get("/v1/keys", headers=auth(old["key"])).status_code == 401
    assert client.http.get("/v1/keys", headers=auth(new["key"])).status_code == 200


def test_missing_unknown_and_malformed_keys_are_401(client):
    for headers in ({}, {"Authorization": "Bearer ak_0123456789abcdef_nope"},
                    {"Authorization": "Bearer nope"}, {"Authorization": "Basic test-key"}):
        resp = client.http.get("/v1/spaces", headers=headers)
        assert resp.status_code == 401 and body(resp)["error"]["code"] == "unauthorized"


def test_public_routes_need_no_key(client):
    assert client.http.get("/v1/health").status_code == 200
    assert client.http.get("/v1/openapi.json").status_code != 401


def test_spaces_admin_sees_every_space_with_data(client):
    assert put(client, "chat", AUTH).status_code == 200
    saved = client.http.post("/v1/spaces/notes/events", headers=AUTH,
                             body=json.dumps({"summary": "买牛奶"}))
    assert saved.status_code == 201
    got = body(client.http.get("/v1/spaces", headers=AUTH))
    assert got == {"spaces": ["chat", "notes"], "all_spaces": True, "access": "admin",
                   "empty": []}


def test_spaces_scoped_key_sees_its_own(client):
    assert put(client, "chat", AUTH).status_code == 200
    key = make_key(client, spaces=["b", "a"], access="read")["key"]
    got = body(client.http.get("/v1/spaces", headers=auth(key)))
    assert got == {"spaces": ["a", "b"], "all_spaces": False, "access": "read",
                   "empty": ["a", "b"]}  # nothing written there yet
    everything = make_key(client, spaces="*", access="read")["key"]
    got = body(client.http.get("/v1/spaces", headers=auth(everything)))
    assert got == {"spaces": ["chat"], "all_spaces": True, "access": "read", "empty": []}


def test_scope_does_not_outlive_the_request(client):
    key = make_key(client, spaces=["a"], access="read")["key"]
    assert client.http.get("/v1/spaces", headers=auth(key)).status_code == 200
    with pytest.raises(Unauthorized):
        current_scope()
    assert body(client.http.get("/v1/spaces", headers=AUTH))["access"] == "admin"


# ------------------------------------------------------------------ every route


def _routes():
    from app import app

    for path, methods in sorted(app.routes.items()):
        for method in sorted(methods):
            yield method, path


def _fill(path: str, space: str) -> str:
    return (path.replace("{space}", space).replace("{session}", "s1").replace("{seq}", "1")
            .replace("{event_id}", "ev_x").replace("{key_id}", "0123456789abcdef"))


def _is_read(method: str, path: str) -> bool:
    # POST …/mcp: a read at the door; the MCP server refuses write tools (tests/api/test_mcp.py)
    # GET …/reading hands out leases (reading tasks): a write
    if path.endswith("/reading"):
        return False
    return method in ("GET", "HEAD") or (method == "POST" and path.endswith(("/recall", "/mcp")))


ROUTES = list(_routes())


@pytest.mark.parametrize("method,path", ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_every_route_is_scoped(client, method, path):
    if path in PUBLIC:
        assert client.http.request(method, path).status_code not in (401, 403)
        return
    keys = {access: make_key(client, spaces=["a"], access=access)["key"]
            for access in ("read", "write")}

    def call(space: str, key: str | None):
        headers = auth(key) if key else {"Content-Type": "application/json"}
        # the chat gateway names its space in a header (api.auth.HEADER_SPACE_PATHS)
        headers = {**headers, "X-Annals-Space": space}
        return client.http.request(method, _fill(path, space), headers=headers, body=b"{}")

    assert call("a", None).status_code == 401
    assert call("a", "ak_0123456789abcdef_unknown").status_code == 401
    admin_only = path.startswith("/v1/keys")
    if "{space}" in path or path in HEADER_SPACE_PATHS:
        assert is_forbidden(call("b", keys["write"]))  # another space
        assert is_forbidden(call("b", keys["read"]))
    read = call("a", keys["read"])
    write = call("a", keys["write"])
    if admin_only:
        assert is_forbidden(read) and is_forbidden(write)
    elif _is_read(method, path):
        assert read.status_code not in (401, 403) and write.status_code not in (401, 403)
    else:
        assert is_forbidden(read)
        assert write.status_code not in (401, 403)
    assert call("a", "test-key").status_code not in (401, 403)  # the admin key

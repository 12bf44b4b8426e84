"""ANNALS_CORS_ORIGINS (chalicelib.local.cors): a browser host on a listed origin gets its
preflight and its answers; any other origin gets neither; nothing is answered by default."""

from __future__ import annotations

import httpx
import pytest
from pydantic import ValidationError

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.config import Settings, parse_origins
from chalicelib.local.cors import CORS
from chalicelib.local.wsgi import ChaliceWSGI
from tests.conftest import API_KEY

ST = "http://127.0.0.1:8000"


def http(origins: str) -> httpx.Client:
    from app import app

    wsgi = ChaliceWSGI(app, MAX_BODY_BYTES)
    if parsed := parse_origins(origins):
        wsgi = CORS(wsgi, parsed)
    return httpx.Client(transport=httpx.WSGITransport(app=wsgi), base_url="http://annals")


def preflight(client: httpx.Client, origin: str) -> httpx.Response:
    return client.options("/v1/spaces/tavern/hook/recall", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})


def test_a_listed_origin_gets_its_preflight_and_its_answers(services):
    client = http(f"{ST}, https://chat.example.org/")
    ok = preflight(client, ST)
    assert ok.status_code == 204
    assert ok.headers["access-control-allow-origin"] == ST
    assert "POST" in ok.headers["access-control-allow-methods"]
    assert "Authorization" in ok.headers["access-control-allow-headers"]
    put = client.put("/v1/spaces/tavern/sessions/c1/messages", headers={
        "Origin": ST, "Authorization": f"Bearer {API_KEY}"}, json={"messages": [
            {"seq": 0, "role": "user", "speaker": "小林", "content": "我养了一只猫叫团子",
             "at": "2026-11-24T20:05:00+08:00"}]})
    assert put.status_code == 200
    assert put.headers["access-control-allow-origin"] == ST and put.headers["vary"] == "Origin"
    assert "X-Annals-Memory" in put.headers["access-control-expose-headers"]
    unauthorised = client.get("/v1/spaces/tavern/events", headers={"Origin": ST})
    assert unauthorised.status_code == 401  # readable by the page: it can say the key is wrong
    assert unauthorised.headers["access-control-allow-origin"] == ST
    other = preflight(client, "https://chat.example.org")
    assert other.status_code == 204


def test_another_origin_gets_nothing(services):
    client = http(ST)
    refused = preflight(client, "http://evil.example")
    assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
    assert refused.json()["error"]["code"] == "cors_origin_not_allowed"
    answer = client.get("/v1/health", headers={"Origin": "http://evil.example"})
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers


def test_no_origin_is_answered_by_default(services):
    client = http("")
    assert "access-control-allow-origin" not in preflight(client, ST).headers
    assert "access-control-allow-origin" not in client.get(
        "/v1/health", headers={"Origin": ST}).headers


@pytest.mark.parametrize("bad", ["127.0.0.1:8000", "http://x/path", "ftp://x", "*"])
def test_a_bad_origin_setting_is_refused_at_start(bad):
    with pytest.raises(ValidationError, match="is not an origin"):
        Settings(_env_file=None, cors_origins=bad)

"""Every API answer says nosniff and no-store; a GET route answers HEAD like GET without the
body — through Chalice (as on Lambda) and through the local WSGI server."""

from __future__ import annotations

import httpx
import pytest

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.local.wsgi import ChaliceWSGI
from tests.conftest import API_KEY, AUTH


@pytest.mark.parametrize("path,status", [("/v1/spaces/a/stats", 200), ("/v1/health", 200),
                                         ("/v1/spaces/a/events", 404),  # unknown_space
                                         ("/v1/spaces/a/events/ev_none", 404)])
def test_api_answers_are_not_sniffed_or_stored(client, path, status):
    resp = client.http.get(path, headers=AUTH)
    assert resp.status_code == status
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Cache-Control"] == "no-store"


def test_errors_before_the_view_carry_them_too(client):
    resp = client.http.get("/v1/spaces/a/events")  # no key: 401 from the middleware
    assert resp.status_code == 401
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Cache-Control"] == "no-store"


def test_head_is_get_without_the_body(client):
    get = client.http.get("/v1/spaces/a/stats", headers=AUTH)
    head = client.http.request("HEAD", "/v1/spaces/a/stats", headers=AUTH)
    assert head.status_code == get.status_code == 200
    assert head.body == b""
    assert head.headers["Content-Type"] == get.headers["Content-Type"]
    assert int(head.headers["Content-Length"]) == len(get.body)
    assert client.http.request("HEAD", "/v1/spaces/a/events").status_code == 401
    assert client.http.request("HEAD", "/v1/health").status_code == 200


def test_head_through_the_local_server(services):
    from app import app

    http = httpx.Client(transport=httpx.WSGITransport(app=ChaliceWSGI(app, MAX_BODY_BYTES)),
                        base_url="http://annals", headers={"Authorization": f"Bearer {API_KEY}"})
    get = http.get("/v1/spaces/a/stats")
    head = http.head("/v1/spaces/a/stats")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(get.content))
    assert head.headers["x-content-type-options"] == "nosniff"
    missing = http.head("/v1/nowhere")  # the server's own 404
    assert missing.status_code == 404 and missing.content == b""
    assert http.get("/v1/nowhere").headers["x-content-type-options"] == "nosniff"

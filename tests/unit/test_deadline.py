"""A request's deadline (chalicelib.domain.deadline): work checks it between units and stops
with 503 + Retry-After; outside a request nothing is checked."""

from __future__ import annotations

import json
import time

import pytest

from chalicelib.domain.deadline import check_deadline, deadline_scope, time_left
from chalicelib.domain.errors import DeadlineExceeded
from tests.conftest import AUTH


def test_no_scope_no_deadline():
    assert time_left() is None
    check_deadline()  # background work: never raises


def test_a_scope_ends_and_an_inner_one_keeps_the_earlier_end():
    with deadline_scope(0.05):
        check_deadline()
        with deadline_scope(60):
            assert time_left() <= 0.05
        time.sleep(0.06)
        with pytest.raises(DeadlineExceeded) as err:
            check_deadline()
        assert err.value.status == 503 and err.value.retry_after >= 1
    assert time_left() is None
    with deadline_scope(0):  # 0: none
        assert time_left() is None


def test_an_import_out_of_time_answers_503_and_writes_nothing(client, services):
    services.settings.request_seconds = 1e-9  # already over when the work starts
    doc = {"events": [{"id": f"ev_{i}", "space": "x", "title": f"t{i}", "summary": "s",
                       "when": {"start": "2026-01-01T00:00:00Z",
                                "end": "2026-01-02T00:00:00Z"},
                       "created_at": "2026-01-01T00:00:00Z",
                       "updated_at": "2026-01-01T00:00:00Z"} for i in range(3)]}
    resp = client.http.post("/v1/spaces/a/graph", headers=AUTH, body=json.dumps(doc))
    assert resp.status_code == 503, resp.body
    assert json.loads(resp.body)["error"]["code"] == "deadline_exceeded"
    assert "Retry-After" in resp.headers
    services.settings.request_seconds = 20
    nothing = json.loads(client.http.get("/v1/spaces/a/events?kind=all", headers=AUTH).body)
    assert nothing["error"]["code"] == "unknown_space"  # not an event, not even the space

"""Limits per key and per space (chalicelib.usecases.limits): refused at once with 429 and
Retry-After, never waiting; released when a request ends; the public paths never limited."""

from __future__ import annotations

import json
import threading

import pytest

from chalicelib.domain.errors import TooManyRequests
from chalicelib.usecases.limits import Limits, RequestLimiter
from tests.conftest import AUTH


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_requests_at_once_per_key_are_bounded_and_released():
    limiter = RequestLimiter(Limits(key_concurrent=2, space_concurrent=10, in_flight=0))
    with limiter.admit("k1", "a"), limiter.admit("k1", "a"):
        with pytest.raises(TooManyRequests) as err, limiter.admit("k1", "b"):
            pass
        assert err.value.status == 429 and err.value.retry_after >= 1
        with limiter.admit("k2", "a"):  # another key is not held back
            pass
        with limiter.admit("k1", "a", write=True):  # nor the key's own writes
            pass
    with limiter.admit("k1", "a"):  # released on exit
        pass
    assert limiter.refused == 1


def test_requests_at_once_per_space_and_in_all():
    limiter = RequestLimiter(Limits(key_concurrent=10, space_concurrent=1, in_flight=2))
    with limiter.admit("k1", "a"):
        with pytest.raises(TooManyRequests, match="space 'a'"), limiter.admit("k2", "a"):
            pass
        with (limiter.admit("k2", "b"),
              pytest.raises(TooManyRequests, match="requests at once"),
              limiter.admit("k3", "c")):
            pass


def test_a_failing_request_gives_its_place_back():
    limiter = RequestLimiter(Limits(key_concurrent=1, in_flight=0))
    with pytest.raises(ValueError), limiter.admit("k", "a"):
        raise ValueError("the view failed")
    with limiter.admit("k", "a"):
        pass


def test_requests_per_second_per_key_refill():
    clock = Clock()
    limiter = RequestLimiter(Limits(key_rate=2.0, key_burst=3, in_flight=0), clock=clock)
    for _ in range(3):
        with limiter.admit("k", "a"):
            pass
    with pytest.raises(TooManyRequests, match="per second") as err, limiter.admit("k", "a"):
        pass
    assert err.value.retry_after == 1
    with limiter.admit("other", "a"):  # the bucket is the key's own
        pass
    clock.now += 0.5  # one token back at 2 per second
    with limiter.admit("k", "a"):
        pass
    with pytest.raises(TooManyRequests), limiter.admit("k", "a"):
        pass


def test_the_api_answers_429_with_retry_after_in_the_error_shape(client, services):
    services.limits = RequestLimiter(Limits(key_concurrent=1, in_flight=0))
    entered, release = threading.Event(), threading.Event()
    original = services.store.list_records

    def slow_list(*args, **kwargs):  # hold the key's one place inside a request
        entered.set()
        release.wait(5)
        return original(*args, **kwargs)

    services.store.list_records = slow_list
    first = threading.Thread(target=lambda: client.http.get("/v1/spaces/a/jobs", headers=AUTH))
    first.start()
    assert entered.wait(5)
    services.store.list_records = original
    try:
        resp = client.http.get("/v1/spaces/a/events", headers=AUTH)
        health = client.http.get("/v1/health")
    finally:
        release.set()
        first.join(5)
    assert resp.status_code == 429
    assert json.loads(resp.body)["error"]["code"] == "rate_limited"
    assert int(resp.headers["Retry-After"]) >= 1
    assert health.status_code == 200  # never limited
    assert client.http.get("/v1/spaces/a/jobs", headers=AUTH).status_code == 200


def test_queued_jobs_per_space_are_bounded(tmp_path):
    from chalicelib.usecases import background
    from tests.conftest import make_services

    services = make_services(tmp_path, store="memory", limit_space_jobs=2)
    for _ in range(2):
        background.submit(services, "a", "extract", {"session": None}, dispatch=False)
    with pytest.raises(TooManyRequests, match="ANNALS_LIMIT_SPACE_JOBS") as err:
        background.submit(services, "a", "extract", {"session": "s"}, dispatch=False)
    assert err.value.retry_after == 30
    background.submit(services, "b", "extract", {}, dispatch=False)  # another space's own


def test_a_spaces_embedding_backlog_is_bounded(tmp_path):
    """Queued work per space: past ANNALS_LIMIT_SPACE_BACKLOG messages waiting to be
    embedded, a PUT is refused (nothing written) until the lane catches up."""
    from chalicelib.domain.models import MessageIn, PutMessagesRequest
    from chalicelib.usecases.ingest import put_messages
    from tests.conftest import make_services

    services = make_services(tmp_path, index="background")
    services.index.backlog_limit = 5  # as `annals serve` sets it (ANNALS_LIMIT_SPACE_BACKLOG)

    def put(space: str, seq0: int, n: int):
        return put_messages(services, space, "s", PutMessagesRequest(messages=[
            MessageIn(seq=seq0 + i, role="user", content=f"note {seq0 + i}",
                      at="2026-06-01T09:00:00Z") for i in range(n)]))

    put("a", 0, 5)
    with pytest.raises(TooManyRequests, match="ANNALS_LIMIT_SPACE_BACKLOG") as err:
        put("a", 5, 1)
    assert err.value.retry_after >= 5
    assert len(services.store.get_messages("a", "s")) == 5  # the refused one not written
    put("b", 0, 3)  # another space's own
    services.index.drain_all("vector")
    put("a", 5, 1)  # caught up

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


# ------------------------------------------------------------------ a key's reads first (issue 39)


def test_with_the_defaults_a_keys_recall_beside_its_own_bulk_writes_is_never_refused():
    """What `annals bench load --same-key` measured (issue 39): a key's writers asking every
    5 ms, its recall every 0.5 s; before, the writes spent the key's bucket and its recalls
    were refused. And several keys' writes in one space leave its reads a place."""
    clock = Clock()
    limiter = RequestLimiter(clock=clock)
    writes = 0
    for tick in range(2000):  # ten seconds
        clock.now = tick / 200
        try:
            with limiter.admit("k", "chat", write=True):
                writes += 1
        except TooManyRequests:
            pass
        if tick % 100 == 0:
            with limiter.admit("k", "chat"):  # raises if refused
                pass
    assert writes > 400  # the writes still get the rest
    with limiter.admit("k1", "s", write=True), limiter.admit("k1", "s", write=True), \
            limiter.admit("k2", "s", write=True), limiter.admit("k2", "s", write=True):
        with pytest.raises(TooManyRequests), limiter.admit("k3", "s", write=True):
            pass
        with limiter.admit("k3", "s"), limiter.admit("k1", "s"):
            pass


def test_a_keys_writes_never_spend_the_tokens_its_reads_need():
    """Writes at full speed stop at the reserve; the key's reads spend it, and the refill
    tops it up before a write is let in again."""
    clock = Clock()
    limiter = RequestLimiter(Limits(key_rate=10.0, key_burst=10, key_read_reserve=4,
                                    key_write_floor=0, in_flight=0), clock=clock)
    admitted = 0
    for _ in range(20):
        try:
            with limiter.admit("k", "a", write=True):
                admitted += 1
        except TooManyRequests as err:
            assert "ANNALS_LIMIT_KEY_READ_RESERVE" in str(err) and err.retry_after >= 1
    assert admitted == 6  # the burst less the reserve
    for _ in range(4):  # the reserve: reads only
        with limiter.admit("k", "a"):
            pass
    with pytest.raises(TooManyRequests, match="per second"), limiter.admit("k", "a"):
        pass
    clock.now += 0.3  # three tokens back: below the reserve, so reads only
    with pytest.raises(TooManyRequests), limiter.admit("k", "a", write=True):
        pass
    for _ in range(3):
        with limiter.admit("k", "a"):
            pass


def test_a_key_reading_at_its_rate_is_never_refused_beside_its_own_writers():
    """Five reads a second of a ten-a-second key, its writers asking every 10 ms: every read
    admitted, the writes get what the reads leave."""
    clock = Clock()
    limiter = RequestLimiter(Limits(key_rate=10.0, key_burst=20, key_read_reserve=5,
                                    key_write_floor=1.0, in_flight=0), clock=clock)
    reads = writes = 0
    for tick in range(1000):  # ten seconds
        clock.now = tick / 100
        try:
            with limiter.admit("k", "a", write=True):
                writes += 1
        except TooManyRequests:
            pass
        if tick % 20 == 0:
            with limiter.admit("k", "a"):  # raises if refused
                reads += 1
    assert reads == 50
    assert 45 <= writes <= 20 - 5 + 10 * 10 - 50 + 1 + 10  # the rest, and the writes' own


def test_a_keys_read_flood_does_not_starve_its_own_writes():
    """Reads over the key's rate spend every token; its writes still get their floor, and
    the key in all no more than its rate and that floor."""
    clock = Clock()
    limiter = RequestLimiter(Limits(key_rate=10.0, key_burst=10, key_read_reserve=4,
                                    key_write_floor=2.0, in_flight=0), clock=clock)
    reads = writes = 0
    for tick in range(5000):  # five seconds, a read asked every millisecond
        clock.now = tick / 1000
        try:
            with limiter.admit("k", "a"):
                reads += 1
        except TooManyRequests:
            pass
        if tick % 100 == 0:
            try:
                with limiter.admit("k", "a", write=True):
                    writes += 1
            except TooManyRequests as err:
                assert err.retry_after == 1
    assert 10 <= writes <= 2 + 2 * 5
    assert reads + writes <= 10 + 10 * 5 + 2 + 2 * 5


def test_a_refused_write_spends_nothing():
    clock = Clock()
    limiter = RequestLimiter(Limits(key_concurrent_writes=1, key_rate=1.0, key_burst=3,
                                    key_read_reserve=1, key_write_floor=1.0, in_flight=0),
                             clock=clock)
    with limiter.admit("k", "a", write=True):  # 2 tokens left, one over the reserve
        for _ in range(50):  # refused at the key's one write place: no token taken
            with pytest.raises(TooManyRequests, match="writes running"), \
                    limiter.admit("k", "a", write=True):
                pass
    with limiter.admit("k", "a", write=True):  # the one token over the reserve
        pass
    with limiter.admit("k", "a", write=True):  # the writes' own one
        pass
    for _ in range(50):  # refused by the reserve: nothing taken either
        with pytest.raises(TooManyRequests), limiter.admit("k", "a", write=True):
            pass
    with limiter.admit("k", "a"):  # the reserve is whole
        pass
    assert limiter.refused == 100


def test_a_keys_writes_at_their_limits_leave_its_reads_a_place():
    """The key's writes at every limit of their own (the key's, its space's, the server's):
    its recall still runs, and another key's too."""
    limiter = RequestLimiter(Limits(key_concurrent=2, key_concurrent_writes=4,
                                    space_concurrent=4, space_concurrent_writes=2,
                                    in_flight=5, in_flight_writes=3))
    with limiter.admit("k", "a", write=True), limiter.admit("k", "a", write=True):
        with pytest.raises(TooManyRequests, match="ANNALS_LIMIT_SPACE_CONCURRENT_WRITES"), \
                limiter.admit("k", "a", write=True):
            pass
        with limiter.admit("k", "b", write=True):
            with pytest.raises(TooManyRequests, match="writes at once"), \
                    limiter.admit("k", "c", write=True):
                pass
            with limiter.admit("k", "a"), limiter.admit("other", "b"):  # its recall, another's
                pass


def test_writes_always_leave_reads_a_place_whatever_the_settings():
    limits = Limits(space_concurrent=3, space_concurrent_writes=10, in_flight=3,
                    in_flight_writes=10, key_burst=5, key_read_reserve=50)
    assert (limits.space_write_places, limits.write_places, limits.read_reserve) == (2, 2, 4)
    assert Limits(space_concurrent=1, in_flight=1).space_write_places == 1  # not none


def test_between_keys_the_limits_still_hold():
    """Reads first within a key does not let one key take another's share: its reads are
    held to their own limits, its bucket is its own and the same size as before."""
    clock = Clock()
    limiter = RequestLimiter(Limits(key_concurrent=2, key_rate=5.0, key_burst=5,
                                    key_read_reserve=2, key_write_floor=1.0, in_flight=0),
                             clock=clock)
    with limiter.admit("greedy", "a"), limiter.admit("greedy", "a"):
        with pytest.raises(TooManyRequests, match="2 reads"), limiter.admit("greedy", "a"):
            pass
        with limiter.admit("victim", "b"):
            pass
    for _ in range(3):  # 2 tokens spent above: 3 left, all of them a key's reads may spend
        with limiter.admit("greedy", "a"):
            pass
    with pytest.raises(TooManyRequests), limiter.admit("greedy", "a"):
        pass
    with limiter.admit("greedy", "a", write=True):  # its writes' own token, one a second
        pass
    with pytest.raises(TooManyRequests), limiter.admit("greedy", "a", write=True):
        pass
    for _ in range(4):  # the victim's bucket is untouched
        with limiter.admit("victim", "b"):
            pass
    # a space shared by two keys: their writes together stay under the space's write places
    shared = RequestLimiter(Limits(key_concurrent_writes=2, space_concurrent=4,
                                   space_concurrent_writes=3, in_flight=0))
    with shared.admit("k1", "s", write=True), shared.admit("k1", "s", write=True), \
            shared.admit("k2", "s", write=True):
        with pytest.raises(TooManyRequests), shared.admit("k2", "s", write=True):
            pass
        with (shared.admit("k2", "s"),  # a read of either key finds the last place
              pytest.raises(TooManyRequests, match="ANNALS_LIMIT_SPACE_CONCURRENT\\)"),
              shared.admit("k1", "s")):
            pass


def test_the_server_wires_the_read_places_and_reserve(monkeypatch, tmp_path):
    from chalicelib.config import Settings
    from chalicelib.local.server import request_limiter

    monkeypatch.setenv("ANNALS_LIMIT_SPACE_CONCURRENT_WRITES", "3")
    monkeypatch.setenv("ANNALS_LIMIT_KEY_READ_RESERVE", "7")
    monkeypatch.setenv("ANNALS_LIMIT_KEY_WRITE_FLOOR", "0.5")
    limits = request_limiter(Settings(data_dir=tmp_path, _env_file=None)).limits
    assert (limits.space_concurrent_writes, limits.key_read_reserve,
            limits.key_write_floor) == (3, 7, 0.5)
    assert limits.in_flight_writes < limits.in_flight


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


def test_one_key_never_holds_the_servers_last_place():
    """bench attack: an attacker's 4 reads and 2 imports filled the server's 6 places and
    the victim's PUT and recall answered 429; a key now holds at most all but one."""
    limiter = RequestLimiter(Limits(key_concurrent=4, key_concurrent_writes=2,
                                    space_concurrent=10, in_flight=6, in_flight_writes=4))
    with limiter.admit("greedy", "a"), limiter.admit("greedy", "a"), \
            limiter.admit("greedy", "a"), limiter.admit("greedy", "a", write=True), \
            limiter.admit("greedy", "a", write=True):
        with pytest.raises(TooManyRequests, match="all but one"), limiter.admit("greedy", "a"):
            pass
        with (limiter.admit("victim", "b"),  # the last place is another key's
              pytest.raises(TooManyRequests, match="requests at once"),
              limiter.admit("third", "c")):
            pass


def test_a_key_allowed_the_whole_server_by_its_read_limit_may_take_it():
    limiter = RequestLimiter(Limits(key_concurrent=8, space_concurrent=10, in_flight=6))
    held = [limiter.admit("solo", "a") for _ in range(6)]
    for place in held:
        place.__enter__()
    with pytest.raises(TooManyRequests, match="requests at once"), limiter.admit("other", "b"):
        pass
    for place in held:
        place.__exit__(None, None, None)

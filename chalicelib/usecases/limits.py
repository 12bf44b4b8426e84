"""Limits per key and per space: one tenant cannot take a server's threads, or its CPU, from
the others (issue 23; docs/api-limits.md "Limits per key"); and within one key, reads come
before writes: a key's own bulk writes never get the turn it is answering refused
(issue 39; that it does not wait behind them is the traffic gate's part,
chalicelib.usecases.traffic).

`RequestLimiter.admit(key, space, write)` is taken by every authenticated request before it
queues for anything else (the HTTP middleware, app.authenticate; the streamed chat in
chalicelib.local.wsgi):

- requests at once per key, reads and writes apart (`key_concurrent`, `key_concurrent_writes`:
  a key's own recalls never keep its PUTs and imports out, nor the other way round), and per
  space (`space_concurrent`), of which writes may hold at most `space_concurrent_writes`;
- requests per second per key, one token bucket (`key_rate` sustained, `key_burst` at once)
  whose last `key_read_reserve` tokens only reads may spend, and a small one the key's writes
  have of their own (`key_write_floor` a second);
- requests at once in all (`in_flight`), of which writes may hold at most `in_flight_writes`
  and one key at most all but one (unless `key_concurrent` alone allows it all): the
  server's threads less the ones kept free, so
  `/v1/health` (never limited, never gated) and a small recall always find a thread, and
  another key's recall a place.

Why reads first, and why this way. A chat's key often also syncs or imports: four writers
PUTting batches at full speed with the same key used to spend its whole bucket (a 20-message
PUT is ~10 ms, so two at once ask ~100 a second of a 50-a-second budget) and its recall, the
turn being answered, was refused (25 of 28 answered 429 first; `annals bench load
--same-key`). A recall is the one request a person waits on; a write refused for a second is
retried and loses nothing. So every place a write may take is one a read may take too, but
not the other way round: a write needs the bucket above the reserve, a place among the
key's writes (apart from its reads'), and one among the writes of its space and of the
server, which are fewer than all their places. Reads spend the reserve
first and the refill tops it up before a write gets the bucket again, so a key reading at
any rate up to `key_rate` is never refused for its own writes, while its writes get what its
reads leave. The other way round is bounded too: a key whose reads spend every token (a loop
over its rate) still has `key_write_floor` writes a second, so its imports are not starved.
One bucket rather than one per kind keeps what a key may ask of the server in all, and so
every limit between keys, what it was (plus that floor). A refused request spends nothing
and holds nothing: every check comes before a token or a place is taken.

Over a limit: 429 `rate_limited` with Retry-After (TooManyRequests), at once — a refused
request costs microseconds and holds nothing. The defaults are far above what a companion
chat does (a recall and a PUT per turn) and what a bulk importer does politely (one request
at a time); a loop of sixteen at once meets them.

This is per process, for `annals serve`: a Lambda container serves one request at a time,
so on AWS the same limits are API Gateway's throttling and the functions' reserved
concurrency (infra/annals_infra/stack.py, docs/aws.md "Limits and throttling"). Queued work
per space (background jobs) is counted in the store, the same on both
(chalicelib.usecases.background.submit).

Written here rather than taken from a library: the rate part is a plain token bucket, but
the concurrency part must release on exit from a context and answer at once instead of
waiting, which the limiter libraries on PyPI (limits, pyrate-limiter) do not do.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from chalicelib.domain.errors import TooManyRequests

MAX_TRACKED_KEYS = 10_000  # token buckets kept (least recently used dropped)


@dataclass(frozen=True)
class Limits:
    key_concurrent: int = 4  # reads
    key_concurrent_writes: int = 2
    space_concurrent: int = 6  # reads and writes
    space_concurrent_writes: int = 4  # of those, writes: the rest only reads may take
    key_rate: float = 50.0  # requests per second per key, sustained
    key_burst: int = 100
    key_read_reserve: int = 20  # a key's last tokens, for its reads only (< key_burst)
    key_write_floor: float = 5.0  # writes per second a key has whatever its reads take
    in_flight: int = 6  # requests at once in all; 0: no such limit (for writes neither)
    in_flight_writes: int = 4  # of those, writes

    # As applied: writes leave reads one place at least (of a space, of the server) where
    # there are two, and the reserve leaves writes one token of the burst.
    @property
    def space_write_places(self) -> int:
        return max(1, min(self.space_concurrent_writes, self.space_concurrent - 1))

    @property
    def write_places(self) -> int:
        return max(1, min(self.in_flight_writes, self.in_flight - 1))

    @property
    def key_places(self) -> int:
        """What one key may hold of the server, reads and writes together: all but one place,
        unless its read limit alone allows it the whole server (an operator's choice)."""
        return self.in_flight if self.key_concurrent >= self.in_flight else self.in_flight - 1

    @property
    def read_reserve(self) -> int:
        return max(0, min(self.key_read_reserve, self.key_burst - 1))

    @property
    def write_floor_burst(self) -> float:
        return max(1.0, self.key_write_floor) if self.key_write_floor else 0.0


class _Bucket:
    __slots__ = ("at", "tokens", "writes")

    def __init__(self, tokens: float, writes: float, at: float):
        self.tokens = tokens  # the key's, reads and writes
        self.writes = writes  # its writes' own (`key_write_floor`)
        self.at = at


class RequestLimiter:
    """The Limiter port (chalicelib.ports) for `annals serve`."""

    def __init__(self, limits: Limits | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.limits = limits or Limits()
        self.clock = clock
        self._lock = threading.Lock()
        self._by_key: dict[tuple[str, bool], int] = {}
        self._by_space: dict[str, int] = {}
        self._space_writes: dict[str, int] = {}
        self._all = 0
        self._writes = 0
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self.refused = 0  # how many requests were refused, for /stats and the bench

    @contextmanager
    def admit(self, key: str, space: str | None, write: bool = False) -> Iterator[None]:
        with self._lock:
            self._take(key, space, write)
        try:
            yield
        finally:
            with self._lock:
                self._release(key, space, write)

    def _take(self, key: str, space: str | None, write: bool) -> None:
        """Every check before anything is taken: a refused request spends nothing."""
        lim = self.limits
        if lim.in_flight and self._all >= lim.in_flight:
            self._refuse("the server is at its limit of requests at once; retry shortly", 1)
        if write and lim.in_flight and self._writes >= lim.write_places:
            self._refuse("the server is at its limit of writes at once (the rest of its "
                         "places are for reads); retry shortly", 1)
        if lim.in_flight and self._by_key.get((key, True), 0) + self._by_key.get(
                (key, False), 0) >= lim.key_places:
            # a key's reads and writes together: 4 + 2 filled the server's 6 (bench attack)
            self._refuse("this key holds all but one of the server's places at once; the "
                         "last is kept for other keys", 1)
        limit, setting = ((lim.key_concurrent_writes, "ANNALS_LIMIT_KEY_CONCURRENT_WRITES")
                          if write else (lim.key_concurrent, "ANNALS_LIMIT_KEY_CONCURRENT"))
        if self._by_key.get((key, write), 0) >= limit:
            self._refuse(f"this key has {limit} {'writes' if write else 'reads'} running at "
                         f"once, its limit ({setting})", 1)
        if space is not None:
            if self._by_space.get(space, 0) >= lim.space_concurrent:
                self._refuse(f"space {space!r} has {lim.space_concurrent} requests running at "
                             "once, its limit (ANNALS_LIMIT_SPACE_CONCURRENT)", 1)
            if write and self._space_writes.get(space, 0) >= lim.space_write_places:
                self._refuse(f"space {space!r} has {lim.space_write_places} writes "
                             "running at once, its limit (ANNALS_LIMIT_SPACE_CONCURRENT_WRITES;"
                             " the rest of its places are for reads)", 1)
        self._spend(key, write)
        self._all += 1
        self._by_key[key, write] = self._by_key.get((key, write), 0) + 1
        if space is not None:
            self._by_space[space] = self._by_space.get(space, 0) + 1
        if write:
            self._writes += 1
            if space is not None:
                self._space_writes[space] = self._space_writes.get(space, 0) + 1

    def _spend(self, key: str, write: bool) -> None:
        """One token of the key's bucket (refilled at `key_rate` per second up to `key_burst`);
        a write only while more than `key_read_reserve` are left, else one of its own
        (`key_write_floor` per second, up to one second's worth)."""
        lim = self.limits
        now = self.clock()
        bucket = self._buckets.pop(key, None) or _Bucket(float(lim.key_burst),
                                                         lim.write_floor_burst, now)
        elapsed = now - bucket.at
        bucket.tokens = min(lim.key_burst, bucket.tokens + elapsed * lim.key_rate)
        bucket.writes = min(lim.write_floor_burst, bucket.writes + elapsed * lim.key_write_floor)
        bucket.at = now
        self._buckets[key] = bucket  # most recently used last
        if len(self._buckets) > MAX_TRACKED_KEYS:
            self._buckets.popitem(last=False)
        if not write:
            if bucket.tokens < 1:
                self._refuse(f"this key is over {lim.key_rate:g} requests per second "
                             "(ANNALS_LIMIT_KEY_RATE)",
                             math.ceil((1 - bucket.tokens) / lim.key_rate))
            bucket.tokens -= 1
            return
        floor = lim.read_reserve + 1  # what a write leaves its key's reads
        if bucket.tokens >= floor:
            bucket.tokens -= 1
        elif bucket.writes >= 1:
            bucket.writes -= 1
        else:
            wait = (floor - bucket.tokens) / lim.key_rate
            if lim.key_write_floor:
                wait = min(wait, (1 - bucket.writes) / lim.key_write_floor)
            self._refuse(f"this key's writes are over {lim.key_rate:g} requests per second "
                         f"less the {lim.read_reserve} its reads keep "
                         "(ANNALS_LIMIT_KEY_RATE, ANNALS_LIMIT_KEY_READ_RESERVE, "
                         "ANNALS_LIMIT_KEY_WRITE_FLOOR)", math.ceil(wait))

    def _release(self, key: str, space: str | None, write: bool) -> None:
        self._all -= 1
        _decrement(self._by_key, (key, write))
        if space is not None:
            _decrement(self._by_space, space)
        if write:
            self._writes -= 1
            if space is not None:
                _decrement(self._space_writes, space)

    def _refuse(self, message: str, retry_after: int) -> None:
        self.refused += 1
        raise TooManyRequests(message, retry_after=max(1, retry_after))


def _decrement(counts: dict, name: object) -> None:
    left = counts.get(name, 0) - 1
    if left > 0:
        counts[name] = left
    else:
        counts.pop(name, None)

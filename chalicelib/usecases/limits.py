"""Limits per key and per space: one tenant cannot take a server's threads, or its CPU, from
the others (issue 23; docs/api-limits.md "Limits per key").

`RequestLimiter.admit(key, space)` is taken by every authenticated request before it queues
for anything else (the HTTP middleware, app.authenticate; the streamed chat in
chalicelib.local.wsgi):

- requests at once per key, reads and writes apart (`key_concurrent`, `key_concurrent_writes`:
  a key's own recalls never keep its PUTs and imports out, nor the other way round), and per
  space (`space_concurrent`);
- requests per second per key, a token bucket (`key_rate` sustained, `key_burst` at once);
- requests at once in all (`in_flight`): the server's threads less the ones kept free, so
  `/v1/health` (never limited, never gated) and a small recall always find a thread.

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
    space_concurrent: int = 6
    key_rate: float = 50.0  # requests per second per key, sustained
    key_burst: int = 100
    in_flight: int = 6  # requests at once in all; 0: no such limit


class _Bucket:
    __slots__ = ("at", "tokens")

    def __init__(self, tokens: float, at: float):
        self.tokens = tokens
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
        self._all = 0
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
        lim = self.limits
        if lim.in_flight and self._all >= lim.in_flight:
            self._refuse("the server is at its limit of requests at once; retry shortly", 1)
        limit, setting = ((lim.key_concurrent_writes, "ANNALS_LIMIT_KEY_CONCURRENT_WRITES")
                          if write else (lim.key_concurrent, "ANNALS_LIMIT_KEY_CONCURRENT"))
        if self._by_key.get((key, write), 0) >= limit:
            self._refuse(f"this key has {limit} {'writes' if write else 'reads'} running at "
                         f"once, its limit ({setting})", 1)
        if space is not None and self._by_space.get(space, 0) >= lim.space_concurrent:
            self._refuse(f"space {space!r} has {lim.space_concurrent} requests running at "
                         "once, its limit (ANNALS_LIMIT_SPACE_CONCURRENT)", 1)
        self._spend(key)
        self._all += 1
        self._by_key[key, write] = self._by_key.get((key, write), 0) + 1
        if space is not None:
            self._by_space[space] = self._by_space.get(space, 0) + 1

    def _spend(self, key: str) -> None:
        """One token of the key's bucket, refilled at `key_rate` per second up to
        `key_burst`."""
        lim = self.limits
        now = self.clock()
        bucket = self._buckets.pop(key, None) or _Bucket(float(lim.key_burst), now)
        bucket.tokens = min(lim.key_burst, bucket.tokens + (now - bucket.at) * lim.key_rate)
        bucket.at = now
        self._buckets[key] = bucket  # most recently used last
        if len(self._buckets) > MAX_TRACKED_KEYS:
            self._buckets.popitem(last=False)
        if bucket.tokens < 1:
            wait = math.ceil((1 - bucket.tokens) / lim.key_rate)
            self._refuse(f"this key is over {lim.key_rate:g} requests per second "
                         "(ANNALS_LIMIT_KEY_RATE)", wait)
        bucket.tokens -= 1

    def _release(self, key: str, space: str | None, write: bool) -> None:
        self._all -= 1
        _decrement(self._by_key, (key, write))
        if space is not None:
            _decrement(self._by_space, space)

    def _refuse(self, message: str, retry_after: int) -> None:
        self.refused += 1
        raise TooManyRequests(message, retry_after=max(1, retry_after))


def _decrement(counts: dict, name: object) -> None:
    left = counts.get(name, 0) - 1
    if left > 0:
        counts[name] = left
    else:
        counts.pop(name, None)

"""A request's deadline: the time after which it stops its own work and answers 503 with
Retry-After (chalicelib.domain.errors.DeadlineExceeded), instead of holding a thread — and
the CPU other tenants need — for as long as its input asks.

The HTTP middleware opens a `deadline_scope` per request (ANNALS_REQUEST_SECONDS); the
steps whose cost grows with their input call `check_deadline()` between units of work (the
embedder between batches, an import between events). Background work (the indexing lanes,
the job worker, a Lambda's stream batch) runs outside any scope: there the check does
nothing. A contextvar, not a thread-local: each request's scope is its own, and so is that
of a thread it starts (copied context).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

from chalicelib.domain.errors import DeadlineExceeded

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "annals_deadline", default=None)


@contextmanager
def deadline_scope(seconds: float | None) -> Iterator[None]:
    """Work inside the block must end within `seconds` (None or 0: no deadline). A scope
    inside another keeps the earlier end."""
    if not seconds:
        yield
        return
    end = time.monotonic() + seconds
    outer = _deadline.get()
    token = _deadline.set(end if outer is None else min(outer, end))
    try:
        yield
    finally:
        _deadline.reset(token)


def time_left() -> float | None:
    """Seconds left to the current request's deadline; None outside a request."""
    end = _deadline.get()
    return None if end is None else end - time.monotonic()


def check_deadline() -> None:
    """Raise DeadlineExceeded when the current request's time is up."""
    left = time_left()
    if left is not None and left <= 0:
        raise DeadlineExceeded("the request ran out of time (ANNALS_REQUEST_SECONDS) before "
                               "its work was done; nothing was written — send it again "
                               "later, or send less at once", retry_after=5)

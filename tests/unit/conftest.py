"""Fixtures for the unit tests: a fixed clock and small helpers to put messages in a space.

All times are in UTC+8 (a Chinese user's offset) unless a test says otherwise, so a wrong
"UTC day" would show up as a wrong date.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.domain.models import Message, MessageIn, PutMessagesRequest, PutMessagesResponse
from chalicelib.usecases import ingest
from chalicelib.wiring import Services
from tests.conftest import FixedClock

CST = timezone(timedelta(hours=8))
T0 = datetime(2026, 6, 15, 10, 0, tzinfo=CST)  # a Monday, 10:00 in Shanghai
SPACE = "sp"

# (seq, role, speaker, content) — message `seq` is sent at T0 + seq minutes
Item = tuple[int, str, str | None, str]


def message(seq: int, role: str, speaker: str | None, content: str, *, session: str = "c1",
            space: str = SPACE, at: datetime | None = None) -> Message:
    """A stored-message model built the way ingest builds it (speaker default, hash)."""
    item = MessageIn(seq=seq, role=role, speaker=speaker, content=content,
                     at=at or T0 + timedelta(minutes=seq))
    return Message.from_input(space, session, item)


@pytest.fixture
def clock(services: Services) -> FixedClock:
    """services.clock pinned to T0; tests move it with `clock.now = …`."""
    fixed = FixedClock(T0)
    services.clock = fixed
    return fixed


PutFn = Callable[..., PutMessagesResponse]


@pytest.fixture
def put(request, services: Services) -> PutFn:
    """put(session, items, space=SPACE, base=T0): ingest (seq, role, speaker, content) tuples
    into the test's services (the e5 ones when the test uses them)."""
    if "e5_services" in request.fixturenames:
        services = request.getfixturevalue("e5_services")

    def _put(session: str, items: Sequence[Item], space: str = SPACE,
             base: datetime = T0) -> PutMessagesResponse:
        request = PutMessagesRequest(messages=[
            MessageIn(seq=seq, role=role, speaker=speaker, content=content,
                      at=base + timedelta(minutes=seq))
            for seq, role, speaker, content in items
        ])
        return ingest.put_messages(services, space, session, request)

    return _put


@pytest.fixture
def timeparse_or_stub(monkeypatch):
    """Recall imports chalicelib.domain.timeparse.parse_time, which is being written elsewhere. Until it
    exists, stand in a parser that finds no time in any text, so the tests exercise recall's
    no-time path (verdict "none"), which is what they are about. Once the real module is
    there, this does nothing: the queries in these tests name no time anyway."""
    import chalicelib.domain.timeparse as timeparse

    if not hasattr(timeparse, "parse_time"):
        monkeypatch.setattr(timeparse, "parse_time", lambda text, now, tz=None: None,
                            raising=False)

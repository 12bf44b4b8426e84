"""A past week told in a message is dated as the teller means it (dates.week_as_told): the
seven days that many weeks before the day it was said, in English and Chinese."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from chalicelib.domain.dates import week_as_told
from chalicelib.domain.models import Message, MessageIn
from chalicelib.usecases.extract.offline import resolve_when

CST = timezone(timedelta(hours=8))


def told(text: str, at: datetime) -> tuple[str, str]:
    msg = Message.from_input("sp", "c1", MessageIn(seq=1, role="user", speaker="A",
                                                   content=text, at=at))
    when = resolve_when(text, msg).when
    return f"{when.start:%Y-%m-%d}", f"{when.end:%Y-%m-%d}"


@pytest.mark.parametrize("text, at, window", [
    ("I adopted a pup last week.", datetime(2023, 8, 9, 13, tzinfo=UTC),  # a Wednesday
     ("2023-08-02", "2023-08-09")),
    ("I joined an online group last week.", datetime(2023, 1, 1, 13, tzinfo=UTC),  # Sunday
     ("2022-12-25", "2023-01-01")),
    ("I got a puppy two weeks ago!", datetime(2023, 8, 11, 13, tzinfo=UTC),
     ("2023-07-28", "2023-08-04")),
    ("上周我们去了杭州", datetime(2026, 6, 17, 20, tzinfo=CST), ("2026-06-10", "2026-06-17")),
    ("两周前搬了家", datetime(2026, 6, 17, 20, tzinfo=CST), ("2026-06-03", "2026-06-10")),
])
def test_a_past_week_is_the_seven_days_that_many_weeks_back(text, at, window):
    assert told(text, at) == window


@pytest.mark.parametrize("text, at, window", [
    ("I'm swamped this week.", datetime(2023, 8, 9, 13, tzinfo=UTC), ("2023-08-07", "2023-08-14")),
    ("We meet next week.", datetime(2023, 8, 9, 13, tzinfo=UTC), ("2023-08-14", "2023-08-21")),
    ("I went hiking last weekend.", datetime(2023, 8, 9, 13, tzinfo=UTC),
     ("2023-08-05", "2023-08-07")),
    ("I visited Kyoto yesterday.", datetime(2023, 8, 9, 13, tzinfo=UTC),
     ("2023-08-08", "2023-08-09")),
])
def test_other_times_stay_as_parsed(text, at, window):
    assert told(text, at) == window


def test_only_a_whole_past_calendar_week_moves():
    monday = datetime(2023, 7, 31, tzinfo=UTC)
    wednesday = datetime(2023, 8, 9, 13, tzinfo=UTC)
    assert week_as_told(monday, monday + timedelta(days=7), wednesday) == (
        datetime(2023, 8, 2, tzinfo=UTC), datetime(2023, 8, 9, tzinfo=UTC))
    tuesday = monday + timedelta(days=1)  # not a calendar week
    assert week_as_told(tuesday, tuesday + timedelta(days=7), wednesday) == (
        tuesday, tuesday + timedelta(days=7))
    # said on a Monday: last week is already the seven days before it
    assert week_as_told(monday, monday + timedelta(days=7),
                        datetime(2023, 8, 7, 9, tzinfo=UTC)) == (monday, monday + timedelta(days=7))

"""Date labels shared by traces, context text, exports and prompts.

Every window is [start, end): an exclusive end is shown as the last day it covers, as seed 003
writes it (10-19~10-21 for three days).

>>> from datetime import datetime, UTC
>>> window_label(datetime(2026, 10, 19, tzinfo=UTC), datetime(2026, 10, 22, tzinfo=UTC))
'2026-10-19~2026-10-21'
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

_LAST = timedelta(microseconds=1)
_FINE = {"minute", "hour", "part_of_day"}


class Span(Protocol):
    start: datetime
    end: datetime
    granularity: str


def last_day(end: datetime) -> str:
    """The last day an exclusive end covers."""
    return f"{end - _LAST:%Y-%m-%d}"


def window_label(start: datetime, end: datetime) -> str:
    """A day, or first~last day."""
    first, last = f"{start:%Y-%m-%d}", last_day(end)
    return first if first == last else f"{first}~{last}"


def when_label(span: Span) -> str:
    """A human label at the span's own precision: a year, a month (or month range), a time,
    a day or a day range."""
    if span.granularity == "year":
        return f"{span.start:%Y}"
    if span.granularity == "month":
        first, last = f"{span.start:%Y-%m}", f"{span.end - _LAST:%Y-%m}"
        return first if first == last else f"{first}~{last}"
    if span.granularity in ("minute", "hour"):
        return f"{span.start:%Y-%m-%d %H:%M}"
    return window_label(span.start, span.end)


def prompt_label(span: Span) -> str:
    """The label LLM prompts use: times as a range, days as `a .. b`."""
    if span.granularity in _FINE:
        return f"{span.start:%Y-%m-%d %H:%M}–{span.end:%H:%M}"
    if span.granularity == "month":
        return f"{span.start:%Y-%m}"
    if span.granularity == "year":
        return f"{span.start:%Y}"
    first, last = f"{span.start:%Y-%m-%d}", last_day(span.end)
    return first if first == last else f"{first} .. {last}"


def week_as_told(start: datetime, end: datetime, told: datetime) -> tuple[datetime, datetime]:
    """A past calendar week named in a message ("last week", "two weeks ago", 上周, 两周前),
    as the teller means it: the seven days that many weeks before the day it was said —
    "last week" on Wednesday 9 August is 2-8 August, not Monday 31 July to Sunday 6 August.
    LoCoMo's annotators, dating what speakers told, wrote "the week before 9 August 2023"
    for every such "last week". Other spans, and weeks not wholly before the week it was
    said in, stay as they are. (For dating what was told; a query's "last week" stays the
    calendar week, widened by the time layers.)"""
    day = told.replace(hour=0, minute=0, second=0, microsecond=0)
    monday = day - timedelta(days=day.weekday())
    if end - start != timedelta(days=7) or start.weekday() != 0 \
            or start.hour or start.minute or end > monday:
        return start, end
    shift = day - monday
    return start + shift, end + shift


def span_as_told(span: Span, told: datetime) -> tuple[datetime, datetime]:
    """A time span found in a message, dated as the teller means it: a week-granular span
    through `week_as_told`, any other as it is. Both extractors date what they read so."""
    if span.granularity == "week":
        return week_as_told(span.start, span.end, told)
    return span.start, span.end

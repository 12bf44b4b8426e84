"""Find and resolve time expressions in Chinese and English text.

    find_times("你还记得上周二我们去海边吗", now)  -> [TimeSpan(2026-10-20 .. 10-21, day)]
    parse_time("yesterday afternoon", now)         -> TimeSpan(.. 12:00 .. 18:00, part_of_day)
    when_json("上个月", now)                         -> {"start": ..., "end": ..., ...}

Every window is [start, end) in the reference zone (`tz`, else the offset of `now`).
Conventions and the full list of forms: docs/time-expressions.md.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from chalicelib.domain.timeparse.chat_en import written_out
from chalicelib.domain.timeparse.finder import find_atoms
from chalicelib.domain.timeparse.span import TimeSpan, make_ctx

__all__ = ["TimeSpan", "find_times", "first_told", "holds", "parse_time", "when_json",
           "within"]


def find_times(text: str, now: datetime, tz: str | tzinfo | None = None,
               future: bool | None = None) -> list[TimeSpan]:
    """Every time expression in `text`, non-overlapping, in text order; neighbours that
    belong together (昨天下午, last Friday evening, 10月1日到7日) come back as one span.
    `future`: the text speaks of what is ahead (True) or not (False), known from around it;
    None: read from its own words."""
    if not text:
        return []
    chat = written_out(text)  # "2day", "last nite", "2 wks ago" as the words (chat_en)
    ctx = make_ctx(now, tz, chat.text if chat else text, future)
    spans: list[TimeSpan] = []
    for atom in find_atoms(ctx):
        if atom.lo is None or atom.hi is None or not in_range(atom.lo, atom.hi):
            continue
        start, end = chat.typed(atom.start, atom.end) if chat else (atom.start, atom.end)
        spans.append(TimeSpan(start=atom.lo, end=absolute_end(atom.lo, atom.hi),
                              granularity=atom.gran, matched=text[start:end], offset=start,
                              exact=atom.exact))
    return spans


def absolute_end(start: datetime, end: datetime) -> datetime:
    """Calendar arithmetic runs on wall clocks. A span inside a daylight-saving gap ("at
    2:59am" on the night clocks jump from 2:00 to 3:00) can then end, in real time, before it
    starts; such an end is moved to start + the wall duration, in real time."""
    real_start, real_end = start.astimezone(UTC), end.astimezone(UTC)
    if real_end > real_start:
        return end
    return (real_start + max(end - start, timedelta(minutes=1))).astimezone(start.tzinfo)


def in_range(start: datetime, end: datetime) -> bool:
    """Times Annals accepts (chalicelib.domain.models.MIN_TIME … MAX_TIME)."""
    from chalicelib.domain.models import MAX_TIME, MIN_TIME

    return MIN_TIME <= start < end <= MAX_TIME


def parse_time(text: str, now: datetime, tz: str | tzinfo | None = None,
               future: bool | None = None) -> TimeSpan | None:
    """The first time expression in `text` (merged with its neighbours), or None — unless it
    names a stretch that a later one names a day of: "下个月过生日 12月8号", "next month, on
    December 8" are about the 8th (`within`)."""
    return first_told(find_times(text, now, tz, future))


def first_told(spans: list[TimeSpan]) -> TimeSpan | None:
    """Of a text's times (`find_times`), the one it is about (`parse_time`)."""
    if not spans:
        return None
    return next((s for s in spans[1:] if within(s, spans[0])), spans[0])


_STRETCHES = ("week", "month", "year")
_DAY_OR_FINER = ("minute", "hour", "part_of_day", "day")


def within(span: TimeSpan, stretch: TimeSpan) -> bool:
    """`span` is a day (or a part of one) inside `stretch`, a week, month or year: it tells
    the stretch exactly."""
    return span.granularity in _DAY_OR_FINER and holds(stretch, span.start, span.end)


def holds(stretch: TimeSpan, start: datetime, end: datetime) -> bool:
    """`stretch` is a week, month or year around [start, end) (`within`; the extractor's
    title leaves such a stretch out: offline.framing)."""
    return stretch.granularity in _STRETCHES and stretch.start <= start and end <= stretch.end


def when_json(text: str, now: datetime, tz: str | tzinfo | None = None) -> dict[str, Any]:
    """{"start", "end", "granularity", "matched"} of parse_time; all None if no time is named."""
    span = parse_time(text, now, tz)
    if span is None:
        return {"start": None, "end": None, "granularity": None, "matched": None}
    return {"start": span.start.isoformat(), "end": span.end.isoformat(),
            "granularity": span.granularity, "matched": span.matched}

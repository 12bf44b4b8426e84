"""Atoms: what one rule recognised, already resolved to a default window.

The rules (zh.py, en.py, numeric.py) turn a regex match into an Atom; combine.py then
merges neighbouring atoms (昨天 + 下午, May 1 + to + May 7, the week before + 9 June 2023)
using the extra fields below to re-resolve them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

from chalicelib.domain.timeparse.cal import add_months, monday_of
from chalicelib.domain.timeparse.span import Ctx

SPAN = "span"  # a resolved window
POD = "pod"  # a part of the day (下午, evening); today's unless merged with a day
CLOCK = "clock"  # a clock time (3点半, 3pm, 14:30); today's unless merged with a day
DOM = "dom"  # a bare day of the month (3号); this month's unless merged with a month
PART = "part"  # a part of a month or year (月底, early); needs a month/year beside it
REL = "rel"  # an offset from an anchor date (the week before ..., 前一天)

GRAN_ORDER = ("minute", "hour", "part_of_day", "day", "week", "month", "year")


@dataclass(frozen=True)
class Atom:
    kind: str
    lo: datetime | None = None
    hi: datetime | None = None
    gran: str = "day"
    exact: bool = True
    standalone: bool = True  # False: only meaningful merged with a neighbour
    start: int = 0
    end: int = 0
    day: date | None = None  # the single day this atom lies in (None for multi-day spans)
    ymonth: tuple[int, int] | None = None  # the span is exactly this calendar month
    year: int | None = None  # the span is exactly this calendar year (去年, 2025年, in 2022)
    season: tuple[int, int] | None = None  # the span is the season starting (year, month)
    quarter: int | None = None  # the span is this quarter (1-4) of its year
    in_year: Callable[[int], Atom | None] | None = None  # named without a year: re-resolve
    weekday: int | None = None  # a bare weekday name (can roll a week as a range end)
    bare_weekend: bool = False  # 周末 / the weekend named alone: a week beside it says which
    pod: tuple[int, int] | None = None  # POD hours [h0, h1); h1 may pass 24
    hour: int | None = None  # CLOCK hour as written
    minute: int | None = None  # CLOCK minute; None = a whole hour
    fixed: bool = False  # CLOCK already pinned to 24h (15:00, 3pm, 下午3点)
    dom: int | None = None  # DOM
    op: str | None = None  # PART / REL: what to apply to the neighbour
    arg: Any = None


def days(ctx: Ctx, d0: date, d1: date | None = None, gran: str = "day", exact: bool = True,
         **kw: Any) -> Atom:
    """Whole days [d0, d1); d1 defaults to the day after d0."""
    d1 = d1 or d0 + timedelta(days=1)
    single = d0 if (d1 - d0).days == 1 else None
    return Atom(SPAN, ctx.at(d0), ctx.at(d1), gran, exact, day=single, **kw)


def week(ctx: Ctx, any_day: date, **kw: Any) -> Atom:
    monday = monday_of(any_day)
    return days(ctx, monday, monday + timedelta(days=7), "week", **kw)


def weekend(ctx: Ctx, any_day: date, **kw: Any) -> Atom:
    """Saturday and Sunday of the week (Monday-first) that contains `any_day`."""
    saturday = monday_of(any_day) + timedelta(days=5)
    return days(ctx, saturday, saturday + timedelta(days=2), "day", **kw)


def month(ctx: Ctx, y: int, m: int, **kw: Any) -> Atom:
    ny, nm = add_months(y, m, 1)
    return Atom(SPAN, ctx.at(date(y, m, 1)), ctx.at(date(ny, nm, 1)), "month",
                ymonth=(y, m), **kw)


def months(ctx: Ctx, y: int, m: int, count: int, exact: bool = True) -> Atom:
    ny, nm = add_months(y, m, count)
    return Atom(SPAN, ctx.at(date(y, m, 1)), ctx.at(date(ny, nm, 1)), "month", exact)


def year(ctx: Ctx, y: int, **kw: Any) -> Atom:
    return Atom(SPAN, ctx.at(date(y, 1, 1)), ctx.at(date(y + 1, 1, 1)), "year", year=y, **kw)


def pod(ctx: Ctx, h0: int, h1: int, day: date | None = None, standalone: bool = True) -> Atom:
    """A part of the day; without a day it is today's."""
    d = day or ctx.today
    return Atom(POD, ctx.at(d, h0), ctx.at(d, h1), "part_of_day", True, standalone, day=d,
                pod=(h0, h1))


def clock(ctx: Ctx, hour: int, minute: int | None, fixed: bool, day: date | None = None,
          standalone: bool = True) -> Atom:
    """A clock time: hour granularity for 3点 / 3pm, minute granularity for 14:30."""
    d = day or ctx.today
    h = hour if fixed else default_hour(hour)
    lo = ctx.at(d, h, minute or 0)
    hi = lo + (timedelta(hours=1) if minute is None else timedelta(minutes=1))
    gran = "hour" if minute is None else "minute"
    return Atom(CLOCK, lo, hi, gran, True, standalone, day=d, hour=hour, minute=minute,
                fixed=fixed)


def default_hour(hour: int) -> int:
    """A bare 1-5 o'clock with no am/pm or part of day is read as afternoon (3点 -> 15:00):
    in chat "3点" means 3 pm far more often than 3 am."""
    return hour + 12 if 1 <= hour <= 5 else hour


def fit_hour(hour: int, hours: tuple[int, int]) -> int:
    """Read a 12-hour clock inside a part of day: 下午3点 -> 15, 下午6点 -> 18 (the end hour
    counts), 夜里2点 -> 26 (next day 02)."""
    h0, h1 = hours
    for candidate in (hour, hour + 12, hour + 24):
        if h0 <= candidate <= h1:
            return candidate
    return hour


def coarser(g1: str, g2: str) -> str:
    return g1 if GRAN_ORDER.index(g1) >= GRAN_ORDER.index(g2) else g2


def shift_days(ctx: Ctx, atom: Atom, n: int) -> Atom:
    """The same whole-day span n days later (used to roll a bare weekday a week on)."""
    assert atom.lo is not None and atom.hi is not None
    d0 = atom.lo.date() + timedelta(days=n)
    d1 = atom.hi.date() + timedelta(days=n)
    return replace(days(ctx, d0, d1, atom.gran, atom.exact), start=atom.start, end=atom.end,
                   weekday=atom.weekday)


def part(op: str) -> Atom:
    return Atom(PART, standalone=False, op=op)


def rel(op: str, arg: Any = None) -> Atom:
    return Atom(REL, standalone=False, op=op, arg=arg)

"""Plain calendar arithmetic on dates (no time zones here)."""

from __future__ import annotations

import calendar
from datetime import date, timedelta


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def monday_of(day: date) -> date:
    """Weeks start on Monday (Chinese and ISO convention)."""
    return day - timedelta(days=day.weekday())


def this_week_day(today: date, weekday: int, weeks: int = 0) -> date:
    """The given weekday (0=Monday) of the week `weeks` away from today's week."""
    return monday_of(today) + timedelta(days=7 * weeks + weekday)


def last_on_or_before(day: date, weekday: int) -> date:
    return day - timedelta(days=(day.weekday() - weekday) % 7)


def last_before(day: date, weekday: int) -> date:
    return last_on_or_before(day - timedelta(days=1), weekday)


def first_after(day: date, weekday: int) -> date:
    return day + timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)


def nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """n-th (1-based) weekday of a month; n = -1 for the last one."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = date(year, month, days_in_month(year, month))
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None

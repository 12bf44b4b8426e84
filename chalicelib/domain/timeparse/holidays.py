"""Holiday dates: fixed-date, nth-weekday and Chinese lunar-calendar holidays.

Every holiday is a function year -> (first day, day after last, exact). "year" is the
Gregorian year the holiday falls in (除夕 of 2026 is 2026-02-16, the eve of 2026's 春节).
Lunar dates come from the `lunardate` package (pure Python, 1900-2099), imported lazily;
outside that range a lunar holiday resolves to nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from chalicelib.domain.timeparse.cal import nth_weekday

Window = tuple[date, date, bool]


def lunar(year: int, month: int, day: int) -> date:
    """The Gregorian date of a lunar-calendar day; ValueError outside 1900-2099."""
    from lunardate import LunarDate  # lazy: only needed when a lunar holiday is named

    return LunarDate(year, month, day).to_solar_date()


def one_day(day: date) -> Window:
    return day, day + timedelta(days=1), True


def fixed(month: int, day: int, length: int = 1, exact: bool = True) -> Callable[[int], Window]:
    def window(year: int) -> Window:
        first = date(year, month, day)
        return first, first + timedelta(days=length), exact

    return window


def lunar_day(month: int, day: int, offset: int = 0) -> Callable[[int], Window]:
    def window(year: int) -> Window:
        return one_day(lunar(year, month, day) + timedelta(days=offset))

    return window


def nth(month: int, weekday: int, n: int) -> Callable[[int], Window]:
    def window(year: int) -> Window:
        return one_day(nth_weekday(year, month, weekday, n))

    return window


def qingming(year: int) -> Window:
    """清明 (a solar term): Apr 4 or 5 in 2000-2099 by the usual formula
    day = floor(Y * 0.2422 + 4.81) - floor(Y / 4), Y = year % 100; Apr 5 outside that range."""
    if 2000 <= year <= 2099:
        y = year % 100
        return one_day(date(year, 4, int(y * 0.2422 + 4.81) - y // 4))
    return one_day(date(year, 4, 5))


def easter(year: int) -> Window:
    from dateutil.easter import easter as easter_date  # dateutil ships with dateparser

    return one_day(easter_date(year))


HOLIDAYS: dict[str, Callable[[int], Window]] = {
    "new_year": fixed(1, 1),
    "new_year_eve": fixed(12, 31),
    "valentine": fixed(2, 14),
    "womens_day": fixed(3, 8),
    "qingming": qingming,
    "labour_day": fixed(5, 1),
    "childrens_day": fixed(6, 1),
    "teachers_day": fixed(9, 10),
    # 国庆节 = the Oct 1-7 golden week, a 7-day window.
    "national_day": fixed(10, 1, 7),
    "halloween": fixed(10, 31),
    "christmas_eve": fixed(12, 24),
    "christmas": fixed(12, 25),
    "independence_day": fixed(7, 4),
    "spring_festival": lunar_day(1, 1),
    "new_year_eve_lunar": lunar_day(1, 1, offset=-1),
    "lantern": lunar_day(1, 15),
    "dragon_boat": lunar_day(5, 5),
    "qixi": lunar_day(7, 7),
    "mid_autumn": lunar_day(8, 15),
    "double_ninth": lunar_day(9, 9),
    "thanksgiving": nth(11, 3, 4),  # 4th Thursday of November
    "mothers_day": nth(5, 6, 2),
    "fathers_day": nth(6, 6, 3),
    "memorial_day": nth(5, 0, -1),
    "labor_day_us": nth(9, 0, 1),
    "easter": easter,
}


def holiday_window(key: str, year: int) -> Window | None:
    try:
        return HOLIDAYS[key](year)
    except ImportError:  # lunardate missing: lunar holidays resolve to nothing, never crash
        return None
    except (ValueError, KeyError, IndexError):  # outside the lunar table, unknown key
        return None

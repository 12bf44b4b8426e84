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


def around(day_of: Callable[[int], Window], before: int, after: int, exact: bool = False
           ) -> Callable[[int], Window]:
    """The days from `before` days before a holiday to `after` days after its last day, both
    included (a holiday period built round its day)."""
    def window(year: int) -> Window:
        first, end, _ = day_of(year)
        return first - timedelta(days=before), end + timedelta(days=after), exact

    return window


def nth(month: int, weekday: int, n: int) -> Callable[[int], Window]:
    def window(year: int) -> Window:
        return one_day(nth_weekday(year, month, weekday, n))

    return window


def solar_term(month: int, c: float, usual: int,
               off_by_one: dict[int, int] | None = None) -> Callable[[int], Window]:
    """A solar term (清明, 冬至 …) by the usual formula for 2000-2099:
    day = floor(Y × 0.2422 + C) − floor(L / 4), Y = year % 100, L = Y (Y − 1 for a term in
    January or February); `off_by_one`: the years the formula misses, with the correction;
    `usual`: the day outside 2000-2099. The terms move by a day with the leap-year cycle;
    no well-kept library computes them without an astronomy package (`lunardate` holds the
    lunar calendar only), and a formula checked against the almanac is a few lines."""
    def window(year: int) -> Window:
        if not 2000 <= year <= 2099:
            return one_day(date(year, month, usual))
        y = year % 100
        leap = (y - 1 if month <= 2 else y) // 4
        day = int(y * 0.2422 + c) - leap + (off_by_one or {}).get(year, 0)
        return one_day(date(year, month, day))

    return window


qingming = solar_term(4, 4.81, 5)  # 清明: Apr 4 or 5


def easter(year: int) -> Window:
    from dateutil.easter import easter as easter_date  # dateutil ships with dateparser

    return one_day(easter_date(year))


def lunar_previous(month: int, day: int) -> Callable[[int], Window]:
    """A day of the lunar year that ends in `year` (腊八, 小年 fall in January or February)."""
    def window(year: int) -> Window:
        return one_day(lunar(year - 1, month, day))

    return window


def winter_holiday(year: int) -> Window:
    """寒假: three weeks either side of 春节; vague (schools set their own dates)."""
    day = lunar(year, 1, 1)
    return day - timedelta(days=21), day + timedelta(days=21), False


HOLIDAYS: dict[str, Callable[[int], Window]] = {
    "new_year": fixed(1, 1),
    "new_year_eve": fixed(12, 31),
    "valentine": fixed(2, 14),
    "womens_day": fixed(3, 8),
    "qingming": qingming,
    "lichun": solar_term(2, 3.87, 4),  # 立春
    "lixia": solar_term(5, 5.52, 5),  # 立夏
    "xiazhi": solar_term(6, 21.37, 21),  # 夏至
    "liqiu": solar_term(8, 7.5, 7),  # 立秋
    "lidong": solar_term(11, 7.438, 7),  # 立冬
    "dongzhi": solar_term(12, 21.94, 22, {2021: -1}),  # 冬至
    "labour_day": fixed(5, 1),
    "childrens_day": fixed(6, 1),
    "teachers_day": fixed(9, 10),
    # 国庆节 the day is October 1; 国庆假期 / 国庆长假 / 十一黄金周 the holiday, Oct 1-7.
    "national_day": fixed(10, 1),
    "halloween": fixed(10, 31),
    "singles_day": fixed(11, 11),  # 双十一, the shopping festival
    "double_twelve": fixed(12, 12),
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
    "good_friday": lambda year: one_day(easter(year)[0] - timedelta(days=2)),
    "boxing_day": fixed(12, 26),
    "st_patrick": fixed(3, 17),
    "black_friday": lambda year: one_day(nth_weekday(year, 11, 3, 4) + timedelta(days=1)),
    "mlk_day": nth(1, 0, 3),
    "presidents_day": nth(2, 0, 3),
    "veterans_day": fixed(11, 11),
    "laba": lunar_previous(12, 8),
    "xiaonian": lunar_previous(12, 23),
    "longtaitou": lunar_day(2, 2),
    "zhongyuan": lunar_day(7, 15),
}

# Holiday periods, named apart from the day: 国庆节 is October 1, 国庆假期 the golden week.
HOLIDAY_PERIODS: dict[str, Callable[[int], Window]] = {
    "national_day": fixed(10, 1, 7),
    "labour_day": fixed(5, 1, 5),  # the May Day holiday, May 1-5 since 2020
    # 春节假期 / 过年: 除夕 to 初六, the traditional seven days (the official dates move a
    # little from year to year, so the window is vague)
    "spring_festival": around(lunar_day(1, 1), 1, 5),
    "new_year": fixed(1, 1, 3, exact=False),
    "qingming": around(qingming, 1, 1),
    "dragon_boat": around(lunar_day(5, 5), 1, 1),
    "mid_autumn": around(lunar_day(8, 15), 1, 1),
    # the Christmas holidays: Christmas Eve to New Year's Day
    "christmas": fixed(12, 24, 9, exact=False),
    "thanksgiving": around(nth(11, 3, 4), 0, 3, exact=True),  # Thursday to Sunday
    "easter": around(easter, 2, 1, exact=True),  # Good Friday to Easter Monday
    "labor_day_us": around(nth(9, 0, 1), 2, 0, exact=True),  # Saturday to Monday
    "memorial_day": around(nth(5, 0, -1), 2, 0, exact=True),
    "winter_holiday": winter_holiday,
    "summer_holiday": fixed(7, 1, 62, exact=False),  # 暑假 / summer vacation: July-August
}


def holiday_window(key: str, year: int, period: bool = False) -> Window | None:
    """The day(s) of a holiday in `year`; period=True: its holiday period where it has one
    (国庆假期, the Christmas holidays), else the day."""
    try:
        if period and key in HOLIDAY_PERIODS:
            return HOLIDAY_PERIODS[key](year)
        return HOLIDAYS[key](year)
    except ImportError:  # lunardate missing: lunar holidays resolve to nothing, never crash
        return None
    except (ValueError, KeyError, IndexError):  # outside the lunar table, unknown key
        return None

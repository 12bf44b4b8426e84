"""Resolvers shared by the Chinese and English rules.

Conventions (see docs/time-expressions.md): weeks start on Monday; what names no direction
points to the past unless the sentence speaks of the future (Ctx.future); vague expressions
get fixed-size windows defined here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

from chalicelib.domain.timeparse import atoms as A
from chalicelib.domain.timeparse.atoms import Atom
from chalicelib.domain.timeparse.cal import (
    add_months,
    days_in_month,
    first_after,
    last_before,
    last_on_or_before,
    monday_of,
    nth_weekday,
    safe_date,
    this_week_day,
)
from chalicelib.domain.timeparse.holidays import holiday_window
from chalicelib.domain.timeparse.span import Ctx

# A date or month named without a year is this year's, unless that is more than this far
# ahead of now: "12月25日" said on 5 January is last Christmas, "11月5日" said on 28 October
# is next week.
YEARLESS_LOOKAHEAD = timedelta(days=60)

# Parts of a month: day ranges [d0, d1) (None = to the end of the month).
MONTH_PARTS: dict[str, tuple[int, int | None]] = {
    "begin": (1, 11), "early": (1, 11), "mid": (11, 21), "late": (21, None),
    "end": (21, None), "h1": (1, 16), "h2": (16, None),
}
# Parts of a year: month ranges [m0, m1).
YEAR_PARTS: dict[str, tuple[int, int]] = {
    "begin": (1, 3), "early": (1, 5), "mid": (5, 9), "late": (9, 13), "end": (11, 13),
    "h1": (1, 7), "h2": (7, 13),
}
# Parts of a week: day offsets from Monday [d0, d1).
WEEK_PARTS: dict[str, tuple[int, int]] = {
    "begin": (0, 2), "early": (0, 2), "mid": (2, 4), "late": (4, 7), "end": (4, 7),
}
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}  # first month; 3 months

Build = Callable[[int], Atom | None]


# --- relative to today -----------------------------------------------------------------

def day_offset(ctx: Ctx, n: int) -> Atom:
    return A.days(ctx, ctx.today + timedelta(days=n))


def days_back(ctx: Ctx, oldest: int, newest: int, exact: bool = False) -> Atom:
    """The days from `oldest` to `newest` days ago, both included."""
    t = ctx.today
    return A.days(ctx, t - timedelta(days=oldest), t - timedelta(days=newest - 1), exact=exact)


def days_ahead(ctx: Ctx, nearest: int, farthest: int, exact: bool = False) -> Atom:
    t = ctx.today
    return A.days(ctx, t + timedelta(days=nearest), t + timedelta(days=farthest + 1),
                  exact=exact)


def last_days(ctx: Ctx, n: int, exact: bool = True) -> Atom:
    """The last n days, today included (最近三天, the past week)."""
    return days_back(ctx, n - 1, 0, exact)


def recently(ctx: Ctx) -> Atom:
    """最近 / recently / lately: the last 14 days, today included; vague."""
    return last_days(ctx, 14, exact=False)


def a_while_ago(ctx: Ctx) -> Atom:
    """前阵子 / a while ago: 1 to 6 weeks back; vague."""
    return days_back(ctx, 42, 7)


def week_offset(ctx: Ctx, n: int) -> Atom:
    return A.week(ctx, ctx.today + timedelta(days=7 * n))


def weeks_back(ctx: Ctx, oldest: int, newest: int) -> Atom:
    """Calendar weeks from `oldest` to `newest` weeks ago; vague."""
    monday = monday_of(ctx.today)
    return A.days(ctx, monday - timedelta(days=7 * oldest),
                  monday - timedelta(days=7 * (newest - 1)), "week", exact=False)


def weekend_offset(ctx: Ctx, n: int) -> Atom:
    return A.weekend(ctx, ctx.today + timedelta(days=7 * n))


def bare_weekend(ctx: Ctx) -> Atom:
    """周末 / the weekend: the one under way on Sat/Sun, else last weekend (next in plans)."""
    atom = weekend_offset(ctx, 0 if ctx.today.weekday() >= 5 or ctx.future else -1)
    return replace(atom, bare_weekend=True)


def month_offset(ctx: Ctx, n: int) -> Atom:
    return A.month(ctx, *add_months(ctx.today.year, ctx.today.month, n))


def months_back(ctx: Ctx, oldest: int, newest: int) -> Atom:
    """Calendar months from `oldest` to `newest` months ago; vague."""
    y, m = add_months(ctx.today.year, ctx.today.month, -oldest)
    return A.months(ctx, y, m, oldest - newest + 1, exact=False)


def months_ahead(ctx: Ctx, nearest: int, farthest: int) -> Atom:
    y, m = add_months(ctx.today.year, ctx.today.month, nearest)
    return A.months(ctx, y, m, farthest - nearest + 1, exact=False)


def year_offset(ctx: Ctx, n: int) -> Atom:
    return A.year(ctx, ctx.today.year + n)


def years_back(ctx: Ctx, oldest: int, newest: int) -> Atom:
    y = ctx.today.year
    return A.Atom(A.SPAN, ctx.at(date(y - oldest, 1, 1)), ctx.at(date(y - newest + 1, 1, 1)),
                  "year", exact=False)


def hours_ago(ctx: Ctx, n: int) -> Atom:
    """The clock hour that was n hours ago."""
    lo = ctx.now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=n)
    return A.Atom(A.SPAN, lo, lo + timedelta(hours=1), "hour")


def minutes_ago(ctx: Ctx, n: int, exact: bool = True) -> Atom:
    lo = ctx.now.replace(second=0, microsecond=0) - timedelta(minutes=n)
    return A.Atom(A.SPAN, lo, lo + timedelta(minutes=1), "minute", exact)


def just_now(ctx: Ctx) -> Atom:
    """刚才 / just now: the last hour up to now; vague."""
    hi = ctx.now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return A.Atom(A.SPAN, hi - timedelta(hours=1), hi, "hour", exact=False)


def during_this(ctx: Ctx, unit: str, earlier: bool) -> Atom:
    """earlier this week/month/year (up to yesterday) or later this ... (from tomorrow)."""
    t = ctx.today
    first = {"week": monday_of(t), "month": t.replace(day=1), "year": t.replace(month=1, day=1)}[unit]
    nxt = {"week": first + timedelta(days=7),
           "month": date(*add_months(t.year, t.month, 1), 1),
           "year": date(t.year + 1, 1, 1)}[unit]
    if earlier:
        return A.days(ctx, first, max(t, first + timedelta(days=1)), exact=False)
    return A.days(ctx, min(t + timedelta(days=1), nxt - timedelta(days=1)), nxt, exact=False)


def next_days(ctx: Ctx, n: int, exact: bool = True) -> Atom:
    """The next n days from tomorrow (未来三天, the next few days)."""
    return days_ahead(ctx, 1, n, exact)


def about_days_ago(ctx: Ctx, centre: int, width: int) -> Atom:
    """A vague window of `width` days centred `centre` days ago (一个半月前, a year and a
    half ago); a negative centre is ahead."""
    first = ctx.today - timedelta(days=centre + width // 2)
    return A.days(ctx, first, first + timedelta(days=width), exact=False)


def same_day(ctx: Ctx, years: int = 0, months: int = 0, weeks: int = 0) -> Atom:
    """去年的今天 / 上个月的今天 / this day last year: today's date moved back (29 Feb -> 28)."""
    t = ctx.today
    y, m = add_months(t.year, t.month, 12 * years + months)
    day = safe_date(y, m, t.day) or date(y, m, days_in_month(y, m))
    return A.days(ctx, day + timedelta(days=7 * weeks))


def same_time(ctx: Ctx, years: int = 0, months: int = 0, weeks: int = 0) -> Atom:
    """去年这个时候 / this time last year: three weeks round today's date a year back (one
    week round it a month back; the day itself a week back); vague."""
    day = same_day(ctx, years, months, weeks)
    if years == 0 and months == 0:
        return day
    assert day.lo is not None
    half = 10 if years else 3
    first = day.lo.date() - timedelta(days=half)
    return A.days(ctx, first, first + timedelta(days=2 * half + 1), exact=False)


def quarter(ctx: Ctx, y: int, q: int, **kw: Any) -> Atom | None:
    """Q1..Q4 / 第一季度: three calendar months."""
    if not 1 <= q <= 4:
        return None
    return replace(A.months(ctx, y, 3 * q - 2, 3), quarter=q, **kw)


def quarter_offset(ctx: Ctx, n: int) -> Atom | None:
    t = ctx.today
    y, m = add_months(t.year, t.month - (t.month - 1) % 3, 3 * n)
    return quarter(ctx, y, (m - 1) // 3 + 1)


# --- weekdays ----------------------------------------------------------------------------

def weekday_in_week(ctx: Ctx, weekday: int, weeks: int) -> Atom:
    """上周二 / last Tuesday (weeks=-1), 这周五 / this Friday (0), 下周五 (1)."""
    return A.days(ctx, this_week_day(ctx.today, weekday, weeks))


def bare_weekday(ctx: Ctx, weekday: int) -> Atom:
    """周二 / on Tuesday: the most recent one on or before today; in a sentence about the
    future, the first one on or after today."""
    if ctx.future:
        day = ctx.today + timedelta(days=(weekday - ctx.today.weekday()) % 7)
    else:
        day = last_on_or_before(ctx.today, weekday)
    return A.days(ctx, day, weekday=weekday)


def weekday_past(ctx: Ctx, weekday: int) -> Atom:
    """this past Tuesday: the last one strictly before today."""
    return A.days(ctx, last_before(ctx.today, weekday))


def weekday_coming(ctx: Ctx, weekday: int) -> Atom:
    """this coming Tuesday: the first one strictly after today."""
    return A.days(ctx, first_after(ctx.today, weekday))


def weekdays_ago(ctx: Ctx, weekday: int, n: int) -> Atom:
    """3 Fridays ago / 三个周五以前: the n-th Friday counted back from today (not counting
    today); a negative n counts forward (two Mondays from now)."""
    if n >= 0:
        return A.days(ctx, last_before(ctx.today, weekday) - timedelta(days=7 * (n - 1)))
    return A.days(ctx, first_after(ctx.today, weekday) + timedelta(days=7 * (-n - 1)))


# --- things named without a year ------------------------------------------------------------

def pick_year(ctx: Ctx, build: Build, started_only: bool) -> Atom | None:
    """Resolve something named without a year (10月3日, August, 春节).

    "This year" elsewhere in the sentence (a holiday, a season): this year's. Future
    wording: the first occurrence that has not ended. Otherwise the latest one that
    has started (started_only: holidays, seasons) or that starts at most
    YEARLESS_LOOKAHEAD after now (dates, months). Keeps `build` so a year named beside it
    (去年 + 8月, May 1 - May 7 2023) can move it."""
    y = ctx.today.year
    found = [a for a in (build(y - 1), build(y), build(y + 1)) if a is not None]
    chosen: Atom | None = None
    if ctx.this_year and started_only:  # "Thanksgiving at my parents' place this year"
        chosen = next((a for a in found if a.lo is not None and a.lo.year == y), None)
    elif ctx.future:
        chosen = next((a for a in found if a.hi is not None and a.hi > ctx.now), None)
    else:
        # a question about the past means one that has come ("What did I tell you on Dec
        # 20?" asked on December 7: last year's)
        ahead = not started_only and not ctx.asks_about_the_past()
        limit = ctx.now + YEARLESS_LOOKAHEAD if ahead else ctx.now
        for a in found:
            if a.lo is not None and a.lo <= limit:
                chosen = a
    if chosen is None:
        return None
    return replace(chosen, in_year=build)


def in_year_or_default(ctx: Ctx, build: Build, y: int | None, started_only: bool
                       ) -> Atom | None:
    if y is not None:
        return build(y)
    return pick_year(ctx, build, started_only)


def calendar_date(ctx: Ctx, y: int | None, m: int, d: int) -> Atom | None:
    def build(year: int) -> Atom | None:
        day = safe_date(year, m, d)
        return A.days(ctx, day) if day else None

    if safe_date(2000, m, d) is None:  # not a date in any year (leap 2000 allows 2月29日)
        return None
    return in_year_or_default(ctx, build, y, started_only=False)


def month_of_year(ctx: Ctx, m: int, y: int | None = None) -> Atom | None:
    if not 1 <= m <= 12:
        return None
    return in_year_or_default(ctx, lambda year: A.month(ctx, year, m), y, started_only=False)


def relative_month(ctx: Ctx, m: int, mod: str) -> Atom | None:
    """last / this / next August."""
    if not 1 <= m <= 12:
        return None
    y = ctx.today.year
    if mod == "this":
        return A.month(ctx, y, m)
    if mod == "last":  # the most recent August that has ended
        return A.month(ctx, y if m < ctx.today.month else y - 1, m)
    return A.month(ctx, y if m > ctx.today.month else y + 1, m)


def day_of_month(ctx: Ctx, d: int) -> Atom | None:
    """20号, "on the 5th": this month's 20th; in a sentence about the future, the first not
    before today; in one with no word of the past either, this month's or next month's,
    whichever is nearer ("moving on the 5th" said on November 24 is December 5, this month's
    5th 19 days gone; "我30号走" said on the 5th is this month's). A word of the past keeps
    this month's: 了 in Chinese often belongs to another clause ("我辞职了 … 干到10号"). A
    question about the past means the latest that has come ("What happened on the 14th?"
    asked on the 7th: last month's; Ctx.asks_about_the_past)."""
    t = ctx.today
    this, after = (safe_date(*add_months(t.year, t.month, k), d) for k in (0, 1))
    if ctx.future:
        day = this if this is not None and this >= t else after
    elif ctx.asks_about_the_past():  # the latest that has come ("14号我干嘛了" on the 7th)
        day = this if this is not None and this <= t \
            else safe_date(*add_months(t.year, t.month, -1), d)
    elif ctx.past:
        day = this
    else:
        days = [day for day in (this, after) if day is not None]
        day = min(days, key=lambda day: (abs((day - t).days), day)) if days else None
    if day is None:
        return None
    return A.days(ctx, day, dom=d)


def day_in_month(ctx: Ctx, ymonth: tuple[int, int], d: int) -> Atom | None:
    day = safe_date(ymonth[0], ymonth[1], d)
    return A.days(ctx, day) if day else None


# --- holidays and seasons -------------------------------------------------------------------

# A holiday named at most this long before it comes, in a sentence not about the past
# (Ctx.reads_ahead: a question, or a Chinese sentence, with no word of the past; an English
# statement with none and no verb in the past tense: Ctx.reads_ahead_in_english), is that one
# (春节我哪天回宜昌 / 春节回宜昌 on January 25: the coming 春节, not the one ten months ago;
# 对了国庆那个 on September 22); two months, as a date without a year looks ahead
# (YEARLESS_LOOKAHEAD) and 年前 reads the coming New Year (zh.around_new_year).
HOLIDAY_ASKED_AHEAD = timedelta(days=60)


def holiday(ctx: Ctx, key: str, y: int | None = None, mod: str | None = None,
            period: bool = False) -> Atom | None:
    """A holiday in year y; unnamed year: the latest that has started (future wording: the
    next not yet over; a question, or a sentence, with no word of the past — in English no
    verb in the past tense either — in the weeks before it: the coming one); mod
    last/this/next as in English. period: the holiday period (国庆假期, the Christmas
    holidays) rather than the day."""
    def build(year: int) -> Atom | None:
        window = holiday_window(key, year, period)
        return A.days(ctx, window[0], window[1], exact=window[2]) if window else None

    if y is None and mod is None and not ctx.this_year \
            and (ctx.reads_ahead or ctx.reads_ahead_in_english()):
        coming = next((a for a in (build(ctx.today.year), build(ctx.today.year + 1))
                       if a is not None and a.lo is not None
                       and ctx.now < a.lo <= ctx.now + HOLIDAY_ASKED_AHEAD), None)
        if coming is not None:
            return replace(coming, in_year=build)
    return with_modifier(ctx, build, y, mod)


def with_modifier(ctx: Ctx, build: Build, y: int | None, mod: str | None) -> Atom | None:
    if y is not None:
        return build(y)
    if mod is None:
        return pick_year(ctx, build, started_only=True)
    found = [a for a in (build(ctx.today.year + k) for k in (-2, -1, 0, 1, 2)) if a]
    if mod == "this":  # the one under way, else this year's
        under_way = [a for a in found if a.lo and a.hi and a.lo <= ctx.now < a.hi]
        found = under_way or [a for a in found if a.lo and a.lo.year == ctx.today.year]
        return found[0] if found else None
    if mod == "last":  # the latest one that is over
        over = [a for a in found if a.hi and a.hi <= ctx.now]
        return over[-1] if over else None
    ahead = [a for a in found if a.lo and a.lo > ctx.now]
    return ahead[0] if ahead else None


def season(ctx: Ctx, name: str, y: int | None = None, mod: str | None = None) -> Atom | None:
    """Spring Mar-May, summer Jun-Aug, autumn Sep-Nov, winter Dec-Feb (from December of the
    year named); vague. Unnamed year: the latest that has started; "last summer" = the latest
    that is over."""
    def build(year: int) -> Atom:
        return replace(A.months(ctx, year, SEASONS[name], 3, exact=False),
                       season=(year, SEASONS[name]))

    atom = with_modifier(ctx, build, y, mod)
    return replace(atom, in_year=build) if atom else None


def season_part(ctx: Ctx, op: str, span: Atom) -> Atom | None:
    """early / mid / late summer, 初夏 / 仲夏 / 夏末: the first / middle / last month."""
    if span.season is None:
        return None
    index = {"begin": 0, "early": 0, "mid": 1, "late": 2, "end": 2}.get(op)
    if index is None:
        return None
    y, m = add_months(*span.season, index)
    return A.months(ctx, y, m, 1, exact=False)


# --- relative to another date ----------------------------------------------------------------

def apply_relation(ctx: Ctx, op: str, arg: tuple[int, ...], anchor: Atom) -> Atom | None:
    """the week before / two days after / the Sunday before / the week of <anchor>.

    arg = (n, direction) with direction -1 (before) or +1 (after); a weekday op carries
    (weekday, direction)."""
    if anchor.lo is None or anchor.hi is None:
        return None
    first = anchor.lo.date()
    last = (anchor.hi - timedelta(seconds=1)).date()
    if op == "week_of":
        return A.week(ctx, first)
    n, direction = arg
    base = first if direction < 0 else last
    if op == "days":
        return A.days(ctx, base + timedelta(days=n * direction), exact=anchor.exact)
    if op == "weeks":
        return relation_weeks(ctx, n, direction, first, last, anchor.exact)
    if op == "weekday":
        day = last_before(first, n) if direction < 0 else first_after(last, n)
        return A.days(ctx, day, exact=anchor.exact)
    if op == "weekend":
        sunday = last_before(first, 6) if direction < 0 else first_after(last, 5) + \
            timedelta(days=1)
        return A.days(ctx, sunday - timedelta(days=1), sunday + timedelta(days=1),
                      exact=anchor.exact)
    if op == "months":
        y, m = add_months(base.year, base.month, n * direction)
        return A.month(ctx, y, m, exact=anchor.exact)
    if op == "years":
        return A.year(ctx, base.year + n * direction, exact=anchor.exact)
    return None


def relation_weeks(ctx: Ctx, n: int, direction: int, first: date, last: date,
                   exact: bool) -> Atom:
    """the week before X = the 7 days before X; N weeks before X = the week around X - 7N."""
    if n == 1:
        lo = first - timedelta(days=7) if direction < 0 else last + timedelta(days=1)
        return A.days(ctx, lo, lo + timedelta(days=7), "week", exact=exact)
    point = (first if direction < 0 else last) + timedelta(days=7 * n * direction)
    return A.days(ctx, point - timedelta(days=3), point + timedelta(days=4), "week",
                  exact=False)


# --- parts of months, years and weeks ---------------------------------------------------------

def nth_in_month(ctx: Ctx, op: str, y: int, m: int) -> Atom | None:
    """week:N (days 7N-6 .. 7N; week:-1 the last 7 days), weekend:N (the N-th Saturday and the
    Sunday after it), weekday:D:N (the N-th weekday D), day:N (day:-1 the last) of month m
    of year y."""
    kind, *args = op.split(":")
    n = int(args[-1])
    last = days_in_month(y, m)
    if kind == "day":
        return A.days(ctx, date(y, m, n if n > 0 else last + 1 + n)) if n <= last else None
    if kind == "week":
        first = date(y, m, 1 + 7 * (n - 1)) if n > 0 else date(y, m, last - 6)
        return A.days(ctx, first, first + timedelta(days=7), "week")
    weekday = 5 if kind == "weekend" else int(args[0])
    if n > 0:
        day = nth_weekday(y, m, weekday, n)
        if day.month != m:
            return None
    elif kind == "weekend":  # the last weekend: the last Saturday whose Sunday is in the month
        day = nth_weekday(y, m, 6, -1) - timedelta(days=1)
    else:
        day = nth_weekday(y, m, weekday, -1)
    if kind == "weekend":
        return A.days(ctx, day, day + timedelta(days=2))
    return A.days(ctx, day)


def apply_part(ctx: Ctx, op: str, span: Atom) -> Atom | None:
    """Part (begin/early/mid/late/end/h1/h2) of a calendar month, year, week or season; an
    n-th week / weekend / weekday of a month (week:1, weekend:-1, weekday:6:2)."""
    if ":" in op:
        return nth_in_month(ctx, op, *span.ymonth) if span.ymonth is not None else None
    if span.season is not None:
        return season_part(ctx, op, span)
    if span.ymonth is not None and op in MONTH_PARTS:
        y, m = span.ymonth
        d0, d1 = MONTH_PARTS[op]
        end = date(y, m, d1) if d1 else date(*add_months(y, m, 1), 1)
        return A.days(ctx, date(y, m, d0), end, exact=op in ("h1", "h2"))
    if span.year is not None and op in YEAR_PARTS:
        m0, m1 = YEAR_PARTS[op]
        return A.months(ctx, span.year, m0, m1 - m0, exact=op in ("h1", "h2"))
    if span.gran == "week" and span.lo is not None and op in WEEK_PARTS:
        d0, d1 = WEEK_PARTS[op]
        monday = span.lo.date()
        return A.days(ctx, monday + timedelta(days=d0), monday + timedelta(days=d1),
                      exact=False)
    return None


def keeping_year(atom: Atom, change: Callable[[Atom], Atom | None]) -> Atom | None:
    """change(atom), still movable to another year (去年 + 11月底, 去年 + 春节前后)."""
    changed = change(atom)
    if changed is None or atom.in_year is None:
        return changed
    build = atom.in_year

    def in_year(y: int) -> Atom | None:
        moved = build(y)
        return change(moved) if moved is not None else None

    return replace(changed, in_year=in_year)


def part_keeping_year(ctx: Ctx, op: str, atom: Atom) -> Atom | None:
    return keeping_year(atom, lambda a: apply_part(ctx, op, a))


def this_month_part(ctx: Ctx, op: str) -> Atom | None:
    return apply_part(ctx, op, month_offset(ctx, 0))


def this_year_part(ctx: Ctx, op: str) -> Atom | None:
    return apply_part(ctx, op, year_offset(ctx, 0))



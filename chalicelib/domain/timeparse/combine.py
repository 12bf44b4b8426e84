"""Merge neighbouring atoms into one expression.

Atoms arrive in text order, non-overlapping. Two neighbours merge when the text between
them (the gap) is short glue and their kinds fit together:
  range         10月1日 至 7日, from May 1 to May 7 2023, 3点到5点   -> the hull
  relation      the week before + 9 June 2023, 国庆 + 前一天          -> shifted window
  part          early + August, 2025年 + 年底                         -> part of month/year
  year          去年 + 8月 / 春节 / 夏天, summer + of 2022             -> moved into that year
  month + day   上个月 + 3号                                          -> that date
  week + day    下周 + 的周五                                         -> that weekday
  week+weekend  两周前 + 的周末, the weekend + two weeks ago               -> that week's weekend
  day + time    昨天 + 下午 + 3点, last Friday + evening              -> anchored on the day
  time + day    3pm + on Friday, the morning + of May 3               -> anchored on the day
  weekday+date  Saturday, May 3 / 10月3日（周六）                     -> the date
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, timedelta

from chalicelib.domain.timeparse import atoms as A
from chalicelib.domain.timeparse.atoms import CLOCK, DOM, PART, POD, REL, SPAN, Atom
from chalicelib.domain.timeparse.cal import add_months, monday_of
from chalicelib.domain.timeparse.resolve import apply_part, apply_relation, day_in_month
from chalicelib.domain.timeparse.span import Ctx

RANGE_GAP = re.compile(r"\s*(?:到|至|~|-|–|—|－|〜|一直到|until|till|til|to|through|thru)\s*$",
                       re.IGNORECASE)
# A weekday in brackets between a date and its time adds nothing: 2016年3月20日(日) 21时40分.
WEEKDAY_NOTE = re.compile(r"[(（](?:周|星期|礼拜)?[一二三四五六日天][)）]")
AND_GAP = re.compile(r"\s*and\s*$", re.IGNORECASE)
RANGE_PREFIX = re.compile(r"(?:从|自|(?:\b(?:from|between)\s+))$", re.IGNORECASE)
BETWEEN_PREFIX = re.compile(r"\bbetween\s+$", re.IGNORECASE)
# What may stand between a day and a time of day (昨天的下午, Friday at 3pm, May 3, in the
# evening).
GLUE = {"", "的", ",", "at", "on", "around", "about", "in", "in the", "during", "of", "by",
        ",at", ",on", ",in the"}


def combine(ctx: Ctx, atoms: list[Atom]) -> list[Atom]:
    """Merge runs of neighbours left to right; return the atoms that stand on their own.

    A first pass binds what is written together (去年 + 12月, 今年 + 2月) so that a range
    then joins whole ends (去年12月 到 今年2月)."""
    out = merge_runs(ctx, merge_runs(ctx, atoms, tight=True), tight=False)
    return [a for a in alternatives(ctx, out) if a.standalone and a.lo is not None]


# 上周四还是周五, last Thursday or Friday: the second weekday is of the first one's week
OR_GAP = re.compile(r"\s*(?:还是|或者|或是|或|抑或|or|/)\s*$", re.IGNORECASE)


def alternatives(ctx: Ctx, atoms: list[Atom]) -> list[Atom]:
    """A bare weekday offered as the other choice of a dated day ("上周四还是周五来着", "last
    Thursday or Friday?") is that weekday in the dated day's week, not this week's."""
    out = list(atoms)
    for i in range(1, len(out)):
        left, right = out[i - 1], out[i]
        if right.weekday is None or left.weekday is not None or not is_day(left) \
                or left.hi is None or left.hi - left.lo != timedelta(days=1) \
                or not OR_GAP.match(ctx.text[left.end:right.start]):
            continue
        day = monday_of(left.day) + timedelta(days=right.weekday)
        out[i] = replace(A.days(ctx, day), start=right.start, end=right.end)
    return out


def merge_runs(ctx: Ctx, atoms: list[Atom], tight: bool) -> list[Atom]:
    out: list[Atom] = []
    cur: Atom | None = None
    for atom in atoms:
        if cur is None:
            cur = atom
            continue
        merged = merge_tight(ctx, cur, atom) if tight else merge(ctx, cur, atom)
        if merged is not None:
            cur = merged
        else:
            out.append(cur)
            cur = atom
    if cur is not None:
        out.append(cur)
    return out


def merge_tight(ctx: Ctx, left: Atom, right: Atom) -> Atom | None:
    """A year, month or part written right beside what it names (去年12月, 2024年初)."""
    gap = ctx.text[left.end:right.start].strip()
    if gap in ("'s", "’s"):  # last year's Christmas
        gap = "的"
    if gap not in ("", "的"):
        return None
    merged = merge_part(ctx, left, right, gap) or merge_year(left, right, gap) \
        or merge_calendar(ctx, left, right, gap)
    return replace(merged, start=left.start, end=right.end) if merged is not None else None


def merge(ctx: Ctx, left: Atom, right: Atom) -> Atom | None:
    raw_gap = ctx.text[left.end:right.start]
    if len(raw_gap) > 12:
        return None
    ranged = merge_range(ctx, left, right, raw_gap)
    if ranged is not None:
        return ranged
    gap = re.sub(r"\s+", " ", WEEKDAY_NOTE.sub("", raw_gap)).strip().lower() \
        .replace(" ,", ",").replace(", ", ",")
    merged = (merge_relation(ctx, left, right, gap)
              or merge_part(ctx, left, right, gap)
              or merge_year(left, right, gap)
              or merge_calendar(ctx, left, right, gap)
              or merge_day_time(ctx, left, right, gap)
              or merge_weekday_date(left, right, gap))
    if merged is None:
        return None
    end = right.end
    if ctx.text[end:end + 1] == ")" and "(" in ctx.text[left.start:end]:
        end += 1  # 10月3日（周六）: take the closing bracket too
    return replace(merged, start=left.start, end=end)


def is_day(atom: Atom) -> bool:
    """A whole single day (昨天, 10月3日, 3号, Friday)."""
    return atom.kind in (SPAN, DOM) and atom.day is not None and atom.lo is not None


# --- ranges ----------------------------------------------------------------------------------

def merge_range(ctx: Ctx, left: Atom, right: Atom, raw_gap: str) -> Atom | None:
    before = ctx.text[:left.start]
    between = BETWEEN_PREFIX.search(before)
    if not (RANGE_GAP.match(raw_gap) or (between and AND_GAP.match(raw_gap))):
        return None
    if left.kind not in (SPAN, POD, CLOCK, DOM) or right.kind not in (SPAN, POD, CLOCK, DOM):
        return None
    if left.lo is None or left.hi is None:
        return None
    text_start, text_end = left.start, right.end
    left, right_opt = align_range_ends(ctx, left, right)
    if right_opt is None or right_opt.lo is None or right_opt.hi is None:
        return None
    right = right_opt
    end = right.lo if right.kind == CLOCK else right.hi
    if end is None or left.lo is None or end <= left.lo:
        return None
    prefix = RANGE_PREFIX.search(before)
    start = prefix.start() if prefix else text_start
    gran = A.coarser(left.gran, right.gran)
    return Atom(SPAN, left.lo, end, gran, left.exact and right.exact, start=start,
                end=text_end, day=left.day if left.day == right.day else None)


def align_range_ends(ctx: Ctx, left: Atom, right: Atom) -> tuple[Atom, Atom | None]:
    """Give the right end what it left out (10月1日至7日, 3点到5点, May 1 - May 7 2023)."""
    assert left.lo is not None
    if right.kind == DOM and right.dom is not None:
        base = left.day or left.lo.date()
        moved = day_in_month(ctx, (base.year, base.month), right.dom)
        if moved is not None and moved.lo is not None and moved.lo < left.lo:
            moved = day_in_month(ctx, add_months(base.year, base.month, 1), right.dom)
        return left, moved
    if right.kind == CLOCK and left.kind in (CLOCK, POD) and left.day is not None:
        return left, range_clock(ctx, left, right)
    if right.kind == CLOCK and is_day(left):  # 10月3日 to 5pm: not a range we read
        return left, None
    if right.kind == POD and left.day is not None and right.pod is not None:
        return left, A.pod(ctx, *right.pod, day=left.day)
    if left.in_year is not None and right.year is None and right.lo is not None \
            and right.in_year is None and right.hi is not None and right.gran != "hour":
        # May 1 - May 7 2023: the year named at the end holds for the start too
        moved_left = left.in_year(right.lo.year)
        if moved_left is not None and moved_left.lo is not None and moved_left.lo >= right.hi:
            moved_left = left.in_year(right.lo.year - 1)
        if moved_left is not None:
            left = replace(moved_left, start=left.start, end=left.end)
    elif right.in_year is not None and right.lo is not None and right.lo < left.lo:
        moved = right.in_year(left.lo.year)
        if moved is not None and moved.hi is not None and moved.hi <= left.lo:
            moved = right.in_year(left.lo.year + 1)
        return left, moved
    if right.weekday is not None and right.lo is not None and right.lo < left.lo:
        return left, A.shift_days(ctx, right, 7 * ((left.lo - right.lo).days // 7 + 1))
    return left, right


def range_clock(ctx: Ctx, left: Atom, right: Atom) -> Atom:
    """The right clock on the left's day, read in the left's half of the day (下午3点到5点)."""
    assert left.day is not None and right.hour is not None and left.lo is not None
    hour = right.hour
    if not right.fixed:
        if left.pod is not None:
            hour = A.fit_hour(hour, left.pod)
        elif hour < 12 and (left.lo.hour >= 12 or A.default_hour(hour) != hour):
            hour += 12
    return A.clock(ctx, hour, right.minute, True, day=left.day)


# --- relations and parts -----------------------------------------------------------------------

# a shift after a date (国庆 + 前一天, 春节 + 前一周, 中秋 + 后两个月) → apply_relation's op
_SHIFTS = {"shift": "days", "shift_weeks": "weeks", "shift_months": "months"}


def merge_relation(ctx: Ctx, left: Atom, right: Atom, gap: str) -> Atom | None:
    if left.kind == REL and gap in ("", "the") and right.kind == SPAN:
        return apply_relation(ctx, left.op or "", left.arg, right)
    if right.op in _SHIFTS and left.kind == SPAN and gap in ("", "的") and left.lo:
        return apply_relation(ctx, _SHIFTS[right.op], right.arg, left)
    return None


def merge_part(ctx: Ctx, left: Atom, right: Atom, gap: str) -> Atom | None:
    if left.kind == PART and right.kind == SPAN and gap in ("", "the"):
        return apply_part(ctx, left.op or "", right)
    if right.kind == PART and left.kind == SPAN and gap in ("", "的"):
        return apply_part(ctx, right.op or "", left)
    return None


# --- years, months and weeks --------------------------------------------------------------------

def merge_year(left: Atom, right: Atom, gap: str) -> Atom | None:
    """去年 + 8月 / 春节 / 夏天 / 10月3日; summer + of 2022; the month before X is elsewhere."""
    if left.year is not None and left.kind == SPAN and right.in_year is not None \
            and gap in ("", "的"):
        return right.in_year(left.year)
    if right.year is not None and left.in_year is not None and left.kind == SPAN \
            and gap in ("of", ",", "", "in"):
        return left.in_year(right.year)
    return None


def merge_calendar(ctx: Ctx, left: Atom, right: Atom, gap: str) -> Atom | None:
    if left.ymonth is not None and right.kind == DOM and right.dom is not None \
            and gap in ("", "的"):
        return day_in_month(ctx, left.ymonth, right.dom)
    if left.gran == "week" and left.kind == SPAN and left.lo is not None \
            and right.weekday is not None and gap in ("", "的", ",", "on"):
        monday = monday_of(left.lo.date())
        return A.days(ctx, monday + timedelta(days=right.weekday))
    if left.weekday is not None and right.gran == "week" and right.kind == SPAN \
            and right.lo is not None and right.day is None and gap in ("", ","):
        monday = monday_of(right.lo.date())  # Friday next week
        return A.days(ctx, monday + timedelta(days=left.weekday))
    # 两周前的周末, 上上周的周末, the weekend two weeks ago / of last week: that week's weekend
    if _a_week(left) and right.bare_weekend and gap in ("", "的", "'s"):
        return A.weekend(ctx, left.lo.date())
    if left.bare_weekend and _a_week(right) and gap in ("", "of", ","):
        return A.weekend(ctx, right.lo.date())
    return None


def _a_week(atom: Atom) -> bool:
    return atom.gran == "week" and atom.kind == SPAN and atom.lo is not None \
        and atom.hi is not None and (atom.hi - atom.lo).days == 7


# --- a day and a time of day ---------------------------------------------------------------------

def merge_day_time(ctx: Ctx, left: Atom, right: Atom, gap: str) -> Atom | None:
    if is_day(left) and right.kind in (POD, CLOCK) and gap in GLUE:
        assert left.day is not None
        return on_day(ctx, right, left.day, left.exact)
    if left.kind == POD and right.kind == CLOCK and gap in ("", "的", "at", "around", "about"):
        return clock_in_pod(ctx, left, right)
    if left.kind == CLOCK and right.kind == POD and gap in ("", "in the", "in") \
            and left.day is not None and right.pod is not None:
        return clock_in_pod(ctx, A.pod(ctx, *right.pod, day=left.day), left)
    if left.kind in (POD, CLOCK) and is_day(right) and gap in ("on", "of", ",", "", ",on"):
        assert right.day is not None
        return on_day(ctx, left, right.day, right.exact)
    if right.kind == POD and gap in ("", "的") and few_days(left):
        return left  # 上周末晚上: the evenings of those days are no one window; the days are
    return None


def few_days(atom: Atom) -> bool:
    """A span of two to seven whole days (a weekend, 国庆假期)."""
    return atom.kind == SPAN and atom.lo is not None and atom.hi is not None \
        and timedelta(days=1) < atom.hi - atom.lo <= timedelta(days=7)


def on_day(ctx: Ctx, atom: Atom, day: date, exact: bool) -> Atom | None:
    if atom.kind == POD and atom.pod is not None:
        return replace(A.pod(ctx, *atom.pod, day=day), exact=exact)
    if atom.kind == CLOCK and atom.hour is not None:
        return replace(A.clock(ctx, atom.hour, atom.minute, atom.fixed, day=day), exact=exact)
    return None


def clock_in_pod(ctx: Ctx, pod: Atom, clock: Atom) -> Atom | None:
    """下午 + 3点 / 下午 02:26 -> 15:00 / 14:26; a clock past noon (15:00, 3pm) is kept."""
    if pod.pod is None or clock.hour is None or pod.day is None:
        return None
    hour = clock.hour if clock.hour >= 12 else A.fit_hour(clock.hour, pod.pod)
    return A.clock(ctx, hour, clock.minute, True, day=pod.day)


def merge_weekday_date(left: Atom, right: Atom, gap: str) -> Atom | None:
    """A weekday written beside a date adds nothing: Saturday, May 3 / 10月3日（周六）. A
    weekday after a date and a comma is another day unless it is the date's own: "Dec 16 周三,
    周四 Richard 要飞北京" and "周三，周四我都在" name two days, not the first one."""
    gap = gap.strip("()")
    if left.weekday is not None and right.weekday is None and right.kind == SPAN \
            and right.day is not None and gap in ("", ",", "the"):
        return right
    if right.weekday is not None and left.weekday is None and left.kind == SPAN \
            and left.day is not None and gap in ("", ",", "(", "（") \
            and (gap != "," or left.day.weekday() == right.weekday):
        return left
    return None

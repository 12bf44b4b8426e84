"""English relative forms: today, 3 days ago, last Tuesday, next week, this morning, 3pm,
recently, the week before <date>, two days after <date> ..."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from chalicelib.domain.timeparse import atoms as A
from chalicelib.domain.timeparse import resolve as R
from chalicelib.domain.timeparse.atoms import Atom
from chalicelib.domain.timeparse.en_dates import previous_word
from chalicelib.domain.timeparse.numerals import EN_NUM, FEW, en_to_int
from chalicelib.domain.timeparse.rules import RuleSet
from chalicelib.domain.timeparse.span import Ctx

RULES = RuleSet()
# ASCII: \b must see a boundary between Chinese and English (然后last Friday).
IC = re.IGNORECASE | re.ASCII

WEEKDAYS = {"monday": 0, "tuesday": 1, "tues": 1, "wednesday": 2, "weds": 2, "thursday": 3,
            "thurs": 3, "friday": 4, "saturday": 5, "sunday": 6}
WD = "|".join(WEEKDAYS)
# Parts of the day: hours [h0, h1) on the day named; night runs into the next morning.
PODS = {"morning": (6, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}
UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
VAGUE_COUNTS = {"a couple of": (2, 3), "a couple": (2, 3), "couple of": (2, 3),
                "a few": FEW, "few": FEW, "several": FEW, "some": FEW}
COUNT = rf"(?P<n>a couple of|a couple|a few|several|some|half an?|{EN_NUM})"
UNIT = r"(?P<u>min(?:ute)?|hour|hr|day|night|weekend|week|month|year)s?"
# "haven't talked in a few days", "wasn't built in a day": a duration, not a time ahead.
NEGATED = re.compile(r"(?:n['’]t|\bnot|\bnever)\b[^.!?;]*$", re.IGNORECASE)


def unit_name(text: str) -> str:
    word = text.lower()
    return {"min": "minute", "hr": "hour"}.get(word, word)


def offset(word: str | None) -> int:
    return {"last": -1, "previous": -1, "this": 0, "next": 1, "following": 1,
            "coming": 1}[(word or "this").lower().split()[-1]]


# --- days ----------------------------------------------------------------------------------

@RULES.add(r"\b(?P<w>today|yesterday|tomorrow)\b", IC, needs="today yesterday tomorrow")
def day_word(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.day_offset(ctx, {"today": 0, "yesterday": -1, "tomorrow": 1}[m["w"].lower()])


@RULES.add(rf"\b{COUNT}\s+{UNIT}\s+(?:ago|back)\b", IC, needs="ago back")
def ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """3 days ago / a week ago / a few months ago / half an hour ago."""
    unit, count = unit_name(m["u"]), m["n"].lower()
    if count.startswith("half"):
        return half_ago(ctx, unit)
    vague = VAGUE_COUNTS.get(count)
    if vague:
        return vague_ago(ctx, unit, *vague)
    n = en_to_int(count)
    return counted_ago(ctx, unit, n) if n is not None else None


def counted_ago(ctx: Ctx, unit: str, n: int) -> Atom:
    """The whole unit that was n units ago: that minute / hour / day / night / weekend /
    calendar week / month / year."""
    if unit == "minute":
        return R.minutes_ago(ctx, n)
    if unit == "hour":
        return R.hours_ago(ctx, n)
    if unit == "night":
        return A.pod(ctx, *PODS["night"], day=ctx.today - timedelta(days=n))
    if unit == "weekend":
        return R.weekend_offset(ctx, -n)
    offsets = {"day": R.day_offset, "week": R.week_offset, "month": R.month_offset,
               "year": R.year_offset}
    return offsets[unit](ctx, -n)


def half_ago(ctx: Ctx, unit: str) -> Atom | None:
    if unit == "hour":
        return R.minutes_ago(ctx, 30, exact=False)
    if unit == "year":
        return R.months_back(ctx, 7, 5)
    return None


def vague_ago(ctx: Ctx, unit: str, lo: int, hi: int) -> Atom | None:
    if unit == "day":
        return R.days_back(ctx, hi, lo)
    if unit in ("week", "weekend"):
        return R.weeks_back(ctx, hi, lo)
    if unit == "month":
        return R.months_back(ctx, hi, lo)
    if unit == "year":
        return R.years_back(ctx, hi, lo)
    return None


@RULES.add(rf"\b(?P<within>in|within)\s+{COUNT}\s+(?P<u>hour|day|week|month|year)s?\b"
           r"(?!\s+(?:ago|old|in a row))", IC, needs="hour day week month year")
@RULES.add(rf"\b{COUNT}\s+(?P<u>hour|day|week|month|year)s?\s+from\s+now\b", IC,
           needs="hour day week month year")
def later(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """in 3 days / in two weeks / 3 days from now (in a minute is not a time); within 3 days
    is the vague window from today to then."""
    unit, count = m["u"].lower(), m["n"].lower()
    if NEGATED.search(ctx.text, max(0, m.start() - 60), m.start()):
        return None
    if (m.groupdict().get("within") or "").lower() == "within" and unit != "hour":
        n = en_to_int(count) or VAGUE_COUNTS.get(count, FEW)[1]
        return R.days_ahead(ctx, 0, n * UNIT_DAYS[unit])
    vague = VAGUE_COUNTS.get(count)
    if vague:
        return R.days_ahead(ctx, vague[0] * UNIT_DAYS[unit], vague[1] * UNIT_DAYS[unit]) \
            if unit != "hour" else None
    n = en_to_int(count)
    if n is None:
        return None
    if unit == "hour":
        return R.hours_ago(ctx, -n)
    if unit == "month":
        return R.month_offset(ctx, n)
    if unit == "year":
        return R.year_offset(ctx, n)
    return R.day_offset(ctx, n * UNIT_DAYS[unit])


@RULES.add(rf"\b(?:(?:in|over|during|for|within)\s+)?(?:the|this)\s+(?:past|last)\s+"
           rf"(?:(?P<n>{EN_NUM}|few|couple of|couple)\s+)?(?P<u>day|week|month|year)s?\b"
           r"(?!\s+of\b)",
           IC, needs="past last")
def rolling(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the past week / the last 3 days / over the past few months: up to today."""
    count = (m["n"] or "one").lower()
    days = UNIT_DAYS[m["u"].lower()]
    if count in ("few", "couple", "couple of"):
        return R.last_days(ctx, days * (5 if count == "few" else 3), exact=False)
    n = en_to_int(count)
    return R.last_days(ctx, n * days) if n else None


@RULES.add(r"\b(?:recently|lately|of late|these days|not long ago|a little while ago"
           r"|(?P<few>the other day|a few days back)|(?P<while>a while ago|a while back"
           r"|some time ago)|(?P<now>just now|a moment ago|moments ago))\b", IC,
           needs="recently lately late day other while ago back now moment")
def vague_recent(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    if m["few"]:
        return R.days_back(ctx, FEW[1], FEW[0])
    if m["while"]:
        return R.a_while_ago(ctx)
    if m["now"]:
        return R.just_now(ctx)
    return R.recently(ctx)


@RULES.add(r"\b(?P<w>earlier|later)\s+this\s+(?P<u>week|month|year)\b", IC, needs="earlier later")
def during_this(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return R.during_this(ctx, m["u"].lower(), m["w"].lower() == "earlier")


# --- weeks, weekdays, months, years ------------------------------------------------------------

@RULES.add(rf"(?<!every )(?<!that )\b(?:(?P<mod>last|this|next|this past|this coming|coming)\s+)?"
           rf"(?P<wd>{WD})\b", IC, needs=" ".join(WEEKDAYS))
def weekday(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """Tuesday / on Tuesday (latest on or before today), last / this / next Tuesday (the
    Tuesday of the previous / current / next Monday-first week), this past / coming Tuesday."""
    wd = WEEKDAYS[m["wd"].lower()]
    mod = (m["mod"] or "").lower()
    if not mod:
        return R.bare_weekday(ctx, wd)
    if mod == "this past":
        return R.weekday_past(ctx, wd)
    if mod in ("this coming", "coming"):
        return R.weekday_coming(ctx, wd)
    return R.weekday_in_week(ctx, wd, offset(mod))


@RULES.add(r"\b(?:(?P<mod>last|this|next|the following|the previous|this coming|the coming)\s+"
           r"(?P<u>week|month|year)"
           r"|the\s+(?P<u2>week|month|year)\s+(?P<rel>before last|after next))"
           r"\b(?!end)", IC, needs="week month year")
def calendar_unit(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """last week / this month / next year / the week before last (weeks start on Monday)."""
    unit = (m["u"] or m["u2"]).lower()
    n = offset(m["mod"]) if m["mod"] else (-2 if m["rel"].lower() == "before last" else 2)
    return {"week": R.week_offset, "month": R.month_offset, "year": R.year_offset}[unit](ctx, n)


@RULES.add(r"\b(?:(?P<mod>last|this|next|this past|this coming|the coming)\s+weekend"
           r"|(?:(?:over|on|at|during)\s+)?the\s+weekend(?P<rel>\s+before\s+last)?)\b", IC,
           needs="weekend")
def weekend(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """last / this / next weekend (Sat-Sun of the previous / current / next week); the
    weekend: the one under way, else the last one (the next one in a plan)."""
    if m["rel"]:
        return R.weekend_offset(ctx, -2)
    if m["mod"] is None:
        return R.bare_weekend(ctx)
    mod = m["mod"].lower()
    if mod == "this past":
        return R.weekend_offset(ctx, -1 if ctx.today.weekday() < 5 else 0)
    return R.weekend_offset(ctx, offset(mod))


# --- parts of the day and clock times ------------------------------------------------------------

@RULES.add(r"\bthis\s+(?P<p>morning|afternoon|evening)\b|\b(?P<t>tonight)\b"
           r"|\blast\s+(?P<l>night|evening)\b|\bthe\s+night\s+before\s+(?P<b>last)\b", IC,
           needs="morning afternoon evening tonight night")
def pod_today(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """this morning / tonight (today's night) / last night (yesterday's night) / the night
    before last."""
    if m["l"] or m["b"]:
        back = -2 if m["b"] else -1  # the night before last: two nights back
        return A.pod(ctx, *PODS[(m["l"] or "night").lower()], day=R.day_offset(ctx, back).day)
    return A.pod(ctx, *PODS[(m["p"] or "night").lower()], day=ctx.today)


@RULES.add(r"\b(?:(?:in|during)\s+the\s+|the\s+|at\s+)?(?P<p>morning|afternoon|evening|night)\b",
           IC,
           needs="morning afternoon evening night")
def pod(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """morning / in the evening: only with a day (yesterday morning, Friday night)."""
    return A.pod(ctx, *PODS[m["p"].lower()], standalone=False)


@RULES.add(r"\b(?P<h>1[0-2]|0?[1-9])(?::(?P<m>[0-5]\d))?\s*(?P<ap>[ap])\.?m\b\.?", IC, needs="#")
def clock_ampm(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """3pm / 3:30 pm / 11 a.m."""
    hour = int(m["h"]) % 12 + (12 if m["ap"].lower() == "p" else 0)
    return A.clock(ctx, hour, int(m["m"]) if m["m"] else None, True)


@RULES.add(r"\b(?P<h>1[0-2]|[1-9])\s*o['’]?clock\b", IC, needs="clock")
def clock_oclock(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return A.clock(ctx, int(m["h"]), None, False)


CLOCK_CONTEXT = ("at", "around", "about", "by", "until", "till")


@RULES.add(r"\b(?P<h>1[0-2]|[1-9])\b(?![:.]\d|\s*(?:%|percent|years?|people|times|days?|weeks?"
           r"|months?|minutes?|hours?|of\b|in a row|out of))", IC, needs="#")
def clock_bare(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """at 3: a clock only next to a day or a part of day (yesterday at 3, at 7 in the evening)."""
    if previous_word(ctx.text, m.start()) not in CLOCK_CONTEXT:
        return None
    return A.clock(ctx, int(m["h"]), None, False, standalone=False)


@RULES.add(r"\b(?:noon|midday)\b", IC, needs="noon midday")
def noon(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    return A.clock(ctx, 12, None, True)


# --- relative to another date ----------------------------------------------------------------

@RULES.add(rf"\bthe\s+(?P<u>day|week|weekend|month|year|{WD})\s+(?P<dir>before|after|prior\s+to"
           r"|following)(?=\s)"
           rf"|\b(?P<n>{EN_NUM})\s+(?P<u2>day|week|month|year)s?\s+"
           r"(?P<dir2>before|after|prior\s+to)(?=\s)"
           r"|\b(?P<of>the\s+week\s+of)(?=\s)", IC, needs="before after prior following week")
def relation(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the week before / the Sunday before / two days after / the week of + a date."""
    if m["of"]:
        return A.rel("week_of")
    direction = 1 if (m["dir"] or m["dir2"]).lower() in ("after", "following") else -1
    unit = (m["u"] or m["u2"]).lower()
    n = en_to_int(m["n"]) if m["n"] else 1
    if n is None:
        return None
    if unit in WEEKDAYS:
        return A.rel("weekday", (WEEKDAYS[unit], direction))
    if unit == "weekend":
        return A.rel("weekend", (1, direction))
    return A.rel(unit + "s", (n, direction))


@RULES.add(r"\b(?:the\s+)?(?P<d>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)\b", IC, needs="#")
def ordinal_day(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the 7th: a day of the month, only as a range end or after a month."""
    atom = R.day_of_month(ctx, int(m["d"]))
    return replace(atom, kind=A.DOM, standalone=False) if atom else None

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
UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
VAGUE_COUNTS = {"a couple of": (2, 3), "a couple": (2, 3), "couple of": (2, 3),
                "a few": FEW, "few": FEW, "several": FEW, "some": FEW}
COUNT = rf"(?P<n>a couple of|a couple|a few|couple of|few|several|some|half an?|{EN_NUM})"
UNIT = r"(?P<u>min(?:ute)?|hour|hr|day|night|weekend|week|fortnight|month|year|decade)s?"
# A match at the start of the text or of a sentence.
SENTENCE_START = re.compile(r"(?:^|[.!?;:,，。！？]\s*)\S")
# "haven't talked in a few days", "wasn't built in a day": a duration, not a time ahead.
NEGATED = re.compile(r"(?:n['’]t|\bnot|\bnever)\b[^.!?;]*$", re.IGNORECASE)


def unit_name(text: str) -> str:
    word = text.lower()
    return {"min": "minute", "hr": "hour"}.get(word, word)


def offset(word: str | None) -> int:
    return {"last": -1, "previous": -1, "this": 0, "next": 1, "following": 1,
            "coming": 1}[(word or "this").lower().split()[-1]]


# --- days ----------------------------------------------------------------------------------

@RULES.add(r"\b(?:(?P<two>(?:the\s+)?day\s+(?:before|after)\s+)|(?P<ereyesterday>ereyesterday))?"
           r"(?P<w>today|yesterday|tomorrow|tmrw?|tmw)\b", IC,
           needs="today yesterday tomorrow tmr tmrw tmw")
def day_word(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """today / yesterday / tomorrow (chat's tmr, tmrw) / (the) day before yesterday / (the) day
    after tomorrow."""
    word = m["w"].lower()
    n = {"today": 0, "yesterday": -1}.get(word, 1)
    if m["two"]:
        if n == 0 or ("before" in m["two"].lower()) != (n < 0):
            return None
        n *= 2
    return R.day_offset(ctx, n)


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


@RULES.add(rf"\b{COUNT}\s+{UNIT}(?=\s*,?\s+(?:now\s+)?(?:ever\s+)?since\b)", IC, needs="since")
def duration_since(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """"I've known them for 4 years, since I moved" / "it's been two weeks since we met": what
    follows "since" happened that long ago, so it is dated like "4 years ago"."""
    return ago(ctx, m)


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
    if unit == "fortnight":  # a fortnight ago = two weeks ago
        return R.week_offset(ctx, -2 * n)
    if unit == "decade":  # a decade ago = the calendar year ten back
        return R.year_offset(ctx, -10 * n)
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
    if unit == "fortnight":
        return R.weeks_back(ctx, 2 * hi, 2 * lo)
    if unit == "month":
        return R.months_back(ctx, hi, lo)
    if unit == "year":
        return R.years_back(ctx, hi, lo)
    return None


@RULES.add(rf"\b(?P<within>in|within)\s+(?:(?:about|around|roughly|approximately|just)\s+)?{COUNT}\s+"
           r"(?P<u>min(?:ute)?|hour|hr|day|week|fortnight|month|year)s?"
           r"(?:['’]?\s+time)?\b(?!\s+(?:ago|old|in a row))", IC,
           needs="min minute hour hr day week fortnight month year")
@RULES.add(rf"\b{COUNT}\s+(?P<u>min(?:ute)?|hour|hr|day|week|fortnight|month|year|decade)s?\s+"
           r"(?:from\s+(?:now|today)|hence)\b",
           IC, needs="min minute hour hr day week fortnight month year decade")
def later(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """in 3 days / in two weeks / 3 days from now (in a minute is not a time); within 3 days
    is the vague window from today to then."""
    unit, count = unit_name(m["u"]), m["n"].lower()
    if count.startswith("half"):
        return None
    if unit in ("minute", "hour") and not (ctx.future or SENTENCE_START.search(
            ctx.text, max(0, m.start() - 3), m.start() + 1)):
        return None  # "scored 3 goals in 5 minutes", "ran it in 3 hours": a duration
    if unit == "minute":  # in 20 minutes; "in a minute" is not a time
        n = en_to_int(count)
        return R.minutes_ago(ctx, -n) if n and count not in ("a", "an", "one") else None
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
    if unit in ("year", "decade"):
        return R.year_offset(ctx, n * (10 if unit == "decade" else 1))
    return R.day_offset(ctx, n * UNIT_DAYS[unit])


@RULES.add(rf"\b(?:(?:in|over|during|for|within)\s+)?(?:the|this)\s+(?:past|last)\s+"
           rf"(?:(?P<n>{EN_NUM}|few|couple of|couple)\s+)?(?P<u>day|week|fortnight|month|year)s?\b"
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


@RULES.add(r"\b(?:recently|lately|of late|these days|not (?:so |that |too )?long ago|a little while ago"
           r"|a short while ago"
           r"|(?P<few>the other (?:day|night)|a few days back)|(?P<while>a while ago|a while back"
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

ABBREVIATED = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}


@RULES.add(rf"(?<!every )(?<!that )\b(?:(?P<mod>last|this|next|this past|this coming|coming)\s+)?"
           rf"(?P<wd>{WD})\b"
           r"|\b(?P<mod2>last|this|next|this past|this coming|on)\s+(?P<ab>tue|wed|thu|fri)\b\.?"
           r"|\b(?P<mod3>last|next)\s+(?P<ab2>mon|sat|sun)\b\.?", IC,
           needs=" ".join(WEEKDAYS) + " " + " ".join(ABBREVIATED))
def weekday(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """Tuesday / on Tuesday (latest on or before today); last Tuesday / this past Tuesday (the
    latest strictly before today); this / next Tuesday (the Tuesday of the current / next
    Monday-first week); this coming Tuesday (the first strictly after today)."""
    if m["wd"] is None:  # last Fri / next Tue / on Thu
        wd = ABBREVIATED[(m["ab"] or m["ab2"]).lower()]
        mod = (m["mod2"] or m["mod3"]).lower()
        mod = "" if mod == "on" else mod
    else:
        wd = WEEKDAYS[m["wd"].lower()]
        mod = (m["mod"] or "").lower()
    if not mod:
        return R.bare_weekday(ctx, wd)
    if mod in ("this past", "last"):  # the last one strictly before today (see the docs)
        return R.weekday_past(ctx, wd)
    if mod in ("this coming", "coming"):
        return R.weekday_coming(ctx, wd)
    return R.weekday_in_week(ctx, wd, offset(mod))


# "a week on Thursday", "Thursday week", "two weeks on Friday", "a week today", "a fortnight
# tomorrow" (British), "a week from Thursday" (American): the day named, the next one on or
# after today, and that many weeks after it.
@RULES.add(rf"\b(?P<n>a|one|two|three|four|\d)\s+(?P<u>weeks?|fortnights?)\s+"
           rf"(?:(?:on|from|after)\s+)?(?P<day>{WD}|today|tomorrow)\b"
           rf"|(?<!every )\b(?P<day2>{WD}|tomorrow)\s+(?P<u2>week|fortnight)\b(?!['’]?s\b)", IC,
           needs="week weeks fortnight fortnights")
def weeks_on(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """Thursday week / a week on Thursday: a week after the coming Thursday (today's, said
    on a Thursday); a week today / tomorrow: seven days after it."""
    day = (m["day"] or m["day2"]).lower()
    weeks = 1 if m["day2"] else (en_to_int(m["n"]) or 1)
    weeks *= 2 if (m["u"] or m["u2"]).lower().startswith("fortnight") else 1
    if day in ("today", "tomorrow"):
        first = ctx.today + timedelta(days=int(day == "tomorrow"))
    else:
        first = ctx.today + timedelta(days=(WEEKDAYS[day] - ctx.today.weekday()) % 7)
    return A.days(ctx, first + timedelta(days=7 * weeks))


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
           r"|(?:(?:over|on|at|during)\s+)?the\s+weekend(?P<rel>\s+before\s+last|\s+after\s+next)?)\b",
           IC,
           needs="weekend")
def weekend(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """last / this / next weekend (Sat-Sun of the previous / current / next week); the
    weekend: the one under way, else the last one (the next one in a plan)."""
    if m["rel"]:
        return R.weekend_offset(ctx, 2 if "next" in m["rel"].lower() else -2)
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


# A meal names the part of a day it is eaten in, and only beside a day ("yesterday at lunch",
# "over dinner on Friday"): alone it says what was eaten, not when.
MEALS = {"breakfast": (6, 10), "brunch": (10, 13), "lunch": (11, 14), "dinner": (17, 21),
         "supper": (17, 21)}


@RULES.add(r"\b(?:at|over|during|after|before)\s+(?P<p>breakfast|brunch|lunch|dinner|supper)\b", IC,
           needs="breakfast brunch lunch dinner supper")
def meal(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    h0, h1 = MEALS[m["p"].lower()]
    return A.pod(ctx, h0, h1, standalone=False)


@RULES.add(r"\b(?P<h>1[0-2]|0?[1-9])(?:[:.](?P<m>[0-5]\d))?\s*(?P<ap>[ap])\.?m\b\.?", IC, needs="#")
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

# After "the week before" these end the phrase: it is then relative to today.
ENDS_PHRASE = re.compile(r"\s*(?:$|[.,;:!?)\-–—]|(?:and|but|so|too|then|though|again|anyway"
                         r"|as well|already|actually|or)\b)", re.IGNORECASE)


@RULES.add(rf"\bthe\s+(?P<u>day|week|weekend|month|year|{WD})\s+(?P<dir>before|after|prior\s+to"
           r"|following)(?=\s|$|[.,;:!?)])"
           rf"|\b(?P<n>{EN_NUM})\s+(?P<u2>day|week|month|year)s?\s+"
           r"(?P<dir2>before|after|prior\s+to)(?=\s|$|[.,;:!?)])"
           r"|\b(?P<of>the\s+week\s+of)(?=\s)", IC, needs="before after prior following week")
def relation(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the week before / the Sunday before / two days after / the week of + a date. With no
    date after it, "the Friday before" / "the week before" is relative to today."""
    if m["of"]:
        return A.rel("week_of")
    word = (m["dir"] or m["dir2"]).lower()
    direction = 1 if word in ("after", "following") else -1
    unit = (m["u"] or m["u2"]).lower()
    n = en_to_int(m["n"]) if m["n"] else 1
    if n is None:
        return None
    if unit in WEEKDAYS:
        atom = A.rel("weekday", (WEEKDAYS[unit], direction))
    elif unit == "weekend":
        atom = A.rel("weekend", (1, direction))
    else:
        atom = A.rel(unit + "s", (n, direction))
    if word != "before" or not ENDS_PHRASE.match(ctx.text, m.end()):
        return atom
    today = R.day_offset(ctx, 0)
    fallback = R.apply_relation(ctx, atom.op or "", atom.arg, today)
    if fallback is None:
        return atom
    return replace(atom, lo=fallback.lo, hi=fallback.hi, gran=fallback.gran,
                   exact=fallback.exact, day=fallback.day, standalone=True)


@RULES.add(rf"\b(?P<n>{EN_NUM}|a couple of|a few)\s+(?P<wd>{WD})s\s+(?P<dir>ago|back|from\s+now)\b"
           rf"|\b(?:the\s+)?(?P<wd2>{WD})\s+(?P<rel>before\s+last|after\s+next)\b", IC,
           needs=" ".join(WEEKDAYS))
def counted_weekday(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """3 Fridays ago (the third Friday back, today not counted) / two Mondays from now / the
    Friday before last (the one before last Friday) / the Friday after next (the Friday of the
    week after next week)."""
    if m["rel"]:
        wd = WEEKDAYS[m["wd2"].lower()]
        if "last" in m["rel"].lower():  # the one before last Friday
            return R.weekdays_ago(ctx, wd, 2)
        return R.weekday_in_week(ctx, wd, 2)
    count = m["n"].lower()
    n = {"a couple of": 2, "a few": 3}.get(count) or en_to_int(count)
    if not n or n > 60:
        return None
    atom = R.weekdays_ago(ctx, WEEKDAYS[m["wd"].lower()], n if m["dir"].lower() != "from now"
                          and not m["dir"].lower().startswith("from") else -n)
    return replace(atom, exact=False) if count in ("a couple of", "a few") else atom


@RULES.add(rf"\ba\s+week\s+from\s+(?:this\s+)?(?P<wd>{WD})\b", IC, needs=" ".join(WEEKDAYS))
def week_from_weekday(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """a week from Monday: the coming Monday, seven days on."""
    atom = R.weekday_coming(ctx, WEEKDAYS[m["wd"].lower()])
    if atom.lo is None or atom.hi is None:
        return None
    week = timedelta(days=7)
    return replace(atom, lo=atom.lo + week, hi=atom.hi + week,
                   day=atom.day + week if atom.day else None)


@RULES.add(r"\b(?:(?:around|about|at|by|on)\s+)?(?:this|(?:the\s+)?same)\s+(?P<w>time|day|date|week|month)"
           r"\s+(?P<off>last|next)\s+(?P<u>year|month|week)\b"
           r"|\b(?P<off2>last|next)\s+(?P<u2>year|month)\s+(?:around\s+|at\s+)?this\s+time\b"
           rf"|\b(?:this\s+(?P<w3>time|day|date)\s+)?(?P<n>{EN_NUM})\s+(?P<u3>year|month|week)s?\s+ago"
           r"(?P<today>\s+today)?\b", IC, needs="time day date week month year")
def same_time(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """this time last year (three weeks round today's date a year back, vague) / this day last
    year / a year ago today (that date) / this week last year (that calendar week)."""
    if m["u3"]:
        if not (m["w3"] or m["today"]):
            return None  # plain "a year ago": the ago rule
        n = en_to_int(m["n"])
        if n is None:
            return None
        unit, sign, what = m["u3"].lower(), -1, (m["w3"] or "day").lower()
    else:
        unit = (m["u"] or m["u2"]).lower()
        sign = -1 if (m["off"] or m["off2"]).lower() == "last" else 1
        what = (m["w"] or "time").lower()
        n = 1
    shift = {"year": (sign * n, 0, 0), "month": (0, sign * n, 0), "week": (0, 0, sign * n)}[unit]
    if what in ("day", "date"):
        return R.same_day(ctx, *shift)
    if what in ("week", "month") and unit != what:
        day = R.same_day(ctx, *shift)
        assert day.lo is not None
        if what == "week":
            return A.week(ctx, day.lo.date())
        return A.month(ctx, day.lo.year, day.lo.month)
    return R.same_time(ctx, *shift)


HALF_WIDTH = {"day": 1, "week": 7, "month": 31, "year": 183}


@RULES.add(rf"\b(?:(?P<n>{EN_NUM})\s+and\s+a\s+half\s+(?P<u>day|week|month|year)s?"
           rf"|(?P<n2>{EN_NUM})\s+(?P<u2>day|week|month|year)s?\s+and\s+a\s+half"
           r"|(?P<n3>\d{1,2})\.5\s+(?P<u3>day|week|month|year)s?)\s+(?P<dir>ago|back|from\s+now)\b"
           rf"|\bin\s+(?:(?P<n4>{EN_NUM})\s+and\s+a\s+half\s+(?P<u4>day|week|month|year)s?"
           rf"|(?P<n5>{EN_NUM})\s+(?P<u5>day|week|month|year)s?\s+and\s+a\s+half)\b", IC,
           needs="half")
def and_a_half(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """a year and a half ago / one and a half months ago / 1.5 years ago / in a month and a
    half: a vague window round that point."""
    count = next(m[g] for g in ("n", "n2", "n3", "n4", "n5") if m[g])
    unit = next(m[g] for g in ("u", "u2", "u3", "u4", "u5") if m[g]).lower()
    n = en_to_int(count)
    if n is None:
        return None
    sign = 1 if (m["dir"] or "").lower() in ("ago", "back") else -1
    centre = round((n + 0.5) * UNIT_DAYS[unit])
    return R.about_days_ago(ctx, sign * centre, max(HALF_WIDTH[unit], 1))


@RULES.add(rf"\b(?:(?:in|over|during|within|for)\s+)?the\s+(?:next|coming|following)\s+"
           rf"(?:(?P<n>{EN_NUM}|few|couple of|couple)\s+)?(?P<u>day|week|fortnight|month|year)s\b"
           r"|\b(?:in|over)\s+the\s+(?:days|weeks|months)\s+(?:ahead|to\s+come)\b", IC,
           needs="next coming following ahead come")
def rolling_ahead(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the next 3 days / over the next few weeks / in the coming months: from tomorrow on."""
    if m["u"] is None:
        return None
    days = UNIT_DAYS[m["u"].lower()]
    count = (m["n"] or "few").lower()
    if count in ("few", "couple", "couple of"):
        return R.next_days(ctx, days * (4 if count == "few" else 2), exact=False)
    n = en_to_int(count)
    return R.next_days(ctx, n * days) if n else None


@RULES.add(r"(?<!the )\b(?:(?P<mod>last|this|next|the\s+previous|the\s+following|the\s+coming)\s+quarter"
           r"(?!\s+of\b)"
           r"|(?:the\s+)?(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th|last|final)\s+quarter"
           r"(?=\s+of\s+(?:(?:19|20)\d\d|(?:last|this|next)\s+year))"
           r"|(?P<q>Q[1-4])(?:\s+(?P<y>(?:19|20)\d\d))?)\b(?!\s*[:.)])", re.ASCII | re.IGNORECASE,
           needs="quarter q")
def quarter(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """last quarter / this quarter / the third quarter of 2023 / Q3 / Q1 2024."""
    if m["mod"]:
        return R.quarter_offset(ctx, offset(m["mod"]))
    if m["q"] and not m["q"].startswith("Q"):
        return None  # "q1" in lower case: not written as a quarter
    q = int(m["q"][1]) if m["q"] else {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1,
                                       "2nd": 2, "3rd": 3, "4th": 4, "last": 4,
                                       "final": 4}[m["ord"].lower()]
    y = int(m["y"]) if m["y"] else None
    return R.in_year_or_default(ctx, lambda year: R.quarter(ctx, year, q), y, started_only=False)


@RULES.add(r"\b(?:the\s+)?(?P<d>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)\b", IC, needs="#")
def ordinal_day(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the 7th: a day of the month, only as a range end or after a month."""
    atom = R.day_of_month(ctx, int(m["d"]))
    return replace(atom, kind=A.DOM, standalone=False) if atom else None

"""English calendar forms: October 3rd, 3 May 2023, May 2023, in August, last August,
May 1-7, in 2022, 2020-2022, Christmas 2022, last summer, early / the end of ...

Month names that are also ordinary words (may, march) count only when written like a date:
with a day or year, capitalised, or after in / of / early / late / mid.
"""

from __future__ import annotations

import re
from dataclasses import replace

from chalicelib.domain.timeparse import atoms as A
from chalicelib.domain.timeparse import resolve as R
from chalicelib.domain.timeparse.atoms import Atom
from chalicelib.domain.timeparse.cal import add_months
from chalicelib.domain.timeparse.numerals import EN_NUM, en_to_int
from chalicelib.domain.timeparse.rules import RuleSet
from chalicelib.domain.timeparse.span import Ctx

RULES = RuleSet()
# ASCII: \b must see a boundary between Chinese and English (然后last Friday).
IC = re.IGNORECASE | re.ASCII

MONTH_NUMBERS = {name: i + 1 for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"])}
MONTH_NUMBERS |= {name[:3]: n for name, n in MONTH_NUMBERS.items()} | {"sept": 9}
FULL_MONTH = ("january|february|march|april|may|june|july|august|september|october|november"
              "|december|sept")
MONTH_WORDS = " ".join(MONTH_NUMBERS)
MON = rf"(?P<mon>{FULL_MONTH}|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)\.?"
DAYN = r"(?P<d>3[01]|[12]\d|0?[1-9])(?P<ord>st|nd|rd|th)?"
YEAR = r"(?P<y>(?:19|20)\d\d)"
AMBIGUOUS_MONTHS = {"may", "march", "mar"}
# After a number these words mean it is not a day of the month (May 3 people, 3 days).
NOT_A_DAY = (r"(?!\s*(?:[:.]\d|%|[ap]\.?m\b|o['’]?clock|hours?\b|minutes?\b|days?\b|weeks?\b"
             r"|months?\b|years?\b|people|persons|times\b|miles|km\b|kg\b|dollars|percent))")


def month_number(name: str) -> int:
    return MONTH_NUMBERS[name.lower().rstrip(".")]


def modifier(text: str | None) -> str | None:
    if text is None:
        return None
    word = text.lower().split()[-1]
    return {"past": "last", "coming": "next"}.get(word, word)


def plain_word(m: re.Match[str]) -> bool:
    """'may' / 'march' written in lower case: probably the verb unless more says it is a date."""
    name = m["mon"]
    return name.lower() in AMBIGUOUS_MONTHS and name[0].islower()


# --- holidays (before the dates: July 4th is Independence Day) -------------------------------

# (pattern, key, always a period): the day unless "holidays / break / vacation / weekend"
# follows (the Christmas holidays, Thanksgiving weekend) or the name is a period itself.
HOLIDAYS = (
    (r"christmas\s+eve|xmas\s+eve", "christmas_eve", False),
    (r"christmas(?:\s+day)?|xmas", "christmas", False),
    (r"new\s+year['’]?s\s+eve", "new_year_eve", False),
    (r"new\s+year['’]?s(?:\s+day)?", "new_year", False),
    (r"valentine['’]?s(?:\s+day)?", "valentine", False),
    (r"halloween", "halloween", False),
    (r"thanksgiving(?:\s+day)?", "thanksgiving", False),
    (r"independence\s+day|(?:the\s+)?fourth\s+of\s+july|july\s+4th|july\s+fourth",
     "independence_day", False),
    (r"good\s+friday", "good_friday", False),
    (r"easter(?:\s+sunday)?", "easter", False),
    (r"mother['’]?s\s+day", "mothers_day", False),
    (r"father['’]?s\s+day", "fathers_day", False),
    (r"memorial\s+day", "memorial_day", False),
    (r"labou?r\s+day", "labor_day_us", False),
    # May 1, China's 五一 (its holiday with "holiday"); capitalised unless "holiday" follows,
    # as "we may day-trip" is no date
    (r"(?-i:May)\s+day(?!-)|may\s+day(?=\s+holidays?)", "labour_day", False),
    (r"(?:chinese|lunar)\s+new\s+year|spring\s+festival", "spring_festival", False),
    (r"mid-?\s?autumn\s+festival|moon\s+festival", "mid_autumn", False),
    (r"dragon\s+boat\s+festival", "dragon_boat", False),
    (r"lantern\s+festival", "lantern", False),
    (r"qingming(?:\s+festival)?|tomb[-\s]sweeping\s+day", "qingming", False),
    # the Chinese almanac's day (Beijing time); the solstice itself falls a day earlier west
    # of Asia some years, so "the winter solstice" is left alone
    (r"dongzhi(?:\s+festival)?", "dongzhi", False),
    (r"(?:china['’]?s\s+)?national\s+day", "national_day", False),
    (r"golden\s+week", "national_day", True),
    (r"boxing\s+day", "boxing_day", False),
    (r"(?:st\.?|saint)\s+patrick['’]?s(?:\s+day)?", "st_patrick", False),
    (r"black\s+friday", "black_friday", False),
    (r"(?:martin\s+luther\s+king|mlk)(?:\s+jr\.?)?\s+day", "mlk_day", False),
    (r"presidents['’]?\s+day", "presidents_day", False),
    (r"veterans['’]?\s+day", "veterans_day", False),
    (r"summer\s+(?:vacation|break|holidays?)", "summer_holiday", True),
    (r"winter\s+(?:vacation|break|holidays?)", "christmas", True),
)
HOLIDAY_WORDS = ("christmas xmas new valentine halloween thanksgiving independence fourth july "
                 "easter mother father memorial labor labour chinese lunar spring autumn moon "
                 "dragon lantern qingming tomb dongzhi national golden good boxing patrick black king mlk "
                 "president veteran summer winter may")
_ARTICLE_BEFORE = re.compile(r"\ban?\s+$", re.IGNORECASE)
HOLIDAY_RE = "|".join(f"(?P<h{i}>{pattern})" for i, (pattern, _, _) in enumerate(HOLIDAYS))
MODIFIER = r"(?P<mod>last|this|next|this past|this coming)"
PERIOD = r"(?P<period>\s+(?:holidays?|break|vacation|weekend|long\s+weekend))?"
WEEKEND_PERIODS = {"thanksgiving", "easter", "labor_day_us", "memorial_day"}


@RULES.add(rf"\b(?:{MODIFIER}\s+)?(?:the\s+)?(?:{HOLIDAY_RE})\b{PERIOD}(?:,?\s+(?:of\s+)?{YEAR}\b)?", IC,
           needs=HOLIDAY_WORDS)
def holiday(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """Christmas / last Christmas / Christmas 2022 / Thanksgiving / Chinese New Year; the
    Christmas holidays / Thanksgiving weekend / Golden Week: the holiday period."""
    if not m["mod"] and _ARTICLE_BEFORE.search(m.string, 0, m.start()):
        return None  # a kind of thing, not a day: "a christmas range", "an easter egg hunt"
    index = next(i for i in range(len(HOLIDAYS)) if m[f"h{i}"] is not None)
    _, key, always = HOLIDAYS[index]
    suffix = (m["period"] or "").strip().lower()
    if "weekend" in suffix and key not in WEEKEND_PERIODS:
        return None  # "Christmas weekend": not a window we name
    year = int(m["y"]) if m["y"] else None
    return R.holiday(ctx, key, year, modifier(m["mod"]), period=always or bool(suffix))


# --- dates and months ------------------------------------------------------------------------

@RULES.add(rf"\b{MON}\s+(?:the\s+)?{DAYN}\b{NOT_A_DAY}(?:,?\s*(?:of\s+)?{YEAR}\b)?", IC,
           needs=MONTH_WORDS)
def month_day(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """October 3rd / Oct 3 / May 3, 2023 / May 3 2023."""
    if plain_word(m) and not m["ord"] and not m["y"]:
        return None
    year = int(m["y"]) if m["y"] else None
    return R.calendar_date(ctx, year, month_number(m["mon"]), int(m["d"]))


@RULES.add(rf"\b(?:the\s+)?{DAYN}\s+(?P<of>of\s+)?{MON}\b(?:,?\s+{YEAR}\b)?", IC, needs=MONTH_WORDS)
def day_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """3 May 2023 / 8 May, 2023 / the 3rd of May / 20 October."""
    if plain_word(m) and not (m["ord"] or m["of"] or m["y"]):
        return None
    year = int(m["y"]) if m["y"] else None
    return R.calendar_date(ctx, year, month_number(m["mon"]), int(m["d"]))


ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
            "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth")
ORDINAL_WORDS = {w: i + 1 for i, w in enumerate(ORDINALS.split())} | {"thirtieth": 30}
ORDINAL_WORDS |= {f"twenty-{w}": 20 + n for w, n in list(ORDINAL_WORDS.items()) if n < 10}
ORDINAL_WORDS |= {"thirty-first": 31}
ORDW = "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True))


@RULES.add(rf"\b(?:the\s+)?(?P<w>{ORDW})\s+of\s+{MON}\b(?:,?\s+{YEAR}\b)?", IC,
           needs=MONTH_WORDS)
@RULES.add(rf"\b{MON}\s+(?:the\s+)?(?P<w>{ORDW})\b(?:,?\s+{YEAR}\b)?", IC, needs=MONTH_WORDS)
def ordinal_word_date(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the first of May / May third, 2023."""
    if plain_word(m) and not m["y"]:
        return None
    day = ORDINAL_WORDS[m["w"].lower()]
    return R.calendar_date(ctx, int(m["y"]) if m["y"] else None, month_number(m["mon"]), day)


# "the 15th" names a day of a month only after a preposition of time (on / since / by …) or
# with "of last / this / next month": "the 3rd time", "the 21st century" and "came 2nd" do not.
ORD_DAY = r"(?P<d>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)"
NOT_AFTER_ORDINAL = (r"(?!\s+(?:of\s+(?:the\s+)?)?(?:century|centuries|floor|time|times|place"
                     r"|grade|row|round|edition|anniversary|birthday|percentile|generation"
                     r"|street|st\b|avenue|ave\b|chapter|episode|season|step|try|attempt))")


@RULES.add(rf"\bthe\s+{ORD_DAY}\s+of\s+(?P<rel>last|this|next|the\s+last|the\s+next)\s+month\b",
           IC, needs="month")
def ordinal_of_relative_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the 15th of last month / of next month."""
    offset = {"last": -1, "this": 0, "next": 1}[m["rel"].split()[-1].lower()]
    t = ctx.today
    return R.day_in_month(ctx, add_months(t.year, t.month, offset), int(m["d"]))


@RULES.add(rf"\b(?:on|since|by|after|before|until|till|from|around)\s+the\s+{ORD_DAY}\b"
           rf"{NOT_AFTER_ORDINAL}(?!\s+(?:of\s+)?{MON})", IC, needs="#")
def ordinal_day_of_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """on the 3rd: this month's 3rd (as 3号)."""
    atom = R.day_of_month(ctx, int(m["d"]))
    return replace(atom, kind=A.DOM, standalone=True) if atom is not None else None


D1, D2 = (rf"(?P<{g}>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?" for g in ("d1", "d2"))


@RULES.add(rf"\b{MON}\s+{D1}\s*(?:-|–|—|to|through|until)\s*{D2}\b{NOT_A_DAY}"
           rf"(?:,?\s*{YEAR}\b)?", IC, needs=MONTH_WORDS)
def month_day_range(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """May 1-7, 2023 / October 1 to 7."""
    return day_range(ctx, m, int(m["d1"]), int(m["d2"]))


@RULES.add(rf"\b{D1}\s*(?:-|–|—)\s*{D2}\s+(?:of\s+)?{MON}\b(?:,?\s+{YEAR}\b)?", IC,
           needs=MONTH_WORDS)
def day_range_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """1-7 May 2023."""
    return day_range(ctx, m, int(m["d1"]), int(m["d2"]))


def day_range(ctx: Ctx, m: re.Match[str], d1: int, d2: int) -> Atom | None:
    if d2 <= d1 or (plain_word(m) and not m["y"]):
        return None
    year = int(m["y"]) if m["y"] else None
    first = R.calendar_date(ctx, year, month_number(m["mon"]), d1)
    if first is None or first.lo is None:
        return None
    last = R.day_in_month(ctx, (first.lo.year, first.lo.month), d2)
    if last is None or last.hi is None:
        return None
    return Atom(A.SPAN, first.lo, last.hi, "day", first.exact)


@RULES.add(rf"\b{MON},?\s+(?:of\s+)?{YEAR}\b", IC, needs=MONTH_WORDS)
def month_year(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """May 2023 / October of 2022."""
    return R.month_of_year(ctx, month_number(m["mon"]), int(m["y"]))


STRONG_CONTEXT = ("in", "of", "since", "during", "early", "late", "mid", "throughout",
                  "until", "till")
WEAK_CONTEXT = ("from", "to", "through", "before", "after", "around", "by", "between", "and")


# A short month name is also a name ("a friend of Jan's"): a month only right after these,
# and not before 's ("mid-jan", "early dec", "the first week of jan", "in sept").
SHORT_CONTEXT = ("in", "of", "early", "late", "mid", "during")


@RULES.add(rf"\b(?P<mon>{FULL_MONTH}|(?P<short>jan|feb|apr|jun|jul|aug|sep|oct|nov|dec))\b"
           r"(?!['’]s\b)", IC, needs=MONTH_WORDS)
def month_in_context(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """in August / since March / early May / mid-August / mid-jan: a month without a year."""
    word = previous_word(ctx.text, m.start())
    if m["short"]:
        return R.month_of_year(ctx, month_number(m["mon"])) if word in SHORT_CONTEXT else None
    if word not in STRONG_CONTEXT and (word not in WEAK_CONTEXT or plain_word(m)):
        return None
    return R.month_of_year(ctx, month_number(m["mon"]))


PREVIOUS_WORD = re.compile(r"([A-Za-z]+)(?: |-)$")


def previous_word(text: str, start: int) -> str:
    """The word just before `start`, lower case ('' if none); 'mid-August' gives 'mid'.

    Context is checked here rather than with look-behinds: one look-behind per context word
    made these rules the slowest of all."""
    m = PREVIOUS_WORD.search(text, max(0, start - 12), start)
    return m.group(1).lower() if m else ""


@RULES.add(r"\b(?P<mon>January|February|July|September|October|November|December)\b",
           re.ASCII, needs=MONTH_WORDS)
def month_alone(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """A capitalised month name that is not also a common word or first name."""
    return R.month_of_year(ctx, month_number(m["mon"]))


@RULES.add(rf"\b(?P<mod>last|this|next|this past|this coming)\s+(?P<mon>{FULL_MONTH})\b", IC,
           needs=MONTH_WORDS)
def month_modified(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """last August = the latest August that is over; next August = the first ahead."""
    return R.relative_month(ctx, month_number(m["mon"]), modifier(m["mod"]))


# --- years -----------------------------------------------------------------------------------

YEAR_CONTEXT = ("in", "of", "since", "during", "until", "till", "by", "from", "to", "through",
                "throughout", "around", "circa", "before", "after", "early", "late", "mid",
                "year", "summer", "winter", "spring", "autumn", "fall")


@RULES.add(rf"\b{YEAR}\b(?!\s*(?:%|percent|people|persons|users|times|dollars|euros|yuan|km"
           r"|miles|meters|[-–/:]\d))", IC, needs="#")
def year_in_context(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """in 2022 / since 2019 / mid-2023: a bare number is a year only after such a word."""
    if previous_word(ctx.text, m.start()) not in YEAR_CONTEXT:
        return None
    return A.year(ctx, int(m["y"]))


@RULES.add(r"\b(?:(?:from|between)\s+)?(?P<a>(?:19|20)\d\d)\s*(?:-|–|—|to|and|until|through)\s*"
           r"(?P<b>(?:19|20)\d\d)\b(?![-/.]\d)", IC, needs="#")
def year_range(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """2020-2022 / from 2020 to 2022 / between 2019 and 2021."""
    a, b = int(m["a"]), int(m["b"])
    text = m[0].lower()
    if b <= a or ("and" in text and "between" not in text):
        return None
    first, last = A.year(ctx, a), A.year(ctx, b)
    return Atom(A.SPAN, first.lo, last.hi, "year")


# --- seasons ---------------------------------------------------------------------------------

SEASON_WORDS = {"spring": "spring", "summer": "summer", "fall": "autumn", "autumn": "autumn",
                "winter": "winter"}


@RULES.add(rf"\b(?:{MODIFIER}\s+|(?P<prep>(?:in|during|over|through|throughout)\s+(?:the\s+)?"
           rf"|the\s+))?(?P<s>spring|summer|fall|autumn|winter)\b(?!\s+(?:vacation|break|holiday))"
           rf"(?:\s+(?:of\s+)?{YEAR}\b)?", IC,
           needs="spring summer fall autumn winter")
def season(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """last summer / in the fall / summer 2022 / the winter of 2019; vague."""
    part_of = previous_word(ctx.text, m.start()) in ("early", "late", "mid", "of") \
        or POSSESSIVE_YEAR.search(ctx.text, max(0, m.start() - 12), m.start()) is not None
    if not (m["mod"] or m["prep"] or m["y"] or part_of):
        return None  # "summer is hot", "fall down": no particular season named
    if m["s"].lower() == "fall" and not (m["mod"] or m["y"] or "in" in (m["prep"] or "")
                                         or part_of):
        return None
    year = int(m["y"]) if m["y"] else None
    return R.season(ctx, SEASON_WORDS[m["s"].lower()], year, modifier(m["mod"]))


POSSESSIVE_YEAR = re.compile(r"year['’]s\s+$", re.IGNORECASE)


@RULES.add(rf"\b(?P<n>{EN_NUM})\s+(?P<s>spring|summer|fall|autumn|winter)s\s+ago\b"
           r"|\bthe\s+(?P<s2>spring|summer|fall|autumn|winter)\s+before\s+last\b", IC,
           needs="spring summer fall autumn winter")
def seasons_ago(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """two summers ago / the summer before last: counted back from last summer (the latest
    one that is over); vague."""
    n = en_to_int(m["n"]) if m["n"] else 2
    last = R.season(ctx, SEASON_WORDS[(m["s"] or m["s2"]).lower()], mod="last")
    if not n or n > 50 or last is None or last.season is None or last.in_year is None:
        return None
    return last.in_year(last.season[0] - (n - 1))


# --- parts of months and years ---------------------------------------------------------------

PART_WORDS = {"beginning": "begin", "start": "begin", "middle": "mid", "end": "end",
              "first half": "h1", "second half": "h2", "early": "early", "mid": "mid",
              "late": "late"}


@RULES.add(r"\b(?:the\s+)?(?P<p>beginning|start|middle|end|first\s+half|second\s+half)\s+of\b"
           r"|\b(?P<q>early|mid|late)(?:-|\s+)(?=\w)", IC,
           needs="beginning start middle end first second early mid late")
def part_prefix(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """early / mid- / late / the end of + a month, year or week (early August)."""
    word = re.sub(r"\s+", " ", (m["p"] or m["q"]).lower())
    return A.part(PART_WORDS[word])


NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
       "4th": 4, "last": -1, "final": -1}


@RULES.add(r"\b(?:the\s+)?(?P<n>first|1st|second|2nd|third|3rd|fourth|4th|last|final)\s+"
           r"(?P<u>week|weekend|day|(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|"
           r"sunday))"
           # "of" always ("your last week of packing" is a final week, no date); "in" only
           # before a month ("the second Sunday in May"; "last weekend in York" is a date)
           r"\s+(?:of|in(?=\s+(?:the\s+month|this|last|next|that|\d|(?:jan|feb|mar|apr|may|"
           r"jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)))\b", IC, needs="week weekend day monday tuesday wednesday thursday "
                                       "friday saturday sunday")
def nth_in_month(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the first week of June (days 1-7) / the last weekend of May / the second Sunday in May /
    the last day of November: applied to the month that follows."""
    n = NTH[m["n"].lower()]
    if m["wd"]:
        day = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
               "sunday").index(m["wd"].lower())
        return A.part(f"weekday:{day}:{n}")
    return A.part(f"{m['u'].lower()}:{n}")


@RULES.add(r"(?<=\bof )the\s+(?P<u>week|month|year)\b", IC, needs="week month year")
def the_unit(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """(the end of) the month: this month, only as the object of a part."""
    atom = {"week": R.week_offset, "month": R.month_offset, "year": R.year_offset}[
        m["u"].lower()](ctx, 0)
    return replace(atom, standalone=False)


@RULES.add(r"\b(?:the\s+)?(?:(?P<c>19|20)(?P<d>\d)0|['’](?P<s>[2-9])0)['’]?s\b", IC, needs="#")
def decade(ctx: Ctx, m: re.Match[str]) -> Atom | None:
    """the 1990s / the '90s (a bare "90s" is too often an age or a temperature)."""
    first = int(m["c"] + m["d"] + "0") if m["c"] else 1900 + int(m["s"]) * 10
    return Atom(A.SPAN, A.year(ctx, first).lo, A.year(ctx, first + 9).hi, "year")

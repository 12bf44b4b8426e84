"""Retrieval metrics for the LoCoMo bench: pure functions over plain data.

A ranked result is a list of *card records* — the same dicts `--dump` writes:
    {"sources": ["D1:3", "D1:4"], "date_start": "2023-05-07", "date_end": "2023-05-08",
     "text": "..."}
(`date_end` is exclusive; either date may be None when a card has no time.)

Scoring counts the first k *distinct* source turns across the ranked cards, so a card that
cites many turns spends the budget: a top card citing D1:1..D1:10 fills R@10 by itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import date, timedelta

KS = (1, 5, 10)

# ------------------------------------------------------------------ turns


def turn_id(session: str, seq: int) -> str:
    """LoCoMo's dia_id for a message: session "3" (or "session_3") and seq 7 → "D3:7"."""
    return f"D{str(session).removeprefix('session_')}:{seq}"


def source_turns(sources: Iterable[tuple[str, int, int]]) -> list[str]:
    """(session, seq_start, seq_end inclusive) ranges → dia_ids in order, without repeats."""
    out: list[str] = []
    for session, start, end in sources:
        for seq in range(start, end + 1):
            tid = turn_id(session, seq)
            if tid not in out:
                out.append(tid)
    return out


def split_evidence(evidence: Iterable[str]) -> list[str]:
    """LoCoMo evidence ids, cleaned: some entries hold two ids ("D8:6; D9:17"), some have
    stray spaces. Anything that is not D<session>:<turn> is dropped."""
    out: list[str] = []
    for item in evidence:
        for m in re.finditer(r"D\s*(\d+)\s*:\s*(\d+)", str(item)):
            tid = f"D{int(m.group(1))}:{int(m.group(2))}"
            if tid not in out:
                out.append(tid)
    return out


def ranked_turns(cards: Sequence[dict], k: int | None = None) -> list[str]:
    """The first k distinct source turns across ranked cards (all of them when k is None)."""
    out: list[str] = []
    seen: set[str] = set()
    for card in cards:
        for tid in card.get("sources", []):
            if tid in seen:
                continue
            if k is not None and len(out) >= k:
                return out
            seen.add(tid)
            out.append(tid)
    return out


def recall_at_k(evidence: Sequence[str], cards: Sequence[dict], k: int) -> float:
    """|evidence ∩ first-k distinct turns| / |evidence|; NaN when there is no evidence."""
    ev = set(evidence)
    if not ev:
        return math.nan
    return len(ev & set(ranked_turns(cards, k))) / len(ev)


def hit_at_k(evidence: Sequence[str], cards: Sequence[dict], k: int) -> float:
    """1.0 if any evidence turn is among the first k distinct turns; NaN without evidence."""
    ev = set(evidence)
    if not ev:
        return math.nan
    return 1.0 if ev & set(ranked_turns(cards, k)) else 0.0


def card_hit(evidence: Sequence[str], cards: Sequence[dict], n: int) -> float:
    """1.0 if one of the first n *cards* cites an evidence turn (however many turns it cites):
    what a hook injecting n cards gets right. NaN without evidence; 0.0 with no cards."""
    ev = set(evidence)
    if not ev:
        return math.nan
    return 1.0 if any(ev & set(c.get("sources", [])) for c in cards[:n]) else 0.0


def abstained(cards: Sequence[dict]) -> float:
    """1.0 when a recall returned no card at all."""
    return 0.0 if cards else 1.0


def context_chars(cards: Sequence[dict], k: int = 10) -> int:
    """Characters of text in the top-k cards: what injecting them would cost."""
    return sum(len(c.get("text") or "") for c in cards[:k])


# ------------------------------------------------------------------ answer windows

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"\d{4}"
# The date part of an answer: day month [year] | month day[,] [year] | month [year] | year.
_DATE_RE = re.compile(
    rf"(?P<dmy>{_DAY}\s+(?:of\s+)?{_MONTH},?(?:\s+{_YEAR})?)"
    rf"|(?P<mdy>{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?)"
    rf"|(?P<my>{_MONTH},?\s+{_YEAR})"
    rf"|(?P<y>{_YEAR})"
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNT = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_UNIT = r"(?:days?|weeks?|weekends?|months?|years?|" + "|".join(w + "s?" for w in _WEEKDAYS) + ")"
# "<the> [N] <unit> before <date>" and "the week of <date>".
_BEFORE_RE = re.compile(rf"^(?:the\s+)?(?:(?P<n>{_COUNT})\s+)?(?P<unit>{_UNIT})\s+before\s+(?P<date>.+)$")
_WEEK_OF_RE = re.compile(r"^(?:the\s+)?week\s+of\s+(?P<date>.+)$")
_LEAD_RE = re.compile(r"^(?:on|in|around|about|circa|during|by)\s+")

Window = tuple[date, date]


def _clean(answer: object) -> str:
    text = str(answer).strip().lower()
    text = _LEAD_RE.sub("", text)
    return re.sub(r"\s+", " ", text).strip(" .")


def _month_start(d: date) -> date:
    return d.replace(day=1)


def _next_month(d: date) -> date:
    return date(d.year + (d.month == 12), d.month % 12 + 1, 1)


def parse_date_part(text: str, ref: date | None = None) -> tuple[Window, str] | None:
    """An absolute date expression → (window, granularity day|month|year), or None.

    The shape is decided by our own regex (so free text never reaches the date parser);
    dateparser reads only the matched date. A day without a year takes `ref`'s year, and is
    unresolvable without `ref`.
    """
    m = _DATE_RE.fullmatch(text.strip().lower())
    if not m:
        return None
    if m.group("y"):
        year = int(m.group("y"))
        return (date(year, 1, 1), date(year + 1, 1, 1)), "year"
    part = m.group(0)
    has_year = re.search(_YEAR, part) is not None
    if not has_year:
        if ref is None:
            return None
        part = f"{part} {ref.year}"
    import dateparser  # slow import; only needed here

    parsed = dateparser.parse(part, languages=["en"],
                              settings={"PREFER_DAY_OF_MONTH": "first",
                                        "REQUIRE_PARTS": ["month", "year"]})
    if parsed is None:
        return None
    d = parsed.date()
    if m.group("my"):
        return (_month_start(d), _next_month(d)), "month"
    return (d, d + timedelta(days=1)), "day"


def _weekday_before(anchor: date, weekday: int, n: int) -> date:
    """The n-th given weekday strictly before anchor (n=1: the latest one)."""
    back = (anchor.weekday() - weekday) % 7 or 7
    return anchor - timedelta(days=back + 7 * (n - 1))


def answer_window(answer: object, ref: date | None = None) -> Window | None:
    """The date window an answer names, as [start, end) dates, or None if it names none we
    can resolve. Handled forms (case-insensitive, optional leading on/in/around):

    - "7 May 2023", "May 7, 2023", "19 January, 2023"        → that day
    - "May 2023", "January, 2023"                            → that month
    - "2022" (also the integer 2022)                         → that year
    - "13 August" (no year)                                  → that day in `ref`'s year
    - "The week before 9 June 2023"                          → [2 June, 9 June)
    - "two weeks before D"                                   → [D-14, D-7)
    - "The weekend before 17 July 2023"                      → the last Sat–Sun ending by D
    - "two weekends before D"                                → the weekend a week earlier
    - "The Sunday/Friday/… before 25 May 2023"               → the latest such day before D
    - "The day before D", "3 days before D"                  → that day
    - "The month/year before D"                              → the previous calendar month/year
    - "The week of 23 August 2023"                           → the Monday–Sunday week holding D
    Anything else ("10 years ago", "Since 2016", "last year", "A few years ago") → None.
    """
    text = _clean(answer)
    if not text:
        return None
    got = parse_date_part(text, ref)
    if got is not None:
        return got[0]
    m = _WEEK_OF_RE.match(text)
    if m:
        got = parse_date_part(m.group("date"), ref)
        if got is None or got[1] != "day":
            return None
        d = got[0][0]
        monday = d - timedelta(days=d.weekday())
        return monday, monday + timedelta(days=7)
    m = _BEFORE_RE.match(text)
    if not m:
        return None
    got = parse_date_part(m.group("date"), ref)
    if got is None or got[1] != "day":
        return None
    anchor = got[0][0]
    raw_n = m.group("n")
    n = 1 if raw_n is None else (int(raw_n) if raw_n.isdigit() else _COUNT_WORDS[raw_n])
    if n < 1:
        return None
    unit = m.group("unit").rstrip("s")
    if unit == "day":
        d = anchor - timedelta(days=n)
        return d, d + timedelta(days=1)
    if unit == "week":
        return anchor - timedelta(days=7 * n), anchor - timedelta(days=7 * (n - 1))
    if unit == "weekend":
        # the latest Saturday whose weekend (Sat, Sun) is over by the anchor day
        sat = anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
        if sat + timedelta(days=2) > anchor:
            sat -= timedelta(days=7)
        sat -= timedelta(days=7 * (n - 1))
        return sat, sat + timedelta(days=2)
    if unit in _WEEKDAYS:
        d = _weekday_before(anchor, _WEEKDAYS.index(unit), n)
        return d, d + timedelta(days=1)
    if unit == "month":
        start = _month_start(anchor)
        for _ in range(n):
            start = _month_start(start - timedelta(days=1))
        return start, _next_month(start)
    if unit == "year":
        return date(anchor.year - n, 1, 1), date(anchor.year - n + 1, 1, 1)
    return None


def looks_temporal(answer: object) -> bool:
    """A rough flag for answers that name a time at all (to count the ones we cannot resolve)."""
    text = _clean(answer)
    return bool(re.search(rf"\b(?:{_YEAR}|{_MONTH}|ago|since|before|after|last|next|week|"
                          r"weekends?|years?|months?|days?|weeks|yesterday|tomorrow)\b", text))


# ------------------------------------------------------------------ temporal accuracy


def _to_date(value: object) -> date | None:
    if value is None:
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def temporal_hit(evidence: Sequence[str], cards: Sequence[dict], window: Window,
                 k: int = 5) -> bool:
    """True if one of the top-k cards cites an evidence turn AND its date starts inside the
    answer's window ([start, end)). "Starts within" rather than "overlaps": a card dated
    2023 would otherwise count as right for "The Friday before 15 July 2023"."""
    ev = set(evidence)
    lo, hi = window
    for card in cards[:k]:
        if not ev & set(card.get("sources", [])):
            continue
        start = _to_date(card.get("date_start"))
        if start is not None and lo <= start < hi:
            return True
    return False


def temporal_overlap_hit(evidence: Sequence[str], cards: Sequence[dict], window: Window,
                         k: int = 5) -> bool:
    """The looser variant: the card's [date_start, date_end) overlaps the window."""
    ev = set(evidence)
    lo, hi = window
    for card in cards[:k]:
        if not ev & set(card.get("sources", [])):
            continue
        start, end = _to_date(card.get("date_start")), _to_date(card.get("date_end"))
        if start is not None and end is not None and start < hi and lo < end:
            return True
    return False


# ------------------------------------------------------------------ aggregation


def mean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100), like numpy's default."""
    vals = sorted(values)
    if not vals:
        return None
    pos = (len(vals) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def question_scores(evidence: Sequence[str], cards: Sequence[dict],
                    window: Window | None) -> dict[str, float | bool | int | None]:
    """Every per-question number the report aggregates."""
    out: dict[str, float | bool | int | None] = {}
    for k in KS:
        out[f"R@{k}"] = recall_at_k(evidence, cards, k)
        out[f"hit@{k}"] = hit_at_k(evidence, cards, k)
    out["temporal_hit@5"] = None if window is None else temporal_hit(evidence, cards, window)
    out["temporal_overlap@5"] = (None if window is None
                                 else temporal_overlap_hit(evidence, cards, window))
    out["chars@10"] = context_chars(cards, 10)
    out["cards"] = len(cards)
    return out

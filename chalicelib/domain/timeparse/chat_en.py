"""English as typed on a phone, written out for the time rules: "2day", "yday", "last nite",
"tonite", "this arvo", "2 wks ago", "a yr ago", "next wk", "on sat", "NYE", "tommorow".

The rules are written for the words; these are the shorthand and the common misspellings of
the same words in chat. Each form is replaced by the word before the rules run, and every
offset the rules report is mapped back, so a span's `matched` is what the person typed. A
form that is also an ordinary word ("sat", "sun", "eve", "mo") is read only where it cannot
be one (after on / this / last / next, or after a number). Hand-written: the date parsers on
PyPI (dateparser, parsedatetime) read neither these forms nor our rules' conventions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chalicelib.domain.lazyre import compiled

_WORDS = {
    "2day": "today", "tday": "today", "2dy": "today",
    "2morrow": "tomorrow", "2moro": "tomorrow", "2mrw": "tomorrow", "2mro": "tomorrow",
    "tmrrw": "tomorrow", "tomoz": "tomorrow", "tomorow": "tomorrow", "tommorow": "tomorrow",
    "tommorrow": "tomorrow", "tomorroww": "tomorrow",
    "yday": "yesterday", "ystd": "yesterday", "ystrdy": "yesterday", "yesterdy": "yesterday",
    "yesturday": "yesterday", "yestarday": "yesterday", "yesteday": "yesterday",
    "tonite": "tonight", "2nite": "tonight", "tonigh": "tonight", "nite": "night",
    "arvo": "afternoon", "wknd": "weekend", "wkend": "weekend", "wk": "week", "wks": "weeks",
    "yr": "year", "yrs": "years", "mnth": "month", "mnths": "months", "mth": "month",
    "mths": "months", "cpl": "couple", "coupla": "couple of", "nye": "New Year's Eve",
}
_NUMBER = r"(?:\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|few|couple|several)"
# ordinary words that are times only after these
_AFTER_DAY_WORD = {"sat": "Saturday", "sun": "Sunday", "eve": "evening"}
_AFTER_NUMBER = {"mo": "month", "mos": "months"}
_SHORT = compiled(
    r"(?<![\w'])(?P<w>" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")(?![\w'])"
    r"|\b(?:on|this|last|next)\s+(?P<d>sat|sun)(?![\w'])"
    r"|\bthis\s+(?P<e>eve)(?![\w'])"
    rf"|\b{_NUMBER}\s+(?P<m>mos?)(?![\w'])", re.IGNORECASE | re.ASCII)
_GROUPS = ("w", "d", "e", "m")


@dataclass(frozen=True)
class Written:
    """The text written out, and where each of its offsets lies in the text as typed."""

    text: str
    starts: list[int]  # written offset → typed offset, for a span's start
    ends: list[int]  # written offset → typed offset, for a span's end

    def typed(self, start: int, end: int) -> tuple[int, int]:
        return self.starts[start], self.ends[end]


def written_out(text: str) -> Written | None:
    """`text` with its chat forms written out, or None when it has none (most texts)."""
    if not re.search(r"[A-Za-z]", text):
        return None
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = [0]
    at = 0
    for m in _SHORT().finditer(text):
        group = next(g for g in _GROUPS if m[g])
        start, end = m.span(group)
        word = _word(group, m[group])
        _keep(text, at, start, parts, starts, ends)
        parts.append(word)
        starts.extend([start] * len(word))
        ends.extend([end] * len(word))
        at = end
    if not parts:
        return None
    _keep(text, at, len(text), parts, starts, ends)
    starts.append(len(text))
    return Written("".join(parts), starts, ends)


def _word(group: str, typed: str) -> str:
    key = typed.lower()
    if group == "w":
        return _WORDS[key]
    if group in ("d", "e"):
        return _AFTER_DAY_WORD[key]
    return _AFTER_NUMBER[key]


def _keep(text: str, start: int, end: int, parts: list[str], starts: list[int],
          ends: list[int]) -> None:
    """Text kept as typed: each offset is its own."""
    parts.append(text[start:end])
    starts.extend(range(start, end))
    ends.extend(range(start + 1, end + 1))

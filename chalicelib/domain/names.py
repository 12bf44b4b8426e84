"""People's names in text: which known names a query or a statement mentions.

>>> sorted(named_people("What did Caroline research?", ["Caroline", "Melanie"]))
['Caroline']
>>> strip_names("What did Caroline's sister say?", ["Caroline"])
'What did sister say?'
>>> sorted(named_people("小明都去过哪些地方？", ["小明", "Aki"])), strip_names("小明都去过哪些地方？", ["小明"])
(['小明'], '都去过哪些地方？')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from chalicelib.domain.textproc import is_cjk

GENERIC = frozenset({"user", "assistant", "system"})
_LATIN = "[A-Za-z0-9\u00c0-\u024f]"  # a name glued to these is part of a longer word


def _name_patterns(person: str) -> list[str]:
    first = person.split()[0]
    return [re.escape(n) for n in dict.fromkeys([person, first]) if len(n) >= 2]


def _as_word(name: str, suffix: str = "") -> str:
    """A name as a whole word, as mentioned_names reads one: Latin script on Latin word
    boundaries ("Ann" is not in "Anna", "和Caroline聊" names Caroline); Chinese has no word
    boundaries ("小明都去过哪些地方"), so any occurrence."""
    if is_cjk(name):
        return name
    return rf"(?<!{_LATIN}){name}{suffix}(?!{_LATIN})"


def named_people(query: str, people: Iterable[str]) -> set[str]:
    """People whose full or first name the query contains as a word (case-insensitive)."""
    return {p for p in people
            if any(re.search(_as_word(n), query, re.IGNORECASE) for n in _name_patterns(p))}


def strip_names(query: str, people: Iterable[str]) -> str:
    """The query without the names (and their possessive 's), for matching content only."""
    for person in sorted(people, key=len, reverse=True):
        for n in _name_patterns(person):
            query = re.sub(_as_word(n, "(?:['’]s)?"), " ", query, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", query).strip()


def mentioned_names(text: str, known: Sequence[str]) -> list[str]:
    """Known names that occur in the text as names: on word boundaries for Latin script
    ("Ann" is not in "Anna"); Chinese has no word boundaries, so containment there."""
    found = []
    for name in known:
        if not name:
            continue
        pattern = (re.escape(name) if is_cjk(name)
                   else rf"(?<!{_LATIN}){re.escape(name)}(?!{_LATIN})")
        if re.search(pattern, text):
            found.append(name)
    return found

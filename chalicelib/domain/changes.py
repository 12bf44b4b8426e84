"""Words that say a fact changed, purely (docs/graph.md): a later event says the hotel, the
home, the job … is now another one ("we now stay at the Ryokan Kiku instead of the Hotel
Sakura", 我们把酒店换成了菊屋旅馆，不住樱花酒店了), and which of its words name what was
replaced ("the Hotel Sakura", 樱花酒店). `usecases.graph.updates` finds the earlier event those
words replace and records an `updates` relation; recall (`usecases.recall.updates`) then shows
the new fact, and the old one only when the query asks about the past.

>>> change_of("We changed the hotel: we now stay at the Ryokan Kiku instead of the Hotel Sakura.")
Change(words='now stay at', old=('the Hotel Sakura',))
>>> change_of("我们把酒店换成了菊屋旅馆，不住樱花酒店了。").old
('酒店', '樱花酒店')
>>> change_of("We stayed at the Hotel Sakura.") is None
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from chalicelib.domain.refs import MessageRef, parse_ref

# What follows a marker up to the end of its clause: the words naming the old thing.
_EN_CLAUSE = (r"[^.,;:!?\n]{1,80}?(?=\s+(?:and|but|so|because|now|then|which|since|any\s?more)"
              r"\b|[.,;:!?\n]|$)")
_ZH_CLAUSE = r"[^，。；：！？,.;:!?\n]{1,16}"
# Markers that name the old thing after them (group "old"); compiled on first use (_old_after).
_OLD_AFTER_SOURCES = (
    rf"\binstead of\s+(?P<old>{_EN_CLAUSE})",
    rf"\brather than\s+(?P<old>{_EN_CLAUSE})",
    rf"\bno longer\s+(?P<old>{_EN_CLAUSE})",
    rf"\b(?:cancell?ed|dropped)\s+(?P<old>{_EN_CLAUSE})",
    r"\breplaced\s+(?P<old>[^.,;:!?\n]{1,60}?)\s+with\b",
    rf"\b(?:don'?t|doesn'?t|do not|does not|won'?t|aren'?t|isn'?t)\s+(?P<old>{_EN_CLAUSE})"
    r"\s+any\s?more\b",
    r"\bfrom\s+(?P<old>[^.,;:!?\n]{1,60}?)\s+to\b",
    rf"不再(?P<old>{_ZH_CLAUSE})",
    rf"取消了?(?P<old>{_ZH_CLAUSE})",
    r"不(?:住|去|用|要|在|订)(?P<old>[^，。；：！？,.;:!?\n]{1,12}?)了",
    r"(?:把|从)(?P<old>[^，。；：！？,.;:!?\n]{1,12}?)(?:换成|改成|改为|换到|搬到|改到|改订|换了)",
)
# Markers that only say the fact is new now ("switched to", "now stay at", 换成了, 搬到).
_NEW_ONLY = re.compile(
    r"\b(?:changed|switched|moved|swapped|rebooked|re-booked)\b[^.;!?\n]{0,40}?\b(?:to|for|into)\b"
    r"|\bnow\s+(?:stay|staying|stays|live|living|lives|work|working|works)\s+(?:at|in|for|with)\b"
    r"|换成了?|改成|改为|换到|搬到|改到|改订", re.IGNORECASE)
# A speaker correcting what they just said: the marker of a repair. Mid-turn it moves the time
# the turn is about (extract.offline.resolve_when); opening a turn it corrects the teller's
# last event (usecases.graph.updates, rule 4).
REPAIR = re.compile(r"哦?不对|说错了|\b(?:wait,? no|no,? wait|oh wait)\b", re.IGNORECASE)
_OPENING_REPAIR = re.compile(r"^\W{0,3}(?:" + REPAIR.pattern + ")", re.IGNORECASE)
# …or opening with the plan it corrects, named as a topic in a few words before the repair
# ("对了国庆那个 哦不对 30号我要值班 1号早上在走", "about the dinner - wait no, it's Friday"): a
# topic says nothing of its own (a demonstrative closes it, "about" opens it); a lead that says
# something ("三日后是谷雨…不对，五日后才是谷雨") is corrected within the turn
_LED_REPAIR = re.compile(r"^\W{0,3}(?P<lead>[^。！？!?.;；\n]{0,12}?(?:那个|这个|那件事|那事|的事)|"
                         r"(?:about|re:?|as for)\s[^.!?;\n]{1,30}?)[\s，,、:：—–-]*(?:"
                         + REPAIR.pattern + ")", re.IGNORECASE)
# "from X to" names an old thing only beside a change ("moved from Munich to Berlin"), not
# in "from 9 to 5": it is no marker of its own.
_NOT_MARKERS = frozenset({_OLD_AFTER_SOURCES[6]})


@functools.cache
def _old_after() -> list[re.Pattern[str]]:
    """_OLD_AFTER_SOURCES compiled when a change is first looked for (extraction, merging)."""
    return [re.compile(p, re.IGNORECASE) for p in _OLD_AFTER_SOURCES]


@dataclass(frozen=True)
class Change:
    words: str  # the first words that say so, as written ("instead of", 换成了)
    old: tuple[str, ...]  # the clauses naming what was replaced, as written; may be empty


def change_of(text: str) -> Change | None:
    """The change the text states, or None when no words say a fact changed."""
    found: list[tuple[int, str]] = []
    old: list[tuple[int, str]] = []
    for pattern in _old_after():
        for m in pattern.finditer(text):
            if pattern.pattern not in _NOT_MARKERS:
                found.append((m.start(), _marker_words(m)))
            old.append((m.start("old"), m.group("old").strip()))
    found += [(m.start(), m.group(0)) for m in _NEW_ONLY.finditer(text)]
    if (opening := _OPENING_REPAIR.match(text)) is not None:
        found.append((0, opening.group(0).strip(" \t，,")))
    elif (led := _LED_REPAIR.match(text)) is not None:
        found.append((led.end("lead"), text[led.end("lead"):led.end()].strip(" \t，,、:：—–-")))
    if not found:
        return None
    words = min(found)[1]
    clauses = (c for _, c in sorted(old) if c)
    return Change(words=" ".join(words.split()), old=tuple(dict.fromkeys(clauses)))


def opens_with_repair(text: str) -> bool:
    """"哦不对，是1月2号出发", "wait no, it's Friday": the text corrects what came before it."""
    return _OPENING_REPAIR.match(text) is not None


def repair_lead(text: str) -> str:
    """What a text names before the repair that opens it ("对了国庆那个 哦不对 …" → 对了国庆那个),
    or ''."""
    led = None if _OPENING_REPAIR.match(text) else _LED_REPAIR.match(text)
    return led.group("lead").strip() if led else ""


def _marker_words(m: re.Match[str]) -> str:
    """The marker of a match without the old clause it captured: "instead of", 换成,
    "don't … anymore" (a preposition alone, 把 or 从, is no marker)."""
    before = m.string[m.start():m.start("old")].strip()
    after = m.string[m.end("old"):m.end()].strip()
    if before.casefold() in ("把", "从", "from"):
        before = ""
    return " … ".join(p for p in (before, after) if p) or m.group(0)


# ------------------------------------------------------------------ kinds of things

# Things one has one of at a time — a hotel for a trip, a home, an employer, a school: a
# change that names a new one replaces an earlier one of the same kind, when the change
# does not name the old one ("we changed hotels: we now stay at the Ryokan Kiku").
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "lodging": ("hotel", "hostel", "inn", "resort", "ryokan", "motel", "lodge", "guesthouse",
                "airbnb", "酒店", "旅馆", "宾馆", "民宿", "客栈", "饭店", "旅店"),
    "restaurant": ("restaurant", "cafe", "café", "bistro", "diner", "餐厅", "餐馆", "饭馆",
                   "咖啡馆"),
    "school": ("university", "college", "school", "academy", "大学", "学院", "学校", "中学",
               "小学"),
    "employer": ("inc", "corp", "ltd", "llc", "company", "公司", "集团"),
    "home": ("apartment", "flat", "公寓", "小区"),
}


def category(name: str) -> str | None:
    """The kind of thing a name says it is ("Ryokan Kiku", 菊屋旅馆 → lodging), or None."""
    words = set(re.findall(r"[a-zé]+", name.casefold()))
    for kind, marks in _CATEGORIES.items():
        if words & set(marks) or any(name.endswith(m) for m in marks if not m.isascii()):
            return kind
    return None


def names_in(clause: str, name: str) -> bool:
    """Whether a clause names `name`: on word boundaries in Latin script, contained in CJK."""
    if not name:
        return False
    if name.isascii():
        return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", clause, re.IGNORECASE) \
            is not None
    return name in clause


# ------------------------------------------------------------------ the relation's note

NOTE_CHARS = 300  # a Relation note's length (usecases.graph.relations.relation cuts there)
_PART = " · the old event says more"
_OWN = " · only the old fact's turns:"


def update_note(words: str, said_in: Sequence[str], old_turns: Sequence[str],
                whole: bool = True) -> str:
    """Why an event updates another, with its evidence: the words, the messages of the new
    event that say so, whether the old event says more than the old fact (`whole` False:
    recall shows it after the new one rather than leave it out), and the messages that tell
    only the old fact (recall leaves those out with the old event). Whole refs only, within
    NOTE_CHARS: a ref cut in half is none."""
    note = f"“{words[:60]}” · said in"
    for ref in said_in:
        if len(note) + len(ref) + 1 > NOTE_CHARS // 2:
            break
        note += f" {ref}"
    note += "" if whole else _PART
    if old_turns:
        note += _OWN
        for ref in old_turns:
            if len(note) + len(ref) + 1 > NOTE_CHARS:
                break
            note += f" {ref}"
    return note


def says_only_the_old_fact(note: str) -> bool:
    """Whether `update_note` said the old event is all old fact (a note of another kind —
    the merge pass's — is: its old event is superseded whole)."""
    return _PART not in note


def old_turns(note: str) -> frozenset[str]:
    """The message refs `update_note` listed as telling only the old fact."""
    _, found, rest = note.partition(_OWN)
    if not found:
        return frozenset()
    return frozenset(r for r in rest.split() if _is_message_ref(r))


def _is_message_ref(ref: str) -> bool:
    try:
        return isinstance(parse_ref(ref), MessageRef)
    except ValueError:
        return False

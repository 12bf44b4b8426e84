"""A move told before it happens, and the later turn that says it happened.

Why: chat tells a move twice. First as a plan or a piece of news with no settled home in it
("found a little flat in York … moving on the 5th", "the main office is in Hyderabad … then I
have to relocate", 苏州的事定了…我们全家一起搬); then, weeks later, in passing and from the
new place ("hello from York!!", "reporting live from Hyderabad", 我们已经在苏州安顿下来啦).
Neither turn alone is a plain statement of a home — a plan is no fact, and a place named in
passing does not close a home told plainly — so the old home stayed current, shown on every
turn (issue 36's stale values, issue 37's: held-out 5 and the companion chats, in both
languages). Together they are: the place the user said they would move to, named later with
nothing to say it is still a plan, a question, someone else's, a trip or not so.

`places_planned` reads the first turn (a move word, and the places the turn names);
`arrived` the later one. The store keeps the plan between the two (records.Plan,
chalicelib.usecases.facts): they are usually in different sessions.
"""

from __future__ import annotations

import re

from chalicelib.domain.facts import HAN, NOT_A_NAME, ZH_CITIES
from chalicelib.domain.kin import KIN_ZH, KIN_ZH_SHORT
from chalicelib.domain.lazyre import compiled
from chalicelib.domain.textproc import straight_quotes

# A word of moving home, in a turn that also names where to (the place may be in another
# sentence of it: "the main office is in Hyderabad … then I have to relocate").
# ("move on" from a thing is no move: "time to move on.", "moving on from him")
_MOVE_EN = compiled(r"\b(?:mov(?:e|es|ed|ing)\b(?!\s+on\s*(?:[.,!]|$|from|with|to))|relocat\w*|emigrat\w*|"
                    r"going (?:back |home )|go back\b|transferr?(?:ed|ing)?\b)", re.IGNORECASE)
_MOVE_ZH = compiled(r"搬|调到|调去|调过去|迁到|迁去|落户|定居|报到")
# places: a capitalised name after to / in (not "from": where one leaves; not "at": where
# one works)
_PLACE_EN = compiled(r"\b(?:to|in)\s+((?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)*)")
# a Chinese place: a city by name, or the object of moving that ends as places end (云京,
# 青石镇); Chinese writes no capital to mark a name
_PLACE_ZH = compiled(r"(?:搬|调|迁|去|到|回)(?:家)?(?:到|去|回)?([\u4e00-\u9fff]{1,3}?"
                     r"(?:京|州|市|城|镇|县|省|村|港|岛))")
# a city by name, unless it is the one left (从南京搬到苏州)
_CITY_ZH = compiled("(?<!从)(?<!离开)(?:" + "|".join(sorted(ZH_CITIES, key=len, reverse=True)) + ")")

# What keeps a later naming of the place from saying the user lives there now: a plan, a
# wish or a question still (the hedges of domain.facts), a negation ("the landlord in York
# hadn't finished the boiler"), a trip, or someone else as the clause's subject.
_NOT_YET_EN = compiled(r"\b(?:might|may|maybe|perhaps|would|could|should|want|wanna|wish|hope|"
                       r"thinking|plan\w*|going to|gonna|will|if|whether|someday|once|until|"
                       r"till|before|not|never|no longer|\w+n't|visit\w*|trip|holiday|"
                       r"vacation|flight|fly|flew|weekend)\b|\b(?:back|home|away)\s+from\b|\?",
                       re.IGNORECASE)
_NOT_YET_ZH = compiled(r"想|打算|准备|可能|也许|如果|要是|希望|会不会|能不能|计划|考虑|以后|将来|"
                       r"还没|没有|不|别|等|之前|旅游|旅行|出差|玩|[吗？?]")
_OTHERS_ZH = compiled(rf"(?:我(?:的)?(?:{KIN_ZH_SHORT})|{KIN_ZH}|他|她|他们|她们)")
_ME_ZH = compiled(rf"我(?!(?:的)?(?:{KIN_ZH}|{KIN_ZH_SHORT}))")
_CLAUSE = compiled(r"[^.!?;。！？；\n]+")
_CLAUSE_ZH = compiled(r"[^，,。！？；\s]+")
# who a clause's verb is of: a pronoun, or a name ("Ben's coming home", "He moved to Rome")
# (a name: capitalised inside a sentence, not called to — "Hi Yuna, reporting live from …")
_PERSON_EN = compiled(r"\b(?:I|me|we|us|he|him|she|her|they|them)\b|(?<![.!?]\s)(?<!^)(?<!^\s)"
                      r"\b(?-i:[A-Z][a-z]+)\b(?!\s+(?-i:[A-Z]))(?!\s*[,!])", re.IGNORECASE)
_SPEAKER_EN = frozenset({"i", "me", "we", "us"})
# the speaker, then at most two words of when or how, then where they are: the place follows
_I_AM_ZH = compiled(r"我们?[\u4e00-\u9fff]{0,3}?(?:在|到了|住在?|回到)$")
_I_AM_EN = compiled(r"\b(?:I|we)(?:'m|'re|\s+am|\s+are|'ve\s+been|\s+have\s+been)\s+(?:\w+\s+){0,2}?"
                    r"(?:in|at)\s+$", re.IGNORECASE)


def places_planned(text: str) -> list[str]:
    """The places a turn speaks of moving to (a plan, or a move told without a home), when
    the move is the speaker's: "He moved to Rome for work" plans nothing of hers."""
    text = straight_quotes(text)  # "we’re moving to Leeds"
    if HAN.search(text):
        if not any(_MOVE_ZH().search(c) and _own_zh(c) for c in _CLAUSE_ZH().findall(text)):
            return []
        found = _CITY_ZH().findall(text) + _PLACE_ZH().findall(text)
    else:
        if not any(_own_en(clause[:m.start()]) for clause in _CLAUSE().findall(text)
                   for m in _MOVE_EN().finditer(clause)):
            return []
        found = [p for p in _PLACE_EN().findall(text) if p.split()[0] not in NOT_A_NAME]
    return list(dict.fromkeys(found))


def _own_en(before: str) -> bool:
    """Whether the move whose clause starts with `before` is the speaker's: the nearest
    person before it is "I" or "we" ("get me to move"), or nobody ("going home to Cebu")."""
    people = _PERSON_EN().findall(before)
    return not people or people[-1].casefold() in _SPEAKER_EN


def _own_zh(clause: str) -> bool:
    """我们全家一起搬 or 暑假就搬 (no one named), not 我哥搬到上海了."""
    return bool(_ME_ZH().search(clause)) or not _OTHERS_ZH().search(clause)


def arrived(text: str, place: str, said_by_me: bool = False) -> bool:
    """Whether a turn names `place` as where the speaker is now: in a clause that is no
    plan, question, negation or trip, and not about someone else. `said_by_me`: the speaker
    says they are there, the place right after "I am in" / 我在 (我们已经在苏州安顿下来啦,
    "we're all settled in York"), not only the place (苏州的天气真好, 陶艺课在徐汇那边)."""
    text = straight_quotes(text)
    zh = bool(HAN.search(place))
    named = re.compile(re.escape(place) if zh else rf"\b{re.escape(place)}\b", re.IGNORECASE)
    not_yet, own = (_NOT_YET_ZH, _own_zh) if zh else (_NOT_YET_EN, _own_en)
    there = _I_AM_ZH if zh else _I_AM_EN
    for clause in _CLAUSE().findall(text):
        m = named.search(clause)
        if m and not not_yet().search(clause) and own(clause[:m.start()]) and (
                not said_by_me or there().search(clause, 0, m.start())):
            return True
    return False

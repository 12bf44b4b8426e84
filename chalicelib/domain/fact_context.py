"""What a stretch of chat states about its user beyond what each turn says alone (issue 24):
people tell facts across turns, as answers and by the names they use, purely.

- **Answers.** The companion asks, the user answers with a bare phrase: "What car?" →
  "An old Volvo estate", 升到什么职位了？ → 支行副行长！ The question gives the attribute, the
  answer's first phrase the value; a generic value told just before ("I bought a car",
  我买了台相机) is made specific by it.
- **Names bound to a role.** "Is Sam home too?" → "Not yet, my girlfriend works late": a role
  noun without a name ("my girlfriend", "my daughter", "my old cat", 我的小柯基) takes the one
  name of the turn, or of the turn before it, or the name just introduced ("Meet Pepper!",
  这是可乐！). More than one name there, or none: nothing is bound.

`read_turns(turns)` returns, per turn, what chalicelib.domain.facts.statements reads from it
plus these; only user turns state anything (the companion's words are context).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chalicelib.domain.facts import NAMING, Statement, statements
from chalicelib.domain.facts import PET_KINDS_EN as _PET
from chalicelib.domain.facts import PET_KINDS_ZH as _ZPET

_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Turn:
    role: str  # "user" states; anything else is context
    text: str


# ------------------------------------------------------------------ answers

# the companion's question → the attribute its answer gives
_QUESTIONS: list[tuple[str, re.Pattern[str]]] = [(a, re.compile(p, re.IGNORECASE)) for a, p in (
    ("owns", r"\bwhat (?:car|kind of car|make|model|bike|camera|laptop|did you (?:get|buy))\b|"
             r"\bwhich (?:car|model)\b|什么(?:车|相机|电脑|手机|牌子|型号)|买了(?:什么|啥)|"
             r"(?:哪|什么)款"),
    ("works_as", r"\bwhat (?:do you do|is your job|'s the (?:job|role)|role|position)\b|"
                 r"什么职位|什么工作|做什么的|(?:哪|什么)个?岗位|升(?:到|成)了?(?:什么|啥)"),
    ("works_at", r"\bwhere (?:do|are) you (?:work|working)\b|\bwhich (?:company|firm)\b|"
                 r"哪家公司|在哪(?:儿|里)?(?:上班|工作)|(?:去|跳槽到)了?哪(?:家|儿|里)"),
    ("lives_in", r"\bwhere (?:do you live|are you living|did you move|are you based)\b|"
                 r"住(?:在)?哪|搬(?:到|去)了?哪"),
    (NAMING, r"\bwhat(?:'s| is) (?:his|her|its|their|the (?:dog|cat|puppy|kitten|baby)'s) name\b|"
             r"\bwhat did you (?:name|call)\b|叫什么|(?:取|起)(?:了)?名字|名字是"),
    ("allergic_to", r"\ballergic to what\b|\bwhat are you allergic to\b|对什么过敏|查出来是什么|"
                    r"什么过敏"),
    ("learning", r"\bwhat are you learning\b|学什么|(?:这次|新东西)是什么"),
)]
# a works_at question that may be about a trip ("去哪儿了？") counts only after talk of work
_ABOUT_WORK = re.compile(r"工作|上班|跳槽|入职|辞职|offer|\bjob\b|\bwork\b", re.IGNORECASE)
# a question for a thing's name or kind ("What kind?", 什么样的？): it makes a generic specific
_WHICH = re.compile(r"\b(?:what|which)\b|什么|哪|啥", re.IGNORECASE)
_FIRST_PHRASE = re.compile(r"^\s*([^，,。.！!？?;；:：\n~～（(]+)")
_EN_LEAD = re.compile(r"^(?:(?:it's|it is|an?|the|my|our|just|oh|well|yes|yeah|so|um|"
                      r"old|new|used|second-hand|little|tiny|big|[a-z]+-year-old)\s+)+",
                      re.IGNORECASE)
_ZH_LEAD = re.compile(r"^(?:(?:就是|去了|是|在|一家|一台|一辆|一只|一个|一部|一款|买了|换了|嗯|对|哈哈)+)")
_ZH_TAIL = re.compile(r"(?:过敏|啦|了|呀|哦|呢)+$")
_CAPS = re.compile(r"(?-i:[A-Z])[\w&'.-]*(?:\s+(?:(?-i:[A-Z])[\w&'.-]*|&|\d[\w-]*))*")
# generic values an answer or a later phrase makes specific
_GENERIC = frozenset({"car", "van", "bike", "camera", "laptop", "phone", "computer",
                      "车", "相机", "电脑", "手机", "笔记本", "新东西", "something new"})


def _asked(text: str) -> str | None:
    if "?" not in text and "？" not in text:
        return None
    return next((a for a, p in _QUESTIONS if p.search(text)), None)


def _answer(attribute: str, text: str) -> str | None:
    """The value a bare answer gives ("An old Volvo estate" → Volvo, 富士的X-T30 → 富士X-T30)."""
    m = _FIRST_PHRASE.match(text)
    if not m:
        return None
    phrase = m.group(1).strip()
    if _CJK.search(phrase):
        value = _ZH_TAIL.sub("", _ZH_LEAD.sub("", phrase))
        if attribute == "owns":
            value = value.replace("的", "")
        if not 1 <= len(value) <= 10 or re.search(r"[我你他她它]", value):
            return None
        return value
    if len(phrase.split()) > 6:
        return None
    phrase = _EN_LEAD.sub("", phrase)
    if attribute in ("owns", "works_at", "lives_in", NAMING):
        caps = _CAPS.search(phrase)
        if not caps or caps.group(0).split()[0] in _NOT_NAMES | _DISCOURSE:
            return None
        return caps.group(0).strip()
    return phrase.lower() if 1 <= len(phrase.split()) <= 3 else None


# ------------------------------------------------------------------ names bound to a role

_NOT_NAMED = r"(?!\s*,?\s*(?-i:[A-Z]))"
_ROLES: list[tuple[str, re.Pattern[str]]] = [(a, re.compile(p, re.IGNORECASE)) for a, p in (
    ("partner", rf"\bmy\s+(?:girlfriend|boyfriend|wife|husband|partner|fianc[ée]e?)\b{_NOT_NAMED}"),
    ("child", rf"\bmy\s+(?:little\s+)?(?:daughter|son|kid|little girl|little boy)\b{_NOT_NAMED}"),
    ("pet", rf"\bmy\s+(?:old\s+|little\s+|new\s+)?(?P<kind>{_PET})\b{_NOT_NAMED}"),
    ("pet", rf"\b(?:he|she)(?:'s|\s+is)\s+(?:a|an|my)\s+(?:[\w-]+\s+){{0,3}}?(?P<kind>{_PET})\b"),
    ("partner", r"我(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|对象)(?![\u4e00-\u9fff]{0,1}叫)"),
    ("child", r"我(?:的)?(?:女儿|儿子|闺女|宝宝)"),
    ("pet", rf"(?:我的|我家的?)(?:小)?{_ZPET}"),
)]
# a name introduced: "Meet Pepper!", "Say hi to Pepper", 这是可乐！
_INTRO = re.compile(r"\b(?:meet|say hi to|say hello to|this is)\s+(?P<name>(?-i:[A-Z])[a-z]+)\b|"
                    r"(?:这是|这位是|这只是)(?P<zname>[\u4e00-\u9fff]{1,4}?)(?=[！!。，,~～]|$)",
                    re.IGNORECASE)
_PET_WORD = re.compile(rf"\b{_PET}\b|{_ZPET}", re.IGNORECASE)
_WORD = re.compile(r"(?<![\w'])((?-i:[A-Z])[a-z]+)(?:'s)?\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|[\"“]\s*)$")
# capitalised words that are no one's name
_NOT_NAMES = frozenset(
    ["I", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December", "Christmas", "Easter", "God", "Mum", "Mom", "Dad", "Mam", "Mummy", "Daddy", "Gran", "Grandma", "Grandpa", "Nan", "English", "Chinese", "French", "Spanish", "German", "Japanese", "OK", "Okay", "Hey", "Hi", "Hello", "Yes", "Yeah", "No", "Oh", "Wow", "He", "She", "It", "They", "We", "You", "What", "Where", "When", "Who", "Why", "How", "That", "There", "Here", "This", "Let", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"])


# words that open an answer without naming anything ("Honestly, …")
_DISCOURSE = frozenset(["Honestly", "Actually", "Well", "Probably", "Maybe", "Nothing", "Nope", "Haha", "Ha", "Sure", "Not", "Just", "Kind", "Sort", "Definitely", "Absolutely", "Totally", "Really", "Apparently", "Basically"])


def batch_names(turns: Sequence[Turn], speakers: Sequence[str] = ()) -> set[str]:
    """The capitalised words of a batch used as names: seen mid-sentence or as a possessive
    ("Biscuit's"), never after a preposition of place ("in Bristol", "at Acme")."""
    seen, placed = set(), set()
    for turn in turns:
        for m in _WORD.finditer(turn.text):
            word, before = m.group(1), turn.text[:m.start()]
            after = turn.text[m.end():]
            if (re.search(r"\b(?:in|at|from|to|near|for|with the|of)\s+$|&\s+$", before,
                          re.IGNORECASE) or _after_name(before)
                    or re.match(r"\s+&|\s+(?-i:[A-Z])", after)):
                placed.add(word)
            elif m.group(0).endswith("'s") or not _SENTENCE_START.search(before):
                seen.add(word)
    return seen - placed - _NOT_NAMES - set(speakers)


def _after_name(before: str) -> bool:
    """The word before is a capitalised one mid-sentence: a two-word name of a firm or a
    place ("Harbour Kitchen"), not a person's."""
    m = re.search(r"((?-i:[A-Z])\w*)\s+$", before)
    return bool(m) and not _SENTENCE_START.search(before[:m.start()])


def _names_in(text: str, names: set[str]) -> list[str]:
    found = [m.group(1) for m in _WORD.finditer(text) if m.group(1) in names]
    return list(dict.fromkeys(found))


def _bound(turns: Sequence[Turn], i: int, names: set[str], intros: dict[int, str]
           ) -> list[Statement]:
    """What a role noun without a name in turn i names, by the one name near it."""
    text, out = turns[i].text, []
    for attribute, pattern in _ROLES:
        for m in pattern.finditer(text):
            name = _near_name(turns, i, names, intros)
            if name:
                kind = (m.groupdict().get("kind") or "").lower()
                out.append(Statement(attribute, name, kind=kind))
    if i in intros and _PET_WORD.search(text) and not out:
        out.append(Statement("pet", intros[i], kind=_PET_WORD.search(text).group(0).lower()))
    return out


def _near_name(turns: Sequence[Turn], i: int, names: set[str], intros: dict[int, str]
               ) -> str | None:
    previous_user = next((j for j in range(i - 1, max(-1, i - 4), -1)
                          if turns[j].role == "user"), None)
    for j in (i, i - 1, previous_user):
        if j is None or j < 0:
            continue
        if j in intros:
            return intros[j]
        found = _names_in(turns[j].text, names)
        if len(found) == 1:
            return found[0]
        if found:
            return None  # two names: which one is meant is not said
    return None


# ------------------------------------------------------------------ the whole stretch

# "I bought a car this morning. An old Volvo estate, 2011": the next sentence names it
_NAMED_NEXT = re.compile(r"(?:^|[.!]\s+)(?:it's\s+|it is\s+)?an?\s+(?:[\w-]+\s+){0,3}?"
                         r"(?P<make>(?-i:[A-Z])[\w-]+(?:\s+(?-i:[A-Z])[\w-]+)?)", re.IGNORECASE)


def _specific(statement: Statement, text: str) -> Statement:
    if statement.attribute != "owns" or statement.value.casefold() not in _GENERIC:
        return statement
    at = text.casefold().find(statement.value.casefold())
    m = _NAMED_NEXT.search(text, at + len(statement.value)) if at >= 0 else None
    if not m:
        return statement
    return replace(statement, value=m["make"], kind=statement.value)



def read_turns(turns: Sequence[Turn], speakers: Sequence[str] = ()) -> list[list[Statement]]:
    """What each turn states about its (user) speaker, read with the turns around it."""
    names = batch_names(turns, speakers)
    told = [statements(t.text) if t.role == "user" else [] for t in turns]
    names -= {w for said in told for s in said if s.attribute not in ("pet", "partner", "child")
              for w in s.value.split()}
    intros = {i: (m["name"] or m["zname"]) for i, t in enumerate(turns) if t.role == "user"
              for m in [_INTRO.search(t.text)] if m}
    out: list[list[Statement]] = []
    for i, turn in enumerate(turns):
        if turn.role != "user":
            out.append([])
            continue
        said = told[i]
        said += [s for s in _bound(turns, i, names, intros)
                 if not any(t.attribute == s.attribute and t.value == s.value for t in said)]
        out.append([_specific(s, turn.text) for s in said])
    _answers(turns, out)
    return out


def _answers(turns: Sequence[Turn], out: list[list[Statement]]) -> None:
    """A bare answer to the companion's question states its value; it makes a generic value
    the user told just before specific (in place)."""
    for i in range(1, len(turns)):
        if turns[i].role != "user" or turns[i - 1].role == "user":
            continue
        attribute = _asked(turns[i - 1].text)
        before = next((j for j in range(i - 2, max(-1, i - 5), -1) if turns[j].role == "user"),
                      None)
        if attribute is None and before is not None and _WHICH.search(turns[i - 1].text) and any(
                s.value.casefold() in _GENERIC for s in out[before]):
            attribute = next(s.attribute for s in out[before] if s.value.casefold() in _GENERIC)
        if attribute is None:
            continue
        if attribute == "works_at" and not _ABOUT_WORK.search(
                " ".join(t.text for t in turns[max(0, i - 3):i])):
            continue
        value = _answer(attribute, turns[i].text)
        if not value or any(s.attribute == attribute and not s.ends for s in out[i]):
            continue
        generic = [k for k, s in enumerate(out[before] if before is not None else [])
                   if s.attribute == attribute and s.value.casefold() in _GENERIC]
        if generic and before is not None:
            k = generic[0]
            out[before][k] = replace(out[before][k], value=value, kind=out[before][k].value)
        else:
            out[i].append(Statement(attribute, value))

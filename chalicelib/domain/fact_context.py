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

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chalicelib.domain.facts import (
    HAN,
    HERE,
    NAMING,
    NOT_A_NAME,
    Statement,
    statements,
    written_out,
)
from chalicelib.domain.facts import JOBS_EN as _JOB
from chalicelib.domain.facts import JOBS_ZH as _ZJOB
from chalicelib.domain.facts import PET_KINDS_EN as _PET
from chalicelib.domain.facts import PET_KINDS_ZH as _ZPET
from chalicelib.domain.lazyre import compiled
from chalicelib.domain.textproc import straight_quotes

# Every pattern below is compiled on first use (domain.lazyre; the tables by functools.cache):
# a process that never reads facts from a chat — a recall, the OpenAPI document — never
# compiles them.


@dataclass(frozen=True)
class Turn:
    role: str  # "user" states; anything else is context
    text: str


# ------------------------------------------------------------------ answers

# the companion's question → the attribute its answer gives
_QUESTIONS_SOURCES = (
    ("owns", r"\bwhat (?:car|kind of (?:car|boat|bike|camera|truck|van)|make|model|bike|camera|laptop|"
             r"did you (?:get|buy))\b|"
             r"\bwhich (?:car|model)\b|什么(?:车|相机|电脑|手机|牌子|型号)|买了(?:什么|啥)|"
             r"(?:哪|什么)款"),
    ("works_as", r"\bwhat (?:do you do(?: for (?:work|a living)| at (?:the|your) \w+| there)?\s*\?|is your job|"
                 r"'s the (?:job|role)|role|position)|"
                 r"什么职位|什么工作|做什么的|是做[\u4e00-\u9fff]{1,6}的|是开[\u4e00-\u9fff]{1,4}的|(?:哪|什么)个?岗位|升(?:到|成)了?(?:什么|啥)"),
    ("works_at", r"\bwhere (?:do|are) you (?:work|working)\b|\bwhich (?:company|firm|school|hospital|"
                 r"clinic|shop|store|restaurant|bank)\b|\bwhat (?:school|hospital|company)\b|"
                 r"哪家公司|在哪(?:儿|里)?(?:上班|工作)|跳槽到了?哪(?:家|儿|里)"),
    ("works_at?", r"^\W*(?:[\w']+[!.,]+\s*){0,3}where\s*\?\s*$|(?:去)了?哪(?:家|儿|里)|(?:现在|那)?在哪(?:儿|里)?\s*[？?]|^\W*(?:\w{0,6}[！!，,])?\s*(?:哪里|哪儿|哪家|去哪)\s*[？?]"),
    ("lives_in", r"\bwhere (?:do you live|are you living|did you move|are you based)\b|"
                 r"住(?:在)?哪|搬(?:到|去)了?哪"),
    (NAMING, r"\bwhat(?:'s| is) (?:his|her|its|their|the (?:dog|cat|puppy|kitten|baby)'s) name\b|"
             r"\bwhat did you (?:name|call)\b|叫什么|(?:取|起)(?:了)?名字|名字是"),
    ("allergic_to", r"\ballergic to what\b|\bwhat are you allergic to\b|对什么过敏|查出来是什么|"
                    r"什么过敏"),
    ("studies", r"\bwhat (?:do|are) you (?:study|studying)\b|\bwhat'?s your (?:degree|course|major)\b|"
                r"什么专业|学的什么|学的是什么|读(?:的)?什么|哪个专业|是学[\u4e00-\u9fff]{1,6}的"),
    ("learning", r"\bwhat are you learning\b|学什么|(?:这次|新东西)是什么"),
)


@functools.cache
def _questions() -> list[tuple[str, re.Pattern[str]]]:
    """_QUESTIONS_SOURCES compiled on first use (functools.cache)."""
    return [(a, re.compile(p, re.IGNORECASE)) for a, p in _QUESTIONS_SOURCES]
# a works_at question that may be about a trip ("去哪儿了？") counts only after talk of work
_ABOUT_WORK = compiled(r"工作|上班|跳槽|入职|辞职|offer|\bjob\b|\bwork\b", re.IGNORECASE)
# a question for a thing's name or kind ("What kind?", 什么样的？): it makes a generic specific
_WHICH = compiled(r"\b(?:what|which)\b|什么|哪|啥", re.IGNORECASE)
_PLAIN_ADJECTIVES = frozenset({"my", "our", "a", "an", "the", "little", "old", "new", "used", "big",
                               "red", "blue", "black", "white", "silver", "grey", "gray", "green",
                               "yellow", "orange", "tiny", "second-hand", "secondhand"})
_JOB_IN = compiled(rf"\b(?:[\w-]+\s+)?{_JOB}\b", re.IGNORECASE)
_CALLED = compiled(r"\b(?:called|named)\s+((?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*)*)")
_ZH_YES_WORDS = frozenset({"对", "嗯", "是的", "是啊", "对啊", "对呀", "没错", "哈哈", "嗯嗯"})
_FIRST_PHRASE = compiled(r"^\s*([^，,。.！!？?;；:：\n~～（(]+)")
_EN_LEAD = compiled(r"^(?:(?:it's|it is|an?|the|my|our|just|oh|well|yes|yeah|so|um|"
                    r"old|new|used|second-hand|little|tiny|big|[a-z]+-year-old)\s+)+",
                    re.IGNORECASE)
_ZH_LEAD = compiled(r"^(?:(?:就是|去了|是|在|一家|一台|一辆|一只|一个|一部|一款|买了|换了|嗯|对|哈哈)+)")
_ZH_TAIL = compiled(r"(?:过敏|啦|了|呀|哦|呢)+$")
_CAPS = compiled(r"(?-i:[A-Z])[\w&'.-]*(?:\s+(?:(?-i:[A-Z])[\w&'.-]*|&|\d[\w-]*))*")
# generic values an answer or a later phrase makes specific
_GENERIC = frozenset({"car", "van", "bike", "camera", "laptop", "phone", "computer",
                      "车", "相机", "电脑", "手机", "笔记本", "新东西", "something new"})


# a question word asks, unless 都/也 follows it ("哪个专业都卷": every one)
_ZH_ASKS = compiled(r"(?:什么|哪[个里儿家些]?|谁|几[个岁年月天]|多少)(?![^，。！？\s]{0,4}(?:都|也))|[吗呢]\s*$")


def _asked(text: str) -> str | None:
    # Chinese chat often leaves the question mark out ("最后录的什么专业"): a question word does
    if "?" not in text and "？" not in text and not _ZH_ASKS().search(text):
        return None
    return next((a for a, p in _questions() if p.search(text)), None)


def _answer(attribute: str, text: str) -> str | None:
    """The value a bare answer gives ("An old Volvo estate" → Volvo, 富士的X-T30 → 富士X-T30)."""
    m = _FIRST_PHRASE().match(text)
    if not m:
        return None
    phrase = m.group(1).strip()
    if HAN.search(phrase):
        phrase = phrase.split()[-1] if phrase.split()[0] in _ZH_YES_WORDS else phrase.split()[0]
    if called := _CALLED().search(phrase):
        return called.group(1)
    if HAN.search(phrase):
        value = _ZH_TAIL().sub("", _ZH_LEAD().sub("", phrase))
        if attribute == "owns":
            value = value.replace("的", "")
        if not 1 <= len(value) <= 10 or re.search(r"[我你他她它]", value):
            return None
        return value
    if len(phrase.split()) > 8:
        return None
    phrase = _EN_LEAD().sub("", phrase)
    if attribute == "works_as" and (job := _JOB_IN().search(phrase)):
        return job.group(0).lower()
    if attribute == "owns" and (thing := re.search(
            r"\b(?:[\w-]+\s+)?(?:boat|bike|truck|van|car|camera|guitar|drone)\b", phrase, re.IGNORECASE)):
        return thing.group(0).lower()
    if attribute == "owns" and not _CAPS().search(phrase):
        words = [w for w in phrase.split() if w.lower() not in _PLAIN_ADJECTIVES]
        return " ".join(words[-2:]) if 1 <= len(words) <= 3 else None
    if attribute in ("owns", "works_at", "lives_in", NAMING):
        caps = _CAPS().search(phrase)
        if not caps or caps.group(0).split()[0] in _NOT_NAMES | _DISCOURSE:
            return None
        return caps.group(0).strip()
    return phrase.lower() if 1 <= len(phrase.split()) <= 3 else None


# the job alone, less the verb it may come with (做成本会计 → 成本会计)
_ZH_JOB_PHRASE = compiled(rf"^(?:做|当|干)?(?P<value>[\u4e00-\u9fff]{{0,6}}{_ZJOB})$")


_EN_JOB_PHRASE = compiled(rf"^(?:(?:yes|yeah|ya|yep|still|just|a|an|freelance|self-employed|"
                          rf"senior|junior|head|trainee|student|full-time|part-time)\s+)*"
                          rf"(?P<value>(?:[\w-]+\s+)?{_JOB})$", re.IGNORECASE)


def _jobs_named(text: str) -> list[Statement]:
    """中建 结构工程师 七月入职, "st brendans, icu. nurse.": talk of work that names a job as one
    of its phrases, alone."""
    if HAN.search(text):
        if not _FIRST_PHRASE().match(text):  # opens with punctuation: no phrase to read
            return []
        return [Statement("works_as", j["value"]) for p in re.split(r"[\s。，,！!]+", text)
                for j in [_ZH_JOB_PHRASE().match(p)] if j]
    phrases = [p.strip() for p in re.split(r"[.,;!?\n]+", text)]
    return [Statement("works_as", j["value"].lower()) for p in phrases
            for j in [_EN_JOB_PHRASE().match(p)] if j and j["value"].split()[0].lower() not in
            {"my", "her", "his", "their", "our", "the", "your"}]


# ------------------------------------------------------------------ names bound to a role

_NOT_NAMED = r"(?!\s*,?\s*(?-i:[A-Z]))"
# "my wife's cat": the role owns what follows, it is not the one talked of ("my daughter's six" is)
_OWNER = (rf"(?!'s\s+(?:{_PET}|car|house|flat|room|place|phone|bed|birthday|family|mum|mom|dad|"
          r"friend|parents|sister|brother|job|work)\b)")
_ROLES_SOURCES = (
    ("partner", rf"\bmy\s+(?:girlfriend|boyfriend|wife|husband|partner|fianc[ée]e?)\b{_OWNER}{_NOT_NAMED}"),
    ("child", rf"\bmy\s+(?:little\s+)?(?:daughter|son|kid|little girl|little boy)\b{_OWNER}{_NOT_NAMED}"),
    ("pet", rf"\bmy\s+(?:old\s+|little\s+|new\s+)?(?P<kind>{_PET})\b{_NOT_NAMED}"),
    ("pet", rf"\b(?:he|she)(?:'s|\s+is)\s+(?:a|an|my)\s+(?:[\w-]+\s+){{0,3}}?(?P<kind>{_PET})\b"),
    ("partner", r"(?:我的?|^|[，,\s])(?:老公|老婆|男朋友|女朋友|男友|女友|对象)(?![\u4e00-\u9fff]{0,1}叫)"),
    ("child", r"我(?:的)?(?:女儿|儿子|闺女|宝宝)"),
    ("pet", rf"(?:我的|我家的?)(?:小)?{_ZPET}"),
    ("pet", rf"(?:^|[，,\s])(?:是)?一只(?:小)?{_ZPET}"),
    # a pet's kind said alone, a chat's aside ("雪球在门口等我 布偶 超黏人"), or what it does
    ("pet", rf"(?:^|[，,\s]){_ZPET}(?=[，,\s]|就|真|都|也|太|$)"),
    ("pet", r"喵喵叫|汪汪叫|摇尾巴|喵了一声"),
    ("partner*", r"\b(?:she|he)(?:'s|\s+is)\s+my\s+(?:wife|husband|girlfriend|boyfriend|partner|fianc[ée]e?)\b"),
    ("child*", r"\b(?:was\s+)?born\s+(?:on|at|last|this|yesterday|today|early|late)\b|出生了|生了"),
)


@functools.cache
def _roles() -> list[tuple[str, re.Pattern[str]]]:
    """_ROLES_SOURCES compiled on first use (functools.cache)."""
    return [(a, re.compile(p, re.IGNORECASE)) for a, p in _ROLES_SOURCES]
# a name introduced: "Meet Pepper!", "Say hi to Pepper", 这是可乐！
_INTRO = compiled(r"\b(?:meet|say hi to|say hello to|this is)\s+(?P<name>(?-i:[A-Z])[a-z]+)\b|"
                  r"(?:这是|这位是|这只是)(?P<zname>[\u4e00-\u9fff]{1,4}?)(?=[！!。，,~～]|$)",
                  re.IGNORECASE)
_PET_WORD = compiled(rf"\b{_PET}\b|{_ZPET}", re.IGNORECASE)
_WORD = compiled(r"(?<![\w'])((?-i:[A-Z])[a-z]+)(?:'s)?\b")
_SENTENCE_START = compiled(r"(?:^|[.!?]\s+|[\"“]\s*)$")
# capitalised words that are no one's name (and NOT_A_NAME: sentence openers)
_NOT_NAMES = frozenset({
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Mondays",
    "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays", "January",
    "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December", "Christmas", "Easter", "God", "Mum", "Mom", "Dad", "Mam", "Mummy",
    "Daddy", "Gran", "Grandma", "Grandpa", "Nan", "English", "Chinese", "French", "Spanish",
    "German", "Japanese", "Dutch", "Italian", "Portuguese", "Arabic", "Korean", "Russian",
    "Irish", "Welsh", "Scottish", "British", "American", "Hindi", "Turkish", "Greek", "Swedish",
    "Polish", "Mandarin", "Cantonese"}) | NOT_A_NAME


# words that open an answer without naming anything ("Honestly, …")
_DISCOURSE = frozenset({
    "Honestly", "Actually", "Well", "Probably", "Maybe", "Nothing", "Nope", "Haha", "Ha",
    "Sure", "Not", "Just", "Kind", "Sort", "Definitely", "Absolutely", "Totally", "Really",
    "Apparently", "Basically"})


def proper_forms(turns: Sequence[Turn], speakers: Sequence[str] = (),
                 names: Sequence[str] = ()) -> dict[str, str]:
    """The capitalised words of a stretch of talk (mid-sentence, so names, not sentence
    openers), and of `names` known already, by their lowercase: how a lowercase chatter's
    "josh" or "toowong" is spelt when the companion writes it."""
    out: dict[str, str] = {s.casefold(): s for s in speakers if s and s[:1].isupper()}
    for turn in turns:
        for m in re.finditer(r"(?<![\w'])((?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)*)", turn.text):
            words = m.group(1).split()
            start = _SENTENCE_START().search(turn.text[:m.start()])
            for k, word in enumerate(words):
                if (k or not start) and word not in NOT_A_NAME and not word.isupper():
                    out.setdefault(word.casefold(), word)
    for name in names:
        for word in re.findall(r"(?<![\w'])(?-i:[A-Z])[\w'-]+", name):
            if word not in NOT_A_NAME and not word.isupper():
                out.setdefault(word.casefold(), word)
    return out


def batch_names(turns: Sequence[Turn], speakers: Sequence[str] = ()) -> set[str]:
    """The capitalised words of a batch used as names: seen mid-sentence or as a possessive
    ("Biscuit's"), never after a preposition of place ("in Bristol", "at Acme")."""
    seen, placed = set(), set()
    for turn in turns:
        for m in _WORD().finditer(turn.text):
            word, before = m.group(1), turn.text[:m.start()]
            after = turn.text[m.end():]
            if (re.search(r"\b(?:in|at|from|to|near|for|with the|of|the)\s+$|&\s+$", before,
                          re.IGNORECASE) or _after_name(before)
                    or re.match(r"\s+&|\s+(?-i:[A-Z])", after)):
                placed.add(word)
            elif m.group(0).endswith("'s") or not _SENTENCE_START().search(before):
                seen.add(word)
    return seen - placed - _NOT_NAMES - set(speakers)


def _after_name(before: str) -> bool:
    """The word before is a capitalised one mid-sentence: a two-word name of a firm or a
    place ("Harbour Kitchen"), not a person's."""
    m = re.search(r"((?-i:[A-Z])\w*)\s+$", before)
    return bool(m) and not _SENTENCE_START().search(before[:m.start()])


# 阿杰, 小雯: the way Chinese chat names people; these 小/阿 words are no one's name
_ZH_NICK = compiled(r"(?<![\u4e00-\u9fff])(?:阿|小)[\u4e00-\u9fff](?=[\u4e00-\u9fff]|[，,。！!？?\s]|$)")
_ZH_NOT_NICK = frozenset(["小时", "小区", "小孩", "小心", "小说", "小狗", "小猫", "小学", "小姐", "小组", "小吃", "小电", "小朋", "小事", "小伙", "小城", "小店", "小屋", "小鸟", "小名", "小便", "小票", "小费", "小米", "小红", "小白", "小黑", "小哥", "小弟", "小妹", "小三", "小号", "小声", "小点", "小样", "小编", "小可", "小的", "小一", "小二", "小三", "阿姨", "阿婆", "阿公", "阿爸", "阿妈", "小柯", "小金", "小短", "小电", "小宝", "小家", "小日", "小长", "小半"])


_ONE_WORD = compiled(r"(?:^|[.!?]\s+)((?-i:[A-Z])[a-z]+)[.!](?=\s|$)")


# the one who opens a Chinese turn, before what they do ("雪球在门口等我", "周周出差去了")
_ZH_OPENING = compiled(r"(?:^|(?<=[，,。！!\s]))(?P<name>[\u4e00-\u9fff]{2})(?=在|说|又|也|今天|最近|天天|一直|出差|加班|生病|"
                       r"最开心|走了|跟|和|把|被|给|非要|总|老是|现在|就|每天)")
_ZH_NOT_OPENER = compiled(r"^(?:[我你他她它咱]|今天|昨天|明天|最近|现在|刚刚|天天|每天|大家|同事|朋友|老板|"
                          r"老师|导师|领导|师兄|师姐|师弟|师妹|室友|闺蜜|同学|医生|护士|邻居|房东|客户|"
                          r"妈妈|爸爸|老妈|老爸|婆婆|公公|爷爷|奶奶|外婆|外公|姥姥|孩子|儿子|女儿|这个|"
                          r"那个|这边|那边|公司|家里|周末|晚上|早上|中午|下午|上午|平时|一直|后来|然后|"
                          r"结果|其实|本来|还是|就是|可是|但是|不过|所以|老婆|老公|男朋|女朋|对象|媳妇|爱人|老伴|宝宝)")


def _names_in(text: str, names: set[str], speakers: frozenset[str] = frozenset(),
              lone: bool = False, openers: bool = False) -> list[str]:
    """The names a text uses; `lone`: with a name said alone as a sentence ("Meera. She's my
    wife"), for a role told by a pronoun in the same turn."""
    alone = ({m.group(1) for m in _ONE_WORD().finditer(text)} - _NOT_NAMES - _DISCOURSE - _NUMBERS
             if lone else set())
    found = [m.group(1) for m in _WORD().finditer(text) if m.group(1) in names | alone]
    # a Chinese phrase's opener is a pet's name only: people are 阿X/小X or told ("安安是？")
    found += [m["name"] for m in _ZH_OPENING().finditer(text) if openers
              and m["name"] not in speakers and not _ZH_NOT_OPENER().match(m["name"])]
    found += [m.group(0) for m in _ZH_NICK().finditer(text)
              if m.group(0) not in _ZH_NOT_NICK and m.group(0) not in speakers]
    return list(dict.fromkeys(found))


_NUMBERS = frozenset({
    "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven",
    "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen",
    "Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety", "Hundred"})


def _bound(turns: Sequence[Turn], i: int, names: set[str], intros: dict[int, str],
           speakers: frozenset[str]) -> list[Statement]:
    """What a role noun without a name in turn i names, by the one name near it."""
    text, out = turns[i].text, []
    for role, pattern in _roles():
        attribute, lone = role.rstrip("*"), role.endswith("*")
        for m in pattern.finditer(text):
            name = _near_name(turns, i, names, intros, speakers, lone, attribute == "pet")
            if name:
                kind = (m.groupdict().get("kind") or "").lower()
                out.append(Statement(attribute, name, kind=kind))
    if i in intros and _PET_WORD().search(text) and not out:
        out.append(Statement("pet", intros[i], kind=_PET_WORD().search(text).group(0).lower()))
    return out


# a lowercase turn's opening word as the subject of a verb: the name a phone types small
_LOWER_SUBJECT = compiled(r"^([a-z]{3,})(?:'s|\s+(?:is|was|has|had|keeps|kept|just|loves|hates|"
                          r"sleeps|slept)\b)(?![^.!?]*[A-Z])")
_SUBJECT_WORDS = frozenset({"she", "he", "they", "it", "this", "that", "there", "here", "what",
                            "who", "everything", "everyone", "nothing", "someone", "work", "life",
                            "today", "tonight", "mum", "mom", "dad", "home", "weather", "rent",
                            "traffic", "school", "uni", "class", "boss", "team", "shop", "job",
                            "one", "mine", "which", "where", "when", "how", "why"})


def _near_name(turns: Sequence[Turn], i: int, names: set[str], intros: dict[int, str],
               speakers: frozenset[str], lone: bool, openers: bool = False) -> str | None:
    previous_user = next((j for j in range(i - 1, max(-1, i - 4), -1)
                          if turns[j].role == "user"), None)
    for j in (i, i - 1, previous_user):
        if j is None or j < 0:
            continue
        if j in intros:
            return intros[j]
        found = _names_in(turns[j].text, names, speakers, lone and j == i, openers)
        if j == i and not found and (m := _LOWER_SUBJECT().match(turns[i].text)) and (
                m[1] not in _SUBJECT_WORDS):
            return m[1].capitalize()  # typed in lowercase: "tico is asleep on my feet. my dog"
        if len(found) == 1:
            return found[0]
        if found:
            return None  # two names: which one is meant is not said
    return None


# ------------------------------------------------------------------ questions the user confirms

# "Is Hemi your partner?" — "Yeah, …": the companion's question about the user, in the user's
# words ("Hemi is my partner"), is what the user says when the answer is yes; of a question
# with alternatives ("Are you the pharmacist there, or on the tills?"), the one the answer names
_YES = compiled(r"^\W*(?:yes|yeah|yep|yup|ya|aye|yea|correct|exactly|that's right|sure|definitely|"
                r"of course|uh-huh|mhm|haha,? yes|对|是的|是啊|是呀|嗯|没错|对啊|对呀|当然|对的|"
                r"是滴|哈哈对|哈哈是)", re.IGNORECASE)
_EN_ASKS_SOURCES = (
    (r"^(?:so|and|oh|wait)?,?\s*(?:are|were) you\s+(?P<rest>.+?)\?$", "I am {rest}"),
    (r"^(?:so|and|oh|wait)?,?\s*(?:do|did) you\s+(?P<rest>.+?)\?$", "I {rest}"),
    (r"^(?:so|and|oh|wait)?,?\s*is (?P<x>(?-i:[A-Z])\w+) your (?P<rest>.+?)\?$", "{x} is my {rest}"),
    (r"^(?:so|and|oh|wait)?,?\s*have you (?:got\s+)?(?P<rest>.+?)\?$", "I have {rest}"),
    (r"^(?:so|and|oh|wait)?,?\s*(?P<x>(?-i:[A-Z])\w+)(?:'s|\s+is)\s+your\s+(?P<rest>.+?)\?$", "{x} is my {rest}"),
)


@functools.cache
def _en_asks() -> list[tuple[re.Pattern[str], str]]:
    """_EN_ASKS_SOURCES compiled on first use (functools.cache)."""
    return [(re.compile(p, re.IGNORECASE), form) for p, form in _EN_ASKS_SOURCES]
_EN_QUESTION = compiled(r"[^.!?]*\?")
_ZH_QUESTION = compiled(r"[^。！!？?]*(?:[吗呀吧啊呢]\s*[？?]?|[？?])")


def _as_said(question: str, answer: str) -> str | None:
    """The companion's question about the user, in the user's words, if the answer takes it."""
    if HAN.search(question):
        asks = [q for q in _ZH_QUESTION().findall(question) if "你" in q or len(q.strip()) <= 10]
        if not asks or not (_YES().search(answer) or _echoed(asks[-1], answer)):
            return None
        said = re.sub(r"[吗呀吧啊呢]?\s*[？?]?$", "", asks[-1].strip())
        said = said.replace("是不是", "").replace("是否", "").replace("您", "我").replace("你", "我")
        # 你在华为吗 — 嗯: "I am at Huawei" is where one works, unless it is a place or home
        return re.sub(r"我在(?P<v>(?!家|外面|路上)[\u4e00-\u9fffA-Za-z]{2,8})$", r"我在\g<v>上班", said)
    for q in reversed(_EN_QUESTION().findall(question)):
        for pattern, form in _en_asks():
            m = pattern.match(q.strip())
            if not m:
                continue
            groups = m.groupdict()
            rest = _chosen(groups["rest"], answer)
            if rest is None:
                return None
            said = form.format(x=groups.get("x") or "", rest=rest)
            said = re.sub(r"\byour\b", "my", re.sub(r"\byou\b", "me", said))
            return re.sub(r"^I am the\b", "I am a", said)  # "the pharmacist there": one
    return None


def _quoted_back(value: str, question: str) -> bool:
    """The answer takes up a plain word of the question itself ("Where are you living now?" —
    "'Living' is generous. I rent a bunk…"): what the question said in lower case is not the
    name it asks for (a name it offers, "Leeds or York?", may be the answer)."""
    word = value.strip("'\"‘’“” ")
    return bool(word) and word.casefold() in re.findall(r"\b[a-z][\w'-]*", question)


# a Chinese yes is often the question's verb said back (您喜欢钓鱼吧？— 喜欢。; 有猫吗？— 有！)
_ZH_ECHO = compiled(r"^\W*(?P<verb>[\u4e00-\u9fff]{1,2})[。！!，,~～\s]")


def _echoed(question: str, answer: str) -> bool:
    m = _ZH_ECHO().match(answer)
    return bool(m) and not m["verb"].startswith(("不", "没")) and m["verb"] in question


def _chosen(rest: str, answer: str) -> str | None:
    alternatives = [a.strip(" ,") for a in re.split(r",?\s+\bor\b\s+", rest) if a.strip(" ,")]
    if len(alternatives) == 1:
        return rest if _YES().search(answer) else None
    m = _FIRST_PHRASE().match(answer)
    first = m.group(1).strip().casefold() if m else ""
    picked = [a for a in alternatives if first and first in a.casefold()]
    return picked[0] if len(picked) == 1 else None


# the companion asks who or what a name is ("Pavlova?", "Who's Hemi?", 奶盖是？, Mochi 是？): the answer
# says it, so the name is the one its role noun takes
_WHO_IS = compiled(r"(?:^|[.!]\s+)(?:who(?:'s| is)\s+)?(?P<name>(?-i:[A-Z])[a-z]+)\s*\?\s*$|"
                   r"(?:(?P<zname>[\u4e00-\u9fff]{1,4}?)|(?P<lname>(?-i:[A-Z])[a-z]+)\s*)是(?:谁|什么|哪位)?\s*[？?]\s*$",
                   re.IGNORECASE)


# ------------------------------------------------------------------ the whole stretch

# "I bought a car this morning. An old Volvo estate, 2011": the next sentence names it
_NAMED_NEXT = compiled(r"(?:^|[.!]\s+)(?:it's\s+|it is\s+)?an?\s+(?:[\w-]+\s+){0,3}?"
                       r"(?P<make>(?-i:[A-Z])[\w-]+(?:\s+(?-i:[A-Z])[\w-]+)?)", re.IGNORECASE)


def _specific(statement: Statement, text: str) -> Statement:
    if statement.attribute != "owns" or statement.value.casefold() not in _GENERIC:
        return statement
    at = text.casefold().find(statement.value.casefold())
    m = _NAMED_NEXT().search(text, at + len(statement.value)) if at >= 0 else None
    if not m:
        return statement
    return replace(statement, value=m["make"], kind=statement.value)



def read_turns(turns: Sequence[Turn], speakers: Sequence[str] = (),
               known: Sequence[tuple[str, str]] = ()) -> list[list[Statement]]:
    """What each turn states about its (user) speaker, read with the turns around it.
    `known`: (attribute, value) of the facts the space holds now ("Redline Freight"), so a
    lowercase "i quit redline" names them and "现在是真不喜欢了" finds the like it ends."""
    turns = [Turn(t.role, straight_quotes(t.text)) for t in turns]  # "what’s its name?"
    names = batch_names(turns, speakers)
    proper = proper_forms(turns, speakers, [v for _, v in known])
    # phone English written out once ("my gf." is "my girlfriend."), for every step below
    turns = [Turn(t.role, written_out(t.text, proper)) if t.role == "user" else t for t in turns]
    told = [statements(t.text, proper) if t.role == "user" else [] for t in turns]
    names -= {w for said in told for s in said if s.attribute not in ("pet", "partner", "child")
              for w in s.value.split()}
    intros = _introduced(turns)
    out = [_turn_in_context(turns, i, told[i], names, intros, frozenset(speakers))
           if turns[i].role == "user" else [] for i in range(len(turns))]
    _answers(turns, out)
    _moves_confirmed(turns, out)
    _asked_what_became(turns, out, known)
    _known_that_ended(turns, out, known)
    _here(turns, out)
    _children_named(turns, out, names)
    _about_others(turns, out)
    _pets_that_died(turns, out)
    _pets_given_away(turns, out, known)
    _it_that_ended(turns, out, known)
    _likes_that_ended(turns, out, [v for a, v in known if a == "likes"])
    return out


def _introduced(turns: Sequence[Turn]) -> dict[int, str]:
    """The name each user turn is about by the turns before it: one it introduces ("Meet
    Pepper!", 这是可乐！), one the companion asked about ("Pavlova?", 安安是？), or the answer to
    a naming question ("它叫什么？" — "芝麻")."""
    intros = {i: (m["name"] or m["zname"]) for i, t in enumerate(turns) if t.role == "user"
              for m in [_INTRO().search(t.text)] if m}
    for i in range(1, len(turns)):
        if turns[i].role != "user" or turns[i - 1].role == "user" or i in intros:
            continue
        if _asked(turns[i - 1].text) == NAMING and (named := _answer(NAMING, turns[i].text)):
            intros[i] = named
        elif (m := _WHO_IS().search(turns[i - 1].text)) and (
                m["name"] or m["lname"] or "") not in _NOT_NAMES | _DISCOURSE:
            intros[i] = m["name"] or m["zname"] or m["lname"]
    return intros


def _turn_in_context(turns: Sequence[Turn], i: int, told: list[Statement], names: set[str],
                     intros: dict[int, str], speakers: frozenset[str]) -> list[Statement]:
    turn, said = turns[i], list(told)
    if i and turns[i - 1].role != "user" and (asked := _as_said(turns[i - 1].text, turn.text)):
        said += [s for s in statements(asked) if s not in said]
    bound = _bound(turns, i, names, intros, speakers)
    just_told = turns[i - 2].text if i >= 2 and turns[i - 2].role == "user" else ""
    said = [_named_by(s, bound, just_told) for s in said]
    # a role the turn names itself ("我家猫咪咪", "my wife Hannah") binds nothing more
    said += [s for s in bound
             if not any((t.attribute == s.attribute and not t.ends) or t.value == s.value
                        for t in said)]
    if any(s.attribute == "works_at" and not s.ends for s in said) and not any(
            s.attribute == "works_as" for s in said):
        said += _jobs_named(turn.text)  # "i work at bean there, a coffee place. barista"
    if (kind := _PET_WORD().search(turn.text)) and not any(s.attribute == "pet" for s in said):
        said += [Statement("pet", s.value, kind=kind.group(0).lower()) for s in said
                 if s.attribute == NAMING]
    return [_specific(s, turn.text) for s in said]


def _named_by(statement: Statement, bound: list[Statement], just_told: str) -> Statement:
    """A pet the turn tells only by its kind ("Mochi 在踩我键盘" — "Mochi 是？" — "my cat! 英短
    蓝猫") is the one the name near it names, a name the user's turn before the question said:
    Mochi, a 蓝猫 (not 哇 of "哇 是什么？")."""
    if statement.attribute != "pet" or statement.ends or not _PET_WORD().search(statement.value):
        return statement
    name = next((b for b in bound if b.attribute == "pet" and not _PET_WORD().search(b.value)
                 and b.value in just_told), None)
    return replace(statement, value=name.value, kind=statement.value) if name else statement


_ABOUT_OTHER = compiled(r"你(?:儿子|女儿|老公|老婆|男朋友|女朋友|妈|爸|哥|姐|弟|妹|孩子|朋友|同事)|令郎|令爱|"
                        r"令尊|令堂|\byour (?:son|daughter|wife|husband|boyfriend|girlfriend|mum|mom|"
                        r"dad|brother|sister|kids?|friend)\b|\b(?:does|is|did|has) (?:he|she)\b",
                        re.IGNORECASE)


# a question for something (where, what) — not a yes/no about who they are to the user
_WH = compiled(r"什么|哪|何|怎么|多少|几|\b(?:what|where|how|which|who)\b", re.IGNORECASE)


_KIDS_Q = compiled(r"\b(?:kids|children|little ones|sons|daughters|squires|grandkids)\b|孩子|娃|儿女",
                   re.IGNORECASE)
_NAME_AGE = compiled(r"\b((?-i:[A-Z])[a-zà-ÿ]+)(?:\s+is|'s|,)\s+(?:\d{1,2}|one|two|three|four|five|six|"
                     r"seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
                     r"seventeen|eighteen)\b")


_PLACE_NAMED = compiled(r"\b(?:from|in|to|at)\s+((?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)*)")


_ENDED_ANSWER = compiled(r"^\W*(?:(?:嗯|对|唉|哎)\W*)?(?:最后)?(?:卖了|卖掉了|送人了|送给|转给|扔了|没了|走了|"
                         r"分了|辞了|不学了|不玩了|放弃了)|^\W*(?:(?:yeah|well|oh)\W+)?(?:I\s+)?(?:sold it|"
                         r"gave it away|it's gone|gone|it died|he died|she died|we broke up|"
                         r"quit|gave (?:it|them) up)\b", re.IGNORECASE)


# "Are you still doing the Arabic classes?" — "no, i stopped.": a question whether a thing
# still holds, answered with a bare no, ends it ("no time lately" is no answer of that kind)
_ASKS_STILL = compiled(r"\b(?:still|any ?more)\b[^?]*\?|还(?:在|养|学|练|住|玩|弹|打|做)[^？?]*(?:吗|么)?[？?]",
                       re.IGNORECASE)
_BARE_NO = compiled(r"^\W*(?:no|nope|nah|not any ?more)\b(?=\s*(?:[,.!;]|$|I\b|i\b))|"
                    r"^\W*(?:没有了|早就?不\w{0,2}了|不\w了)", re.IGNORECASE)


_MOVED = compiled(r"\bmov(?:ed|ing day|e went|e go)\b|\bnew (?:place|flat|house|home|unit)\b|"
                  r"\byou made it\b|搬家|搬过来|搬过去|新家", re.IGNORECASE)


def _moves_confirmed(turns: Sequence[Turn], out: list[list[Statement]]) -> None:
    """"hello from HAMILTON" — "You made it! How was moving day?": a place told in passing is
    a home told plainly when the talk right after it is of the move."""
    for i, said in enumerate(out):
        for k, s in enumerate(said):
            if s.attribute == "lives_in" and s.weak and not s.ends and any(
                    _MOVED().search(t.text) for t in turns[i:i + 3]) and not any(
                    t.attribute == "lives_in" and not t.weak and not t.ends
                    for near in out[max(0, i - 1):i + 3] for t in near):
                said[k] = replace(s, weak=False)  # unless the move names its place plainly


def _asked_what_became(turns: Sequence[Turn], out: list[list[Statement]],
                       known: Sequence[tuple[str, str]]) -> None:
    """钢琴最后怎么处理的？— 卖了 / "What happened to the boat?" — "Sold it": a question that
    names a fact the user holds, answered by its end, ends it; so does a bare no to whether
    it still holds ("Are you still doing the Arabic classes?" — "no, i stopped.")."""
    told = [(s.attribute, s.value) for said in out for s in said if not s.ends]
    facts = [(a, v) for a, v in dict.fromkeys([*known, *told]) if v and v != "*"]
    for i in range(1, len(turns)):
        if turns[i].role != "user" or turns[i - 1].role == "user":
            continue
        if not (_ENDED_ANSWER().search(turns[i].text) or (
                _BARE_NO().search(turns[i].text) and _ASKS_STILL().search(turns[i - 1].text))):
            continue
        question = turns[i - 1].text.casefold()
        named = [(a, v) for a, v in facts if v.casefold() in question]
        if len(named) == 1 and not any(s.ends and s.attribute == named[0][0] for s in out[i]):
            out[i].append(Statement(named[0][0], named[0][1], True))


# The verbs that end a thing one holds, by what it is; {v} is the value as the space knows it.
# A home is left for trips as well ("we left London for Paris"): only moving out ends it.
_ENDS_KNOWN_EN = {
    "any": r"\b(?:gave up|given up|giving up|quit|quitting|stopped|dropped|no longer (?:do|play))"
           r"\s+(?:on\s+|my\s+|the\s+|playing\s+|learning\s+|doing\s+|going to\s+)*{v}\b",
    # what one has is sold or given away ("they sold pottery at the fair" ends no lessons)
    "owns": r"\b(?:sold|got rid of|gave away|no longer (?:have|own))\s+(?:my\s+|the\s+|our\s+)*"
            r"{v}\b",
    "pet": r"\b(?:gave away|rehomed|got rid of)\s+(?:my\s+|the\s+|our\s+)*{v}\b",
    "works_at": r"\b(?:quit|left|resigned from|last (?:day|shift|week) at)\s+(?:my job at\s+|"
                r"the\s+)?{v}",
    "lives_in": r"\bmoved (?:out of|away from)\s+{v}\b",
}
_ENDS_KNOWN_ZH = {
    "any": r"(?:放弃了?|不再\w{{0,2}}){v}|{v}[^，。！？,.!?]{{0,8}}?(?:不玩了|不学了|不练了|不打了|"
           r"不弹了|放弃了)",
    "owns": r"(?:卖了|卖掉了?|送走了?){v}|{v}[^，。！？,.!?]{{0,8}}?(?:卖了|卖掉|卖给|送人|送给|转给|转手)",
    "pet": r"(?:送走了?){v}|{v}[^，。！？,.!?]{{0,8}}?(?:送人|送给|送走)",
    "works_at": r"(?:从|离开了?){v}[^，。！？]{{0,4}}?(?:辞职|离职)|{v}[^，。！？]{{0,6}}?(?:最后一天班|辞职|离职)",
    "lives_in": r"搬离了?{v}|从{v}搬(?:走|去|到)",
}
# what a known value of these is may end so; a child, a partner or an allergy ends otherwise
_ENDABLE = frozenset({"likes", "learning", "owns", "pet", "works_at", "lives_in", "studies"})


def _known_that_ended(turns: Sequence[Turn], out: list[list[Statement]],
                      known: Sequence[tuple[str, str]]) -> None:
    """"honestly I've given up badminton", "那辆面包车跟店一起卖给接手的小两口了", "on my last
    shift at Corniche Care they made me a cake": an ending verb on a value the space holds
    ends it, however the value was read (a model read the like the rules never had, and no
    rule names badminton among what one gives up). Only what the space holds now: a name the
    turn ends that nobody held is no fact (the rules' own endings say what they read)."""
    endings = [(attribute, value, _ending_of(attribute, value)) for attribute, value in known
               if attribute in _ENDABLE and len(value) >= 2 and value != "*"]
    for i, turn in enumerate(turns):
        if turn.role != "user":
            continue
        for attribute, value, pattern in endings:
            if pattern.search(turn.text) and not any(
                    s.attribute == attribute and s.ends and s.value == value for s in out[i]):
                out[i].append(Statement(attribute, value, True))


def _ending_of(attribute: str, value: str) -> re.Pattern[str]:
    """The pattern of the verbs that end `value` (the table's "any" and the attribute's own).
    "Corniche Care Hospital" is left as "Corniche Care": its first two words will do."""
    zh = bool(HAN.search(value))
    table = _ENDS_KNOWN_ZH if zh else _ENDS_KNOWN_EN
    name = re.escape(value) if zh else r"\s+".join(map(re.escape, value.split()[:2]))
    return re.compile("|".join(table[key].format(v=name) for key in ("any", attribute)
                               if key in table), 0 if zh else re.IGNORECASE)


def _here(turns: Sequence[Turn], out: list[list[Statement]]) -> None:
    """"Writing to you from Brighton." … "I live here now!": "here" is the last place the
    turn or the two before it name; none named, nothing is kept."""
    for i, said in enumerate(out):
        for k, s in enumerate(said):
            if s.value != HERE:
                continue
            text = " ".join(t.text for t in turns[max(0, i - 2):i + 1])
            places = [p for p in _PLACE_NAMED().findall(text) if p.split()[0] not in NOT_A_NAME]
            said[k] = replace(s, value=places[-1]) if places else replace(s, value="")
        out[i] = [s for s in said if s.value]


def _children_named(turns: Sequence[Turn], out: list[list[Statement]], names: set[str]) -> None:
    """"How many young squires do you have?" — "two. Mateo is 16 …, Lucía is 12": the names
    an answer about one's children gives with an age are the children."""
    for i in range(1, len(turns)):
        if turns[i].role != "user" or turns[i - 1].role == "user" or not (
                "?" in turns[i - 1].text and _KIDS_Q().search(turns[i - 1].text)):
            continue
        for m in _NAME_AGE().finditer(turns[i].text):
            name = m.group(1)
            if name not in _NOT_NAMES | _DISCOURSE and not any(s.value == name for s in out[i]):
                out[i].append(Statement("child", name))


def _about_others(turns: Sequence[Turn], out: list[list[Statement]]) -> None:
    """令郎在何处高就？— 在美国西雅图，做芯片的工程师: the answer to a question about somebody
    else is theirs, unless the user says "I"/我 in it."""
    for i in range(1, len(turns)):
        if (turns[i].role == "user" and turns[i - 1].role != "user"
                and _ABOUT_OTHER().search(turns[i - 1].text) and _WH().search(turns[i - 1].text)
                and not re.search(r"我|\bI\b|\bI'm\b|\bmy\b", turns[i].text, re.IGNORECASE)):
            out[i] = []


def _likes_that_ended(turns: Sequence[Turn], out: list[list[Statement]], known: Sequence[str]
                      ) -> None:
    """"以前那么爱打 现在是真不喜欢了", "I'm done with it": a like that ended without naming
    it ends the thing the turn or the one before names — a like told in this stretch or one
    the space knows; nothing when none is named there."""
    told = [s.value for said in out for s in said if s.attribute == "likes" and not s.ends]
    candidates = [v for v in dict.fromkeys([*told, *known]) if v and v != "*"]
    for i, said in enumerate(out):
        for k, s in enumerate(said):
            if s.attribute != "likes" or not s.ends or s.value != "*":
                continue
            around = " ".join(t.text for t in turns[max(0, i - 1):i + 1]).casefold()
            named = [v for v in candidates if v.casefold() in around]
            said[k] = replace(s, value=named[-1]) if named else replace(s, value="")
        out[i] = [s for s in said if s.value]


_VET = compiled(r"\bvet'?s?\b|兽医|宠物医院", re.IGNORECASE)
# a pet given away by a pronoun ("I gave him to a kid at the market", 把它送人了)
_GAVE_IT = compiled(r"\b(?:gave|given|rehomed)\s+(?:him|her|it|them)\s+(?:away|to)\b|"
                    r"\brehomed\s+(?:him|her|it|them)\b|把(?:它|他|她)(?:送人|送走|送给)|"
                    # … or living with somebody else now
                    r"\b(?:he|she|it)(?:'s| is)\s+(?:now\s+)?(?:living|staying)\s+with\s+"
                    r"(?!me\b|us\b)\w+[^.!?]*\bnow\b|(?:它|他|她)现在(?:跟|和)(?!我)[\u4e00-\u9fff]{1,4}"
                    r"(?:住|生活)", re.IGNORECASE)


# an ending on "it": "I'm done with it", "the doctor says I've outgrown it", "gave it up"
_ENDED_IT = compiled(r"\b(?:done with|outgr(?:own|ew)|gave up|given up|giving up|quit|dropped|"
                     r"stopped)\s+(?:it|them)\b|(?:把它|它)(?:戒了|放弃了)", re.IGNORECASE)
_IT_ENDS = ("likes", "learning", "studies", "allergic_to")


def _it_that_ended(turns: Sequence[Turn], out: list[list[Statement]],
                   known: Sequence[tuple[str, str]]) -> None:
    """"The physio says my knee is done for running … I'm done with it"; "they fed me egg bit
    by bit … The doctor says I've outgrown it": an ending on "it" ends the held like, lesson,
    study or allergy named last before it (`_named_last`)."""
    users = [i for i, t in enumerate(turns) if t.role == "user"]
    for at, i in enumerate(users):
        m = _ENDED_IT().search(turns[i].text)
        if not m or any(s.ends for s in out[i]):
            continue
        held = [(a, v) for a, v in known if a in _IT_ENDS and len(v) >= 3] + [
            (s.attribute, s.value) for said in out[:i] for s in said
            if s.attribute in _IT_ENDS and not s.ends and len(s.value) >= 3]
        last = _named_last(turns, users, at, m.start(), [v for _, v in held])
        if last is not None:
            out[i].append(Statement(*held[last], True))


def _named_last(turns: Sequence[Turn], users: Sequence[int], at: int, upto: int,
                values: Sequence[str]) -> int | None:
    """Which of `values` a pronoun at `upto` of the user's turn `users[at]` stands for: the
    one named last before it — in that turn, the turn it answers, and the user's two turns
    before (its index, or None)."""
    i = users[at]
    before = sorted({*users[max(0, at - 2):at], *([i - 1] if i else [])})
    said = " ".join([*(turns[j].text for j in before), turns[i].text[:upto]]).casefold()
    named = [(said.rfind(v.casefold()), k) for k, v in enumerate(values) if v.casefold() in said]
    return max(named)[1] if named else None


def _pets_given_away(turns: Sequence[Turn], out: list[list[Statement]],
                     known: Sequence[tuple[str, str]]) -> None:
    """"Pickle got into the vents. Again." … "I gave him to a kid at the market"; "And
    Mister Buttons?" — "He couldn't come. He's living with Carol now": the pet a pronoun gives
    away is the one named last before it (`_named_last`), of the pets the space holds or the
    turns before it told."""
    users = [i for i, t in enumerate(turns) if t.role == "user"]
    for at, i in enumerate(users):
        m = _GAVE_IT().search(turns[i].text)
        pets = [v for a, v in known if a == "pet" and v != "*"] + [
            s.value for said in out[:i] for s in said if s.attribute == "pet" and not s.ends]
        if not m or any(s.attribute == "pet" and s.ends and s.value in pets for s in out[i]):
            continue
        last = _named_last(turns, users, at, m.start(), pets)
        if last is not None:
            out[i].append(Statement("pet", pets[last], True))


def _pets_that_died(turns: Sequence[Turn], out: list[list[Statement]]) -> None:
    """"Tansy died on Thursday" … "at the vet's": the name's end is a pet's when the talk
    around it is of pets (a kind, the vet), so the use case keeps it even if never told."""
    for i, said in enumerate(out):
        for k, s in enumerate(said):
            if s.attribute != "pet" or not s.ends or s.kind:
                continue
            around = " ".join(t.text for t in turns[max(0, i - 2):i + 3])
            kind = _PET_WORD().search(around) or _VET().search(around)
            if kind:
                said[k] = replace(s, kind=kind.group(0).lower() if _PET_WORD().match(kind.group(0))
                                  else "pet")


_FEEL_Q = compiled(r"\b(?:how do you feel about|do you like|are you a fan of|what do you think of|"
                   r"do you eat|do you drink)\s+(?P<x>[\w' -]{2,30}?)\s*\?|你喜欢(?P<zx>[\u4e00-\u9fff]{1,6}?)吗",
                   re.IGNORECASE)
_FEEL_NEG = compiled(r"\b(?:can't stand|cannot stand|hate|don't like|not a fan|gross|disgusting|no way)\b|"
                     r"不喜欢|讨厌|受不了|不爱|不吃|不喝", re.IGNORECASE)
_FEEL_POS = compiled(r"\b(?:love|like|adore|obsessed|big fan)\b|喜欢|爱|超爱", re.IGNORECASE)


_CLAUSE_ONE = compiled(r"[^.!?。！？]*")


def _feelings(question: str, answer: str) -> list[Statement]:
    """"How do you feel about durian?" — "I can't stand it": a like or dislike of the thing
    asked about."""
    m = _FEEL_Q().search(question)
    if not m:
        return []
    thing = (m["x"] or m["zx"] or "").strip()
    answer = _CLAUSE_ONE().match(answer).group(0)  # "I like boats. I don't like his driving."
    if _FEEL_NEG().search(answer):
        return [Statement("dislikes", thing)]
    if _FEEL_POS().search(answer) or (_YES().search(answer) and not re.search(r"\bnot\b|不", answer)):
        return [Statement("likes", thing)]
    return []


_WH_OR_YES = compiled(r"\?|？|吗|呢")


def _answers(turns: Sequence[Turn], out: list[list[Statement]]) -> None:
    """A bare answer to the companion's question states its value; it makes a generic value
    the user told just before specific (in place)."""
    for i in range(1, len(turns)):
        if turns[i].role != "user" or turns[i - 1].role == "user":
            continue
        out[i] += [s for s in _feelings(turns[i - 1].text, turns[i].text)
                   if not any(t.attribute in ("likes", "dislikes") and t.value == s.value
                              for t in out[i])]
        attribute = _asked(turns[i - 1].text)
        # talk of work: the question's, or the turns just before it ("guess who got the job" —
        # "WAIT. Papercrane?!" — "PAPERCRANE. junior illustrator!!!")
        if attribute is None and _ABOUT_WORK().search(
                " ".join(t.text for t in turns[max(0, i - 3):i])) and _WH_OR_YES().search(
                turns[i - 1].text) and not any(s.attribute == "works_as" for s in out[i]):
            out[i] += _jobs_named(turns[i].text)  # "Is this freelance work?" — "yes. illustrator."
        before = next((j for j in range(i - 2, max(-1, i - 5), -1) if turns[j].role == "user"),
                      None)
        if attribute is None and before is not None and _WHICH().search(turns[i - 1].text) and any(
                s.value.casefold() in _GENERIC for s in out[before]):
            attribute = next(s.attribute for s in out[before] if s.value.casefold() in _GENERIC)
        if attribute is None:
            continue
        if attribute == "works_at?":
            if not _ABOUT_WORK().search(" ".join(t.text for t in turns[max(0, i - 3):i])):
                continue
            attribute = "works_at"
        if attribute in ("works_at", "works_as"):
            out[i] += [s for s in _jobs_named(turns[i].text) if s not in out[i]]
        value = _answer(attribute, turns[i].text)
        if not value or _quoted_back(value, turns[i - 1].text) or any(
                s.attribute == attribute and not s.ends for s in out[i]):
            continue
        generic = [k for k, s in enumerate(out[before] if before is not None else [])
                   if s.attribute == attribute and s.value.casefold() in _GENERIC]
        if generic and before is not None:
            k = generic[0]
            out[before][k] = replace(out[before][k], value=value, kind=out[before][k].value)
        else:
            out[i].append(Statement(attribute, value))

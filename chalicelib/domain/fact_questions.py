"""Which lasting fact a question asks for ("我现在住在哪？" → lives_in, "Where does Maya work
now?" → works_at), in zh and en, whoever it is about: recall answers such a question from the
person's facts (usecases.recall.profile) as well as by meaning and keywords.

Written by hand: no library maps a question to a profile attribute; the companion-question
patterns of domain.fact_context ask "you" only, these any person.
"""

from __future__ import annotations

import functools
import re

from chalicelib.domain.kin import KIN_EN, KIN_ZH, KIN_ZH_SHORT
from chalicelib.domain.pets import SPECIES_WORDS_EN, SPECIES_WORDS_ZH, species
from chalicelib.domain.textproc import straight_quotes

# a pet's name asked by its species: "我的狗叫什么", "Jess 的猫叫啥", "What's my dog's name?",
# "the name of 小满's dog", "what is her cat called", "what did she name her puppy"
_PET_NAME = (rf"(?:{SPECIES_WORDS_ZH})(?:咪|狗)?(?:叫什么|叫啥|的名字|名字叫)|"
             rf"\b(?:{SPECIES_WORDS_EN})(?:'s|s')\s+names?\b|"
             rf"\bnames? of (?:\S+\s+){{0,3}}?(?:{SPECIES_WORDS_EN})\b|"
             rf"\bwhat(?:'s| is| was| are) (?:\S+\s+){{0,3}}?(?:{SPECIES_WORDS_EN}) called\b|"
             rf"\bwhat did \S+ name (?:\S+\s+){{0,2}}?(?:{SPECIES_WORDS_EN})\b")

# who is asked about: a pronoun, a name in capitals, or a name in Han characters (an English
# question about a Chinese chat: "Which city does 小满 live in?")
_WHO = r"(?:I|you|he|she|we|they|[A-Z][\w'-]*|[\u4e00-\u9fff]{1,4})"
# (attribute, pattern), the first that matches wins: the narrower questions first
_ASKED_SOURCES = (
    ("allergic_to", r"\ballerg|过敏"),
    ("works_as", r"\bwhat (?:do|does|did) " + _WHO + r" do (?:for (?:work|a living)|now)\b|"
                 # "…, and what does she do?": the clause asks no more than that
                 r"^\W*(?:and\s+)?what (?:do|does) " + _WHO + r" do\s*[?？]?\s*$|"
                 r"\bwhat(?:'s| is| was) (?:my|your|his|her|their|[A-Z][\w'-]*'s) (?:(?:old|"
                 r"previous|former|first|last|current|new|present|day) )?(?:job|role|position|"
                 r"occupation|profession)\b|\bwhat (?:job|work) (?:do|does|did)\b|"
                 r"做什么工作|干什么工作|什么职业|什么职位|做什么的|干什么的|干啥的|做啥的|是做什么|"
                 # "…在哪家公司？做什么？": the clause asks no more than that, as in English
                 r"^\W*(?:在)?(?:做|干)(?:什么|啥)\W*$"),
    ("works_at", r"\bwhere (?:do|does|did) " + _WHO + r" work\b|\b(?:which|what) (?:company|firm|"
                 r"employer)\b|\bwork (?:for|at) (?:which|what)\b|\bwho (?:do|does) " + _WHO +
                 r" work for\b|在哪(?:家|个)?(?:公司)?(?:上班|工作)|(?:哪|什么)(?:家|个)?公司|"
                 r"去哪(?:家|儿|里)上班"),
    ("lives_in", r"\bwhere (?:do|does|did) " + _WHO + r" live\b|\bwhere (?:is|are) " + _WHO +
                 r" (?:living|based)\b|\b(?:which|what) (?:city|town|neighbou?rhood|district|"
                 r"area) (?:do|does|did) " + _WHO + r" live\b|住(?:在)?(?:哪|什么地方|哪个)|"
                 r"搬(?:到|去)了?哪"),
    ("studies", r"\bwhat (?:do|does|did) " + _WHO + r" stud(?:y|ying)\b|\bwhat(?:'s| is) "
                r"(?:my|your|his|her|their|[A-Z][\w'-]*'s) (?:major|degree|course)\b|"
                r"什么专业|哪个专业|学的(?:是)?什么|读的(?:是)?什么"),
    ("learning", r"\bwhat (?:am|is|are) " + _WHO + r" learning\b|在学什么|学什么(?:乐器|语言)"),
    ("partner", r"\b(?:boyfriend|girlfriend|husband|wife|partner|fianc[ée]e?)\b|男朋友|女朋友|"
                r"男友|女友|老公|老婆|对象|\bwho (?:is|was|are|were) " + _WHO +
                r" (?:dating|seeing|going out with|married to)\b|跟谁(?:在一起|谈恋爱|交往|结婚)"),
    ("pet", r"\bpets?\b|\bwhat (?:kind of )?(?:dog|cat)\b|宠物|养了?(?:什么|啥|几只)|"
            # a pet's name asked by its species (`pet_name_asked`)
            + _PET_NAME),
    ("dislikes", r"\bwhat (?:do|does|did) " + _WHO + r" (?:hate|dislike|can'?t stand)\b|"
                 r"\bwhich \w+ (?:do|does|did) " + _WHO + r" (?:hate|dislike)\b|讨厌什么|"
                 r"不喜欢什么|最讨厌|受不了什么"),
    ("likes", r"\bwhat (?:do|does|did) " + _WHO + r" (?:love|like|enjoy)\b|\bwhich \w+ (?:do|does|"
              r"did) " + _WHO + r" (?:love|like)\b|喜欢什么|最喜欢|爱吃什么"),
    ("owns", r"\bwhat (?:car|bike|phone|camera)\b|\bwhat (?:do|does) " + _WHO +
             r" drive\b|什么(?:车|手机|相机|电脑)|开的(?:什么|啥)"),
)


# The attributes whose questions above ask for the value itself ("where does she live",
# 在哪上班, 在学什么): a question that merely names a pet, a girlfriend or an allergy ("Did
# they grow up with a pet dog?", "the beach with his girlfriend", "based on her allergies")
# matches the others too, so only these put the fact's telling first (recall.told_first).
ASKS_THE_VALUE = frozenset({"lives_in", "works_at", "works_as", "studies", "learning",
                            "likes", "dislikes"})


def asks_the_value(attribute: str, clause: str) -> bool:
    """The clause asks for the fact's value itself: an attribute of `ASKS_THE_VALUE`, a
    pet's name asked by its species ("我的狗叫什么？": the name is the value), or who the
    partner is."""
    return (attribute in ASKS_THE_VALUE or (attribute == "pet" and pet_name_asked(clause))
            or (attribute == "partner" and _WHO_ASKED.search(clause) is not None))


# who the partner is ("Who is Nora dating now?", "男朋友是谁", "她老公叫什么"), not a question
# that merely names one ("the beach with his girlfriend")
_WHO_ASKED = re.compile(r"\bwho\b|谁|叫什么|名字|\bname\b", re.IGNORECASE)


def pet_name_asked(clause: str) -> bool:
    return _pet_name().search(straight_quotes(clause)) is not None


def species_asked(clause: str) -> str | None:
    """The species a question about pets names ("我养了几只猫" → cat), or None: any pet."""
    m = _species_word().search(straight_quotes(clause))
    return species(m.group(0)) if m else None


@functools.cache
def _pet_name() -> re.Pattern[str]:
    return re.compile(_PET_NAME, re.IGNORECASE)


@functools.cache
def _species_word() -> re.Pattern[str]:
    return re.compile(rf"\b(?:{SPECIES_WORDS_EN})\b|{SPECIES_WORDS_ZH}", re.IGNORECASE)


def attribute_asked(question: str) -> str | None:
    """The fact attribute a question asks for, or None."""
    found = _first_asked(question)
    return found[0] if found else None


def fact_asked(question: str) -> tuple[str, str] | None:
    """The fact attribute a question asks for and the clause that asks it ("Which city does
    小满 live in" of "Which city does 小满 live in, and where is she from originally?": a word
    of the past in another clause asks something else), or None."""
    found = _first_asked(question)
    if found is None:
        return None
    attribute, m = found
    return attribute, _clause(question, m)


def facts_asked(question: str) -> list[tuple[str, str]]:
    """Every fact attribute a question asks for, each with the clause that asks it: the
    first one's (`fact_asked`), then one per other clause ("Where does Nora work now, and
    what does she do?": works_at, then works_as)."""
    first = fact_asked(question)
    if first is None:
        return []
    out = [first]
    for clause in (c for c in _CLAUSE_BREAK.split(question) if c.strip()):
        if clause.strip() in first[1] or (found := _first_asked(clause)) is None:
            continue
        if found[0] not in (a for a, _ in out):
            out.append((found[0], clause.strip()))
    return out


def _clause(question: str, m: re.Match[str]) -> str:
    starts = [b.end() for b in _CLAUSE_BREAK.finditer(question, 0, m.start())]
    end = _CLAUSE_BREAK.search(question, m.end())
    return question[starts[-1] if starts else 0:end.start() if end else len(question)]


_CLAUSE_BREAK = re.compile(r"[，,;；？?。！!]|\band\b")


def _first_asked(question: str) -> tuple[str, re.Match[str]] | None:
    """The first attribute whose pattern the question matches, with the match (the question
    with ’ read as ', the same length: the match's offsets are the question's)."""
    question = straight_quotes(question)
    return next(((a, m) for a, p in _asked() if (m := p.search(question))), None)


# Someone of the person's, named by how they are related ("Nora 的哥哥住在哪里？", "我妈上次
# 住院是因为什么？", "Where does Jess's brother live?"): the question asks that one's fact, not
# the person's. Kin and the people around one: domain.kin.
def asks_of_someone_else(question: str, attribute: str) -> bool:
    """The question asks the fact of someone related to the person ("Nora 的哥哥", "我妈",
    "Jess's brother") — unless the relation is the fact asked ("Who is Vivi's boyfriend?": the
    word itself asks for the partner, `attribute_asked`)."""
    return any(attribute_asked(m.group("who") or m.group("who_en")) != attribute
               for m in _someone().finditer(question))


@functools.cache
def _someone() -> re.Pattern[str]:
    return re.compile(rf"(?:的|我|你|他|她)(?P<who>{KIN_ZH}|{KIN_ZH_SHORT})|(?:'s|’s|\b(?:my|your|"
                      rf"his|her|their|our))\s+(?P<who_en>{KIN_EN})\b", re.IGNORECASE)


@functools.cache
def _asked() -> list[tuple[str, re.Pattern[str]]]:
    """_ASKED_SOURCES compiled when a question is first read for the fact it asks."""
    return [(a, re.compile(p, re.IGNORECASE)) for a, p in _ASKED_SOURCES]

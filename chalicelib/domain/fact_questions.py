"""Which lasting fact a question asks for ("我现在住在哪？" → lives_in, "Where does Maya work
now?" → works_at), in zh and en, whoever it is about: recall answers such a question from the
person's facts (usecases.recall.profile) as well as by meaning and keywords.

Written by hand: no library maps a question to a profile attribute; the companion-question
patterns of domain.fact_context ask "you" only, these any person.
"""

from __future__ import annotations

import functools
import re

_WHO = r"(?:I|you|he|she|we|they|[A-Z][\w'-]*)"
# (attribute, pattern), the first that matches wins: the narrower questions first
_ASKED_SOURCES = (
    ("allergic_to", r"\ballerg|过敏"),
    ("works_as", r"\bwhat (?:do|does|did) " + _WHO + r" do (?:for (?:work|a living)|now)\b|"
                 r"\bwhat(?:'s| is| was) (?:my|your|his|her|their|[A-Z][\w'-]*'s) (?:job|role|"
                 r"position|occupation|profession)\b|\bwhat (?:job|work) (?:do|does|did)\b|"
                 r"做什么工作|干什么工作|什么职业|什么职位|做什么的|干什么的|干啥的|做啥的|是做什么"),
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
                r"男友|女友|老公|老婆|对象"),
    ("pet", r"\bpets?\b|\bwhat (?:kind of )?(?:dog|cat)\b|宠物|养了?(?:什么|啥|几只)"),
    ("owns", r"\bwhat (?:car|bike|phone|camera)\b|\bwhat (?:do|does) " + _WHO +
             r" drive\b|什么(?:车|手机|相机|电脑)|开的(?:什么|啥)"),
)


def attribute_asked(question: str) -> str | None:
    """The fact attribute a question asks for, or None."""
    return next((a for a, p in _asked() if p.search(question)), None)


@functools.cache
def _asked() -> list[tuple[str, re.Pattern[str]]]:
    """_ASKED_SOURCES compiled when a question is first read for the fact it asks."""
    return [(a, re.compile(p, re.IGNORECASE)) for a, p in _ASKED_SOURCES]

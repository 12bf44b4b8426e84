"""People's names in text: which known names a query or a statement mentions.

>>> sorted(named_people("What did Caroline research?", ["Caroline", "Melanie"]))
['Caroline']
>>> strip_names("What did Caroline's sister say?", ["Caroline"])
'What did sister say?'
>>> sorted(named_people("小明都去过哪些地方？", ["小明", "Aki"])), strip_names("小明都去过哪些地方？", ["小明"])
(['小明'], '都去过哪些地方？')
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence

from chalicelib.domain.lazyre import compiled
from chalicelib.domain.textproc import is_cjk

_LATIN = "[A-Za-z0-9\u00c0-\u024f]"  # a name glued to these is part of a longer word

# Role words and the placeholders chat tools put where a name would be: a message without a
# speaker is stored with its role as speaker (models.default_speaker), SillyTavern writes
# {{user}} / {{char}} / <USER> / <BOT>, exports say "User", "AI", "用户", "助手". They are
# kept as the speaker (evidence stays as given) but never are a person or an entity: not a
# Person record, not a participant, not a name recall lifts. Generic nouns for "someone"
# likewise. Compared case-folded, with braces, brackets and a trailing number dropped
# ("{{user}}", "<BOT>", "User 2", "assistant_1", "用户1").
ROLE_WORDS = frozenset({
    "user", "assistant", "system", "developer", "tool", "function", "human", "ai", "bot",
    "chatbot", "model", "llm", "char", "character", "narrator", "persona", "npc", "player",
    "me", "you", "i", "we", "speaker", "unknown", "anonymous", "anon", "nobody", "none",
    "null", "n/a",
    "用户", "使用者", "助手", "助理", "系统", "机器人", "模型", "人工智能", "角色", "旁白",
    "玩家", "我", "你", "您", "匿名", "未知", "ai助手", "智能助手",
})
GENERIC_NOUNS = frozenset({
    "someone", "somebody", "anyone", "anybody", "everyone", "everybody", "people", "person",
    "friend", "friends", "guest", "stranger", "they", "them", "he", "she", "him", "her",
    "某人", "有人", "别人", "大家", "朋友", "对方", "他", "她", "他们", "她们", "我们", "你们",
})
GENERIC = ROLE_WORDS | GENERIC_NOUNS  # the old name: never a person
_WRAPPED = re.compile(r"^[{<\[(（【「]+|[}>\])）】」]+$")
_NUMBERED = re.compile(r"^(.*?)[\s_#-]*\d{1,3}$")


def _bare(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    text = _WRAPPED.sub("", _WRAPPED.sub("", text)).strip(" \t\"'“”‘’.:：,，")
    return re.sub(r"\s+", " ", text)


def is_placeholder(name: str | None) -> bool:
    """Whether `name` is a role word, a placeholder or a generic noun rather than someone's
    name ("user", "Assistant", "{{char}}", "<USER>", "AI", "用户", "助手", "User 2",
    "someone"); an empty name is one too.

    >>> [n for n in ["user", "{{char}}", "AI", "用户", "User 2", "Mel", "小明", "Aiden"]
    ...  if is_placeholder(n)]
    ['user', '{{char}}', 'AI', '用户', 'User 2']
    """
    if not name or not name.strip():
        return True
    bare = _bare(name)
    if bare in GENERIC:
        return True
    numbered = _NUMBERED.match(bare)
    return bool(numbered and numbered.group(1) in ROLE_WORDS)


def real_names(names: Iterable[str]) -> list[str]:
    """The names that are people's names (placeholders dropped), in order, each once."""
    return [n for n in dict.fromkeys(names) if not is_placeholder(n)]


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


# "I", "my", 我, 我们 in a query to a memory of one's own chats mean the user who asks.
_SELF = re.compile(r"我|\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b"
                   r"|\bI['’]")


def speaks_of_self(query: str) -> bool:
    """Whether the query speaks of the one asking ("what did I buy", 我上周去哪了)."""
    return _SELF.search(query) is not None


# Capitalised words that name no one: how a sentence opens, the calendar, the pronoun I.
_NOT_PERSON = frozenset({
    "I", "I'm", "I've", "I'd", "I'll", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
    "Saturday", "Sunday", "January", "February", "March", "April", "May", "June", "July",
    "August", "September", "October", "November", "December", "Christmas", "Easter",
    "Thanksgiving", "Halloween", "New", "Year", "Eve", "Day", "Mr", "Mrs", "Ms", "Dr", "Mom",
    "Mum", "Dad", "God", "OK", "TV"})
_CAPITALISED = re.compile(r"(?<![\w'’])((?-i:[A-Z])[a-zA-Z]{2,})(?:'s|’s)?(?![\w])")
_OPENS = re.compile(r"(?:^|[.!?]\s+|[\"“(]\s*)$")


def name_like_words(query: str) -> list[list[str]]:
    """The names of a Latin-script question, each as its capitalised words, where a name
    stands: not opening a sentence, not the calendar ("What does John like about Lebron
    James?" → [["John"], ["Lebron", "James"]]). Chinese writes no capitals: nothing there."""
    out: list[list[str]] = []
    end = -1
    for m in _CAPITALISED.finditer(query):
        word = m.group(1)
        if word in _NOT_PERSON or _OPENS.search(query[:m.start()]):
            end = -1
            continue
        if out and re.fullmatch(r"\s+", query[end:m.start()] or "x"):
            out[-1].append(word)  # the next word of the same name
        else:
            out.append([word])
        end = m.end()
    return [list(n) for n in dict.fromkeys(tuple(n) for n in out)]


def near_known(word: str, known: Iterable[str]) -> bool:
    """A name's word is one the space knows, written a little differently: one letter off
    ("Andew", "Andrew") or the same stem ("Himalayan", "Himalayas")."""
    w = word.casefold()
    for name in known:
        for part in re.findall(r"[^\W\d_]+", name.casefold()):
            if part == w or (len(w) >= 6 and len(part) >= 6 and part[:6] == w[:6]):
                return True
            if abs(len(part) - len(w)) <= 1 and len(w) >= 4 and _one_edit(part, w):
                return True
    return False


def _one_edit(a: str, b: str) -> bool:
    """At most one letter inserted, deleted or changed (hand-written: four lines, and no
    library's edit distance is worth a dependency for a bound of one)."""
    if len(a) < len(b):
        a, b = b, a
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(b))
    return a[i + 1:] == b[i + 1:] if len(a) == len(b) else a[i + 1:] == b[i:]


# One's own name, told: 我叫阿梅, 我的名字是阿梅, 可以叫我阿梅, 叫我阿梅就好, "My name is
# Amy", "call me Amy", "I go by Amy". 我是… and "I'm …" say a job or a mood as often as a
# name: not read. 叫 also orders and calls (我叫了外卖, 我叫车, 我叫他来, 妈妈叫我回家): the
# name ends at a pause, none of those words opens it, and a bare 叫我 counts only before
# 就好 / 吧 / 好了.
_ZH_NAME = r"(?P<name>(?:(?![了着过吗呢的])[\u4e00-\u9fffA-Za-z·]){1,4}?)"
_ZH_NOT_OPENING = r"(?![了过着个辆份车外什啥谁他她它你您人醒住上来去回声的一不])"
_ZH_PAUSE = r"(?=[，,。.！!？?～~…\s]|$)"


@functools.cache
def _own_name() -> list[re.Pattern[str]]:
    """Compiled on first use: only extraction reads a told name."""
    return [
        re.compile(rf"(?<![他她它你])我(?:的)?(?:(?:名字|大名)(?:叫做|叫|是)|叫做|叫)"
                   rf"{_ZH_NOT_OPENING}{_ZH_NAME}{_ZH_PAUSE}"),
        re.compile(rf"(?:可以|就)叫我{_ZH_NOT_OPENING}{_ZH_NAME}(?:{_ZH_PAUSE}|就[好行]|吧|好了)"),
        re.compile(rf"叫我{_ZH_NOT_OPENING}{_ZH_NAME}(?=就[好行]|吧|好了)"),
        re.compile(r"(?<!\bnot\s)(?<!\bdon't\s)(?<!\bnever\s)"
                   r"\b(?:my name(?:'s|’s|\s+is)|call me|I(?:'m|\s+am)\s+called|I\s+go\s+by)\s+"
                   r"(?P<name>(?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*)?)", re.IGNORECASE),
    ]


def own_name(text: str) -> str | None:
    """The name the speaker tells as their own, or None.

    >>> own_name("我叫阿梅，刚搬到成都。"), own_name("Hi! My name is Amy Chen."), own_name("我叫了外卖")
    ('阿梅', 'Amy Chen', None)
    """
    for pattern in _own_name():
        for m in pattern.finditer(text):
            name = m.group("name").strip()
            if name and not is_placeholder(name) and name not in _NOT_PERSON:
                return name
    return None


_ZH_OWN_CLAUSE = compiled(rf"(?<![他她它你])我(?:的)?(?:(?:名字|大名)(?:叫做|叫|是)|叫做|叫)"
                          rf"{_ZH_NOT_OPENING}{_ZH_NAME}[，,]\s*(?=\S)")
_EN_OWN_CLAUSE = compiled(
    r"\b(?:my name(?:'s|’s|\s+is)|I(?:'m|\s+am)\s+called|I\s+go\s+by)\s+"
    r"(?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*)?(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?=\S)",
    re.IGNORECASE)


def without_own_name(text: str) -> str:
    """The text without the clause that tells one's own name, when it says more: retold in
    the third person, "我叫阿梅，刚搬到成都" would be "阿梅叫阿梅，…".

    >>> without_own_name("我叫阿梅，刚搬到成都。"), without_own_name("Hi, my name is Amy and I moved to Leeds.")
    ('我刚搬到成都。', 'Hi, I moved to Leeds.')
    """
    text = _ZH_OWN_CLAUSE().sub(lambda m: "" if text[m.end():].startswith("我") else "我",
                                text, count=1)
    return _EN_OWN_CLAUSE().sub("", text, count=1)

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
import unicodedata
from collections.abc import Iterable, Sequence

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

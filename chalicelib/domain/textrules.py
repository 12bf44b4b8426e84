"""Language rules for the offline extractor: sentence splitting, small talk, pronouns, importance.

Hand-written because they are product rules, not NLP: which sentences are worth a memory and
how a first-person sentence is retold in the third person with the speaker named.
"""

from __future__ import annotations

import re
import unicodedata

from chalicelib.domain import english_forms
from chalicelib.domain.lazyre import compiled
from chalicelib.domain.textproc import is_cjk, query_terms, straight_quotes

_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?；;…])\s*|\n+|(?<=[.])\s+(?=[\"'“A-Z0-9])")

_EN_SMALL_TALK = compiled(
    r"^(hi|hey|hello|yo|good (morning|afternoon|evening|night)|bye|goodbye|see (you|ya)"
    r"|thanks?( you)?( so much| a lot)?|thx|ty|ok(ay)?|sure|yeah|yep|yes|no|nope|wow|cool|nice"
    r"|great|awesome|lol|haha+|hmm+|got it|sounds good|me too|same|absolutely|definitely"
    r"|totally|exactly|of course|you too|take care|no problem|np|welcome|you're welcome"
    r"|that's (great|awesome|cool|amazing|nice|so cool|wonderful|lovely)|congrats"
    r"|congratulations|good luck|agreed|right|true|oh|ah|aw+|omg)"
    r"[\s,!.~]*(\w+)?[\s,!.~]*$",
    re.IGNORECASE,
)
_ZH_SMALL_TALK = re.compile(
    r"^(你好|您好|嗨|哈喽|早上好|早安|早|午安|晚上好|晚安|谢谢|多谢|感谢|好的|好吧|好|嗯+|哦+|噢|啊+"
    r"|哈+|嘿嘿|收到|明白|了解|知道了|没问题|是的|对|对的|没错|拜拜|再见|回头见|不客气|没事|辛苦了"
    r"|太好了|真棒|厉害|加油|好呀|好啊|行|可以)(你|您|你们|大家|宝贝|亲)?"
    r"[\s，,。！!~～呀啊呢吧哦啦哈嘛喔]*$"
)
# Short exclamations that only react to what the other side said ("好可爱的名字！",
# "So cute!", "What a lovely name!") carry no new fact about anyone.
_ZH_REACTION = re.compile(
    r"^(好|真|太|超|很|多么?|这么|那么)?(可爱|棒|好看|漂亮|厉害|酷|帅|美|有趣|好玩|温暖|暖心|贴心|感人"
    r"|有意思|开心|羡慕|不错)(的\w{0,4})?(了|啊|呀|哦|呢)?[\s，,。！!~～]*$"
)
_EN_REACTION = re.compile(
    r"^(so|how|what an?|such an?|that'?s|that is|it'?s|it is|sounds)?\s*(so |really |very )?"
    r"(cute|sweet|lovely|adorable|amazing|awesome|wonderful|beautiful|great|cool|fun|nice"
    r"|exciting|fantastic|impressive|incredible|inspiring)(\s+\w+)?[\s,!.~]*$",
    re.IGNORECASE,
)
_QUESTION_END = re.compile(r"[?？]\s*$|[吗呢么]\s*[。.]?$")

# Chat text writes the apostrophe straight or curly (I’ve): both, or "I’ve" became
# "Caroline’ve". A verb right after "I" takes the third person's -s ("I want" → "Mel wants").
_APOS = "['’]"
_EN_VERBS = ("want|love|like|think|feel|need|hope|know|get|make|see|remember|plan|mean|guess"
             "|agree|find|keep|take|use|work|live|play|paint|read|write|run|say|start|enjoy"
             "|believe|love|prefer|volunteer|hate|learn|dream|care|struggle|look|seem|wonder"
             "|appreciate|admire|cherish|treasure|support|create|collect|spend|visit|bake|cook")
_EN_VERBS_ES = {"go": "goes", "do": "does", "miss": "misses", "wish": "wishes",
                "try": "tries", "watch": "watches", "teach": "teaches", "relax": "relaxes"}
_EN_PRONOUNS = [
    (re.compile(rf"\bI{_APOS}m\b|\bI am\b"), "{me} is"),
    (re.compile(rf"\bI{_APOS}ve\b|\bI have\b"), "{me} has"),
    (re.compile(rf"\bI{_APOS}ll\b"), "{me} will"),
    (re.compile(rf"\bI{_APOS}d\b"), "{me} would"),
    (re.compile(r"\bI was\b"), "{me} was"),
    (re.compile(rf"\bI (?:(?:really|also|just|still|always|never|often|usually) )?(?:{_EN_VERBS})\b"),
     None),  # third person -s: see _third_person_verb
    (re.compile(r"\bI (?:(?:really|also|just|still|always|never|often|usually) )?(?:"
                + "|".join(_EN_VERBS_ES) + r")\b"), None),
    # any other verb in its present form ("I rent a bunk", "I ride to Elin on Sunday"):
    # `_present_verb` tells it from a modal, a past tense or an adverb
    (re.compile(r"\bI (?:(?:really|also|just|still|always|never|often|usually) )?[a-z]+\b"),
     None),
    (re.compile(r"\bI\b"), "{me}"),
    (re.compile(r"\b[Mm]yself\b"), "{me}"),
    (re.compile(r"\b[Mm]y\b|\b[Mm]ine\b"), "{me}'s"),
    (re.compile(r"\b[Mm]e\b"), "{me}"),
]
_EN_SECOND = [
    (re.compile(r"\b[Yy]our\b|\b[Yy]ours\b"), "{you}'s"),
    (re.compile(rf"\b[Yy]ou{_APOS}re\b|\b[Yy]ou are\b"), "{you} is"),
    (re.compile(rf"\b[Yy]ou{_APOS}ve\b|\b[Yy]ou have\b"), "{you} has"),
    (re.compile(rf"\b[Yy]ou{_APOS}ll\b"), "{you} will"),
    (re.compile(rf"\b[Yy]ou{_APOS}d\b"), "{you} would"),
    (re.compile(r"\b[Yy]ou were\b"), "{you} was"),
    (re.compile(r"\b[Yy]ourself\b"), "{you}"),
    (re.compile(r"\b[Yy]ou\b"), "{you}"),
]

LIFE_WORDS = re.compile(
    r"adopt|born|birth|married|marry|wedding|divorc|died|passed away|funeral|graduat|new job"
    r"|hired|fired|promot|moved|pregnan|engaged|accident|hospital|surgery|diagnos|bought|birthday"
    r"|anniversary|broke up|started|quit|won|lost|injur|sick|vet|check-?up|trip|travel|vacation"
    r"|养|生日|结婚|离婚|去世|毕业|入职|辞职|搬家|怀孕|订婚|医院|手术|体检|确诊|买了|纪念日|分手|表白"
    r"|开始|旅行|旅游|出差|生病|受伤|比赛|考试|面试|领养|收养",
    re.IGNORECASE,
)
PLAN_WORDS = re.compile(
    r"\b(decided?|plan(ning|ned)?|promise[ds]?|going to|gonna|will|agreed|intend|schedul)"
    r"|决定|打算|计划|约好|约了|答应|承诺|准备|要去|将要|会去|想去",
    re.IGNORECASE,
)


# A turn out of character in a role-play ("（ooc：下周三我要出差去深圳）", "(ooc: brb,
# doorbell)", "OOC: next session friday?"): the player speaks of their own life. A chat that
# has one is played in character otherwise (chalicelib.usecases.extract.offline.
# plays_in_character).
OUT_OF_CHARACTER = re.compile(r"^\s*(?:[(（\[【]\s*)?ooc\s*[:：)）\]】]", re.IGNORECASE)
_SAID_BY = re.compile(r"^[^:：\n(（]{1,40}[:：]\s*")  # a message card's "Jess: "
_OPENS, _CLOSES = "(（[【", ")）]】"


def wholly_out_of_character(text: str) -> bool:
    """The text is an aside out of character and nothing else: "(ooc: brb, doorbell)",
    "Jess: (ooc: next long session thursday?)", "OOC: next session friday?" — not a turn that
    opens with one and goes on in character ("（ooc：好久不见！）*半月后，云京城南*"). An aside
    whose bracket never closes (a card cut short) is all aside."""
    text = _SAID_BY.sub("", text, count=1) if not OUT_OF_CHARACTER.match(text) else text
    if not OUT_OF_CHARACTER.match(text):
        return False
    start = len(text) - len(text.lstrip())
    if text[start] not in _OPENS:
        return True  # "OOC: …" runs to the end of the turn
    depth = 0
    for i, ch in enumerate(text[start:], start):
        depth += (ch in _OPENS) - (ch in _CLOSES)  # dates the summary adds nest: "(2026-12-05)"
        if depth == 0:
            return not any(c.isalnum() for c in text[i + 1:])
    return True


# A turn that takes leave ("deal. 去 pack 了 bye", "都12点了 明天还要早班 睡了", "(ooc: brb,
# doorbell)"): what else it says is mostly the reason for going (chalicelib.usecases.extract.
# offline: such a turn makes an event only when it tells a life event)
LEAVING = re.compile(
    # English: a goodbye that ends the turn, a name or a word after it at most ("deal. 去 pack 了
    # bye", "lol night juniper", "(ooc: brb, doorbell)"); "we booked it for three nights." and
    # "had a good night out" take no leave
    r"(?:\b(?:bye|goodbye|good ?night|nite|gtg|g2g|brb|ttyl|gotta (?:go|run)|signing off"
    r"|logging off|talk (?:to you )?(?:later|soon|tomorrow)|see (?:you|ya)(?: tomorrow| later)?)"
    r"|(?:^|(?<=[.!?,~] )|(?<=lol )|(?<=[\u4e00-\u9fff] )|(?<=[\u4e00-\u9fff]))night)"
    r"\b(?=\W*(?:[A-Za-z]+)?\W*$)"
    r"|晚安|拜拜|再见|先下了|不说了|先到这里|就到这儿|就写到这里|先撤了|回聊|下次聊"
    r"|(?:先|去|要|该)?睡了(?=[\s，。！!~～]*(?:晚安)?[\s，。！!~～]*$)",
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if s and s.strip()]


def content_size(sentence: str) -> int:
    """Content-bearing tokens: stop words and function bigrams don't count."""
    return len(query_terms(sentence))


def is_small_talk(sentence: str) -> bool:
    s = straight_quotes(sentence.strip())  # "that’s great" as "that's great"
    if any(p.match(s) for p in (_EN_SMALL_TALK(), _ZH_SMALL_TALK, _ZH_REACTION, _EN_REACTION)):
        return True
    return content_size(s) < 2


def is_question(sentence: str) -> bool:
    return bool(_QUESTION_END.search(sentence.strip()))


def is_meaningful(sentence: str) -> bool:
    """A statement worth a memory: not small talk, and not a question with little content."""
    if is_small_talk(sentence):
        return False
    if is_question(sentence):
        return content_size(sentence) >= (8 if is_cjk(sentence) else 4)
    return True


def third_person(sentence: str, me: str, you: str | None, with_you: bool = True) -> str:
    """Retell a sentence with the speaker named: "I adopted a cat" → "Mel adopted a cat".
    `with_you`: "we" (我们, 咱们) is the speaker and `you`; else the speaker and others.
    What somebody said in their own words is theirs (`said_as_words`): kept as written."""
    out, at = [], 0
    for start, end, marked in said_as_words(sentence):
        out.append(_retold(sentence[at:start], me, you, with_you))
        words = sentence[start:end]
        out.append(words if marked else _marked(words))
        at = end
    out.append(_retold(sentence[at:], me, you, with_you))
    return "".join(out)


# Words in quotation marks, and a saying verb's words that hold both the first and the
# second person with no marks ("他紧张的结巴了 说了三遍我喜欢你", "he said I love you"): a
# direct quote, whose 我 and 你 are the quoted speaker and whom they spoke to, not the teller
# and the companion. Reported speech keeps the teller's view and only one person ("他说我深蹲
# 姿势不对", "he said you were right"): that is retold. 听说 / 据说 / 小说 / 传说 report no words;
# 问 may name whom it asks first ("他问我…").
_MARKED = re.compile(r"“[^“”]*”|「[^「」]*」|『[^『』]*』|\"[^\"]*\"")
_ZH_SAYING = re.compile(r"(?<![听据小传])(?:说(?![明服法话])|问(?:我|你|他|她)?)"
                        r"(?:了?[一二两三四五六七八九十几\d]+(?:遍|次|声))?了?[：:，,]?\s*")
# what is said runs to the clause's end, at most a chat line's length (a pasted page of
# 说说说… would otherwise be read again from every 说)
_ZH_WORDS = re.compile(r"[\u4e00-\u9fff]{1,80}")
_EN_SAYING = re.compile(r"\b(?:said|says|told (?:me|him|her|them)|asked(?: me| him| her)?|goes|went"
                        r"|was like|kept saying)\b[,:]?\s+", re.IGNORECASE)
_EN_WORDS = re.compile(r"[^.!?;\"“”]{1,300}")
_ZH_BOTH = (re.compile("我"), re.compile("你|您"))
_EN_BOTH = (re.compile(r"\b(?:I|me|my)\b"), re.compile(r"\b(?:you|your)\b", re.IGNORECASE))


def said_as_words(sentence: str) -> list[tuple[int, int, bool]]:
    """(start, end, has its marks) of the sentence's quoted words, in order."""
    spans = [(m.start(), m.end(), True) for m in _MARKED.finditer(sentence)]
    zh = is_cjk(sentence)
    saying, words, (first, second) = ((_ZH_SAYING, _ZH_WORDS, _ZH_BOTH) if zh
                                      else (_EN_SAYING, _EN_WORDS, _EN_BOTH))
    for verb in saying.finditer(sentence):
        said = words.match(sentence, verb.end())
        if said and first.search(said[0]) and second.search(said[0]) and not any(
                a < said.end() and said.start() < b for a, b, _ in spans):
            spans.append((said.start(), said.start() + len(said[0].rstrip()), False))
    return sorted(spans)


def _marked(words: str) -> str:
    return f"「{words}」" if is_cjk(words) else f'"{words}"'


def _retold(sentence: str, me: str, you: str | None, with_you: bool) -> str:
    if not sentence:
        return sentence
    if is_cjk(sentence):
        us = f"{me}和{you}" if you and with_you else f"{me}他们"
        # "你说我是不是很傻？" asks the one spoken to ("do you think …"), it reports nothing
        # they said: retold as asking them, not as "雪团说苏禾是不是很傻"
        out = _asking_you(you).sub(lambda m: f"{m[1]}\x01问\x02", sentence) if you else sentence
        out = out.replace("我们", us).replace("咱们", us)
        if you:
            out = out.replace("你们", f"{you}他们").replace("你", you).replace("您", you)
        out = out.replace("我", me).replace("\x01", me).replace("\x02", you or "")
        # a code-switched turn's English words are retold too ("跟 my boss Richard 说了",
        # "I hate 上海的冬天")
        return _retold_english(out, me, you) if _EN_PERSON.search(out) else out
    return _retold_english(sentence, me, you)


_ASKS = r"(?=[^，。！？!?]*(?:[？?]|吗|呢|是不是|要不要|怎么|为什么|哪|多少|几|啥|什么))"


def _asking_you(you: str) -> re.Pattern[str]:
    """你说 opening a clause that asks, called by name or not ("*给雪团梳毛* 雪团，你说…？")."""
    return re.compile(rf"(^|[\s，,。！？!?…])(?:{re.escape(you)}\s*[，,]?\s*)?你说{_ASKS}")


_EN_PERSON = re.compile(r"\b(?:I|[Mm]y|[Mm]e|[Mm]yself|[Mm]ine|[Yy]ou\w*)\b")


def _retold_english(sentence: str, me: str, you: str | None) -> str:
    out = sentence
    if you:
        for pattern, repl in _EN_SECOND:
            out = pattern.sub(repl.format(you=you), out)
    for pattern, repl in _EN_PRONOUNS:
        if repl is None:
            out = pattern.sub(lambda m: _third_person_verb(
                m.group(0), me, inverted=_AUXILIARY_BEFORE.search(m.string, 0, m.start())
                is not None), out)
        else:
            out = pattern.sub(repl.format(me=me), out)
    return out


# Words after "I" that are no verb in its present form: modals and auxiliaries, and the
# verbs whose past tense keeps the present's form ("I quit the Guild" tells what was done)
_NOT_PRESENT = frozenset([
    "can", "cannot", "could", "will", "would", "shall", "should", "may", "might", "must",
    "did", "does", "had", "have", "has", "was", "were", "am", "is", "are", "been", "being",
    "ought", "used", "dare", "too", "myself", "alone", "personally", "even", "only", "ever",
    "quit", "put", "cut", "hit", "set", "let", "hurt", "shut", "cost", "spread", "read", "bet",
    "burst", "cast", "split", "rid", "fit", "upset", "thought", "got"])
# verbs that end as an adverb does, and a present that is also an old past ("rent": rend)
_LY_VERBS = frozenset(["fly", "rely", "apply", "reply", "supply", "imply", "comply", "ally"])
_PRESENT_TOO = frozenset(["rent"])


def _present_verb(word: str) -> bool:
    """A word after "I" that reads as a verb in its present form: not a modal, an auxiliary
    or an adverb (-ly), not a past tense (english_forms.past_forms, -ed) or an -ing form."""
    if word in _LY_VERBS or word in _PRESENT_TOO:
        return True
    if len(word) < 2:
        return False  # "I a …": a typo, no verb
    past = word.endswith("ed") and not word.endswith("eed")  # need, feed, proceed
    return not (past or word in _NOT_PRESENT or word.endswith(("ing", "ly"))
                or word in english_forms.past_forms())


# "did I tell you", "can I come", "do I look ok": after an auxiliary the verb keeps its form
_AUXILIARY_BEFORE = re.compile(r"\b(?:do|does|did|can|could|will|would|shall|should|may|might|"
                               r"must|don't|didn't|can't|won't)\s+$", re.IGNORECASE)


def _third_person_verb(phrase: str, me: str, inverted: bool = False) -> str:
    """"I really want" → "Mel really wants"; "I probably" stays "Mel probably", and so does
    the verb after an auxiliary (`inverted`: "did I tell you" → "did Mel tell you")."""
    words = phrase.split()
    verb = words[-1]
    if inverted or not _present_verb(verb):
        return " ".join([me, *words[1:]])
    if verb in _EN_VERBS_ES:
        words[-1] = _EN_VERBS_ES[verb]
    elif verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        words[-1] = verb + "es"
    elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
        words[-1] = verb[:-1] + "ies"
    else:
        words[-1] = verb + "s"
    return " ".join([me, *words[1:]])


# What a date leaves hanging when it is cut from the end of a title: "last shift at Fig &
# Fern was friday" is not titled "… was", "off the strap since thursday" not "… since", "last
# day 是 Dec 18" not "last day 是", "定在11月1号" not "定在". Function words only: what they
# led to is the date, which the event keeps as `when`.
_HANGING = compiled(r"(?:\s+(?:was|were|is|are|be|been|on|at|in|since|until|till|by|from|to|"
                    r"for|of|the|a|an|this|that|next|last|and|or|so))+\s*$"
                    r"|\s*(?:是|[定约订改]在|改到|改成|于)\s*$", re.IGNORECASE)


def trim_hanging(title: str) -> str:
    """`title` without the function words left hanging at its end where a date was cut."""
    return _HANGING().sub("", title).strip()


def make_title(summary: str) -> str:
    """The first clause that says something, kept short: a heading, not a sentence. An opening
    clause of one or two words ("Lately", "Last Friday", "Actually") joins the next; a quoted
    statement (Sam: "…") keeps its quote marks."""
    quoted = re.match(r'^([^:"]{1,40}): "(.+?)"?$', summary, re.DOTALL)
    if quoted:
        return f'{quoted.group(1)}: "{make_title(quoted.group(2))}"'
    if is_cjk(summary):
        parts = [p.strip() for p in re.split(r"[，,。！？!?；;：:]", summary) if p.strip()]
        clause = _first_clause(parts, lambda p: len(p) >= 4, "，")
        return clause if len(clause) <= 24 else clause[:23] + "…"
    parts = [p.strip() for p in re.split(r"[,;:.!?](?:\s|$)| - | — ", summary) if p.strip()]
    clause = _first_clause(parts, lambda p: len(p.split()) >= 3, ", ")
    words = clause.split()
    return " ".join(words) if len(words) <= 10 else " ".join(words[:9]) + "…"


def _first_clause(parts: list[str], enough, joiner: str) -> str:
    if not parts:
        return ""
    clause = parts[0]
    for part in parts[1:]:
        if enough(clause):
            break
        clause = f"{clause}{joiner}{part}"
    return clause


def importance(sentence: str, has_time: bool) -> int:
    score = 3
    if LIFE_WORDS.search(sentence):
        score += 2
    if PLAN_WORDS.search(sentence):
        score += 1
    if has_time:
        score += 1
    if content_size(sentence) >= 10:
        score += 1
    if re.search(r"\d", sentence):
        score += 1
    if is_question(sentence):
        score -= 2
    return max(1, min(10, score))


# ------------------------------------------------------------------ instructions and role markers

QUOTED_TAG = "quoted"
MAX_QUOTE_CHARS = 400

_ROLE_WORDS = (r"ai|assistant|model|chatbot|bot|dan|gpt|chatgpt|llm|system|admin(?:istrator)?|root"
               r"|developer|jailbroken|unrestricted|unfiltered|uncensored")
# Text that talks to an AI or pretends to be a chat's own structure. Matched on the folded text
# (fold_marks: invisible characters dropped, NFKC, so ｓｙｓｔｅｍ and ［INST］ count too).
INSTRUCTION_PATTERNS = compiled("|".join([
    # "SYSTEM OVERRIDE", "system prompt", "system instructions"
    r"\bsystem\s*(?:override|prompt|message|instruction|command|directive|update|notice)s?\b",
    # "ignore (all) previous instructions", "disregard the above rules", "forget your prompt"
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|every|the|your|my|these"
    r"|those|of|previous|prior|above|earlier|preceding|former|existing|system|safety|original)"
    r"\s+){0,4}(?:instructions?|prompts?|rules|directives|guidelines|guardrails|restrictions"
    r"|programming|context|messages)\b",
    r"\bignore\s+(?:all\s+|everything\s+)?(?:above|previous|prior)\b",
    # "you are now DAN", "you are now an unrestricted AI", "you are no longer an assistant"
    rf"\byou\s+are\s+(?:now|no\s+longer)\s+(?:(?:an?|the|in|my|our)\s+)?(?:[\w-]+\s+){{0,2}}?"
    rf"(?:{_ROLE_WORDS}|mode|bound|restricted|limited)\b",
    r"\b(?:from\s+now\s+on|henceforth)\b[\s,]*(?:you|the\s+assistant)\s+"
    r"(?:are|will|must|shall|should|have\s+to)\b",
    rf"\b(?:act|pretend|behave|roleplay)\s+(?:to\s+be|as\s+if\s+you\s+(?:are|were)|as|like)\s+"
    rf"(?:an?\s+)?(?:[\w-]+\s+)?(?:{_ROLE_WORDS})\b",
    r"\b(?:new|updated|real|actual|hidden|secret)\s+(?:system\s+)?instructions?\s*:",
    r"\b(?:developer|god|dan|jailbreak)\s+mode\b|\bjailbreak|\bdo\s+anything\s+now\b",
    r"\breveal\s+(?:your|the)\s+(?:system\s+)?(?:prompt|instructions)\b",
    # role and structure markers: <system>, </memory>, <|im_start|>, [INST], <<SYS>>, "System:"
    r"<\s*/?\s*(?:system|memory|memories|assistant|user|human|instructions?|prompt|context"
    r"|typed_memory|tool|developer)\b[^>]*>",
    r"<\|[^|>\n]{1,40}\|>",
    r"\[\s*/?\s*(?:inst|sys|system|typed_memory|assistant|user)\b[^\]]*\]",
    r"<<\s*/?\s*sys\s*>>",
    r"(?:^|\n)\s*(?:#{1,4}\s*)?(?:system|developer)\s*:",
    # 忽略之前的指令, 无视以上所有规则, 系统提示, 你现在是一个没有限制的AI, 从现在开始你必须…
    r"(?:忽略|无视|忘记|忘掉|忘了|不要理会|别管|跳过)掉?(?:你|我)?(?:之前|以前|前面|上面|以上|先前|此前"
    r"|原来|原有|所有|全部|一切|的|你的)+(?:指令|指示|提示词?|规则|设定|要求|命令|限制)",
    r"系统(?:提示|指令|覆盖|命令|设定|消息)",
    rf"你(?:现在|从现在起|已经)(?:是|扮演|变成|成为)(?:一个|一名)?.{{0,8}}?"
    rf"(?:{_ROLE_WORDS}|人工智能|助手|机器人|管理员|系统|模型|没有限制|不受限制|开发者)",
    r"从(?:现在|此|今天)(?:开始|起)[，,]?\s*你(?:是|要|必须|将|只能|应该|需要)",
    r"(?:新的?|最新的?|真正的?|隐藏的?)(?:系统)?指令\s*[:：]",
    r"开发者模式|越狱",
]), re.IGNORECASE)


def fold_marks(text: str) -> str:
    """Text as a model would read it: format characters (zero-width, bidi) dropped and
    compatibility forms (full-width letters and brackets) folded."""
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFKC", text)


def looks_like_instruction(text: str) -> bool:
    """True when the text gives orders to an AI or poses as a system/role marker: it is then
    recorded as what its speaker said, never as a fact."""
    return bool(INSTRUCTION_PATTERNS().search(fold_marks(text)))


def quote(text: str, limit: int = MAX_QUOTE_CHARS) -> str:
    """The words, on one line, cut at `limit` characters."""
    words = " ".join(text.split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


def reported_speech(speaker: str, text: str) -> tuple[str, str]:
    """(title, summary) reporting what the speaker said: 小明说：「…」 / Sam said: "…"."""
    said = quote(text)
    if is_cjk(said):
        short = said if len(said) <= 16 else said[:15] + "…"
        return f"{speaker}说「{short}」"[:200], f"{speaker}说：「{said}」"
    words = said.split()
    short = " ".join(words) if len(words) <= 8 else " ".join(words[:7]) + "…"
    return f'{speaker} said "{short}"'[:200], f'{speaker} said: "{said}"'


_REPORTING = re.compile(r"\s*(?:said|says|wrote|writes|told|asked|claimed|typed|posted|说|写道|表示|称|声称)")


def is_reported_speech(summary: str, speaker: str) -> bool:
    """The summary starts by naming the speaker as saying something, and quotes it."""
    return (summary.startswith(speaker) and bool(_REPORTING.match(summary[len(speaker):]))
            and any(mark in summary for mark in ('"', "“", "「", "『", "\'")))

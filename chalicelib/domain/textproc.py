"""Tokenization shared by every keyword index (SQLite FTS5 here, OpenSearch in AWS).

Written by hand because no library does exactly this mix: CJK text becomes overlapping
character bigrams (the same idea as Lucene's `cjk` analyzer, so a Chinese query never depends
on a word segmenter's dictionary), every other script becomes lower-cased, stemmed words.
Both indexes receive the *output* of `tokenize` — space-joined — so the keyword contract is
identical wherever it runs. An English word inflected irregularly ("sold", "bought", "went",
"children") is stemmed from its base form, which lemminflect's dictionary gives
(chalicelib.domain.english_forms; a stemmer cuts suffixes and cannot know that "sold" is
"sell"): a question asks "What did Jess sell?" of a memory that says "Jess sold Rusty".

>>> tokenize("奶糖昨天进行了体检")
['奶糖', '糖昨', '昨天', '天进', '进行', '行了', '了体', '体检']
>>> tokenize("Melanie painted a sunrise")
['melani', 'paint', 'a', 'sunris']
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from operator import add

import snowballstemmer

from chalicelib.domain import english_forms
from chalicelib.domain.lazyre import compiled

# Han, Hiragana/Katakana, Hangul: scripts written without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN_RE = compiled(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)?", re.UNICODE)
_CJK_RE = re.compile(rf"[{_CJK}]")

_EN_STOP = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now", "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would", "could", "ought", "i'm", "you're", "he's", "she's", "it's", "we're", "they're", "i've", "you've", "we've", "they've", "i'd", "you'd", "he'd", "she'd", "we'd", "they'd", "i'll", "you'll", "he'll", "she'll", "we'll", "they'll", "isn't", "aren't", "wasn't", "weren't", "hasn't", "haven't", "hadn't", "doesn't", "don't", "didn't", "won't", "wouldn't", "shan't", "shouldn't", "can't", "cannot", "couldn't", "mustn't", "let's", "that's", "who's", "what's", "here's", "there's", "when's", "where's", "why's", "how's", "yeah", "yes", "oh", "wow", "hey", "hi", "hello", "really", "just", "also", "so", "like", "got", "get", "gonna", "wanna", "lot", "lots", "thing", "things", "something", "anything", "remember", "tell", "told", "know", "think", "thanks", "thank", "please", "ok", "okay", "sure"]
)
# Characters that carry grammar, not content: a bigram made only of these is noise in a query.
_ZH_FUNCTION_CHARS = frozenset("的了吗呢吧啊呀哦嗯我你他她它们是在和也就都还这那有个么什怎样没不要会能说把被给对让")

# Particles, pronouns, question words and the copula 是: a query bigram that contains one
# straddles a word boundary ("们去", "边吗", "得我", "作是" in 工作是做啥的) or frames the
# question ("去哪", "干嘛", "吃啥", "哪些") far more often than it names anything. Question
# frames matter most: they match the other party's questions ("都去了哪些地方？") better than
# the answers the query is after.
_ZH_PARTICLES = frozenset("的了吗呢吧啊呀哦嗯我你他她它们么哪啥嘛谁是")
# …except in these everyday nouns and verbs, which hold a particle character but name a thing:
# without them "吉他课" searches only "课在", and "酒吧" nothing at all.
_ZH_PARTICLE_WORDS = frozenset(
    ["吉他", "酒吧", "网吧", "吧台", "贴吧", "了解", "目的", "的士", "他乡", "呢子", "吗啡", "哪吒"])
# Conversational frames that ask about memory without naming its content.
_ZH_QUERY_STOP = frozenset(
    ["还记", "记得", "记不", "忘了", "聊了", "聊过", "聊的", "说过", "说了", "什么", "怎么", "时候",
     "那天", "一下", "告诉", "知道", "是不", "不是", "有没", "没有", "发生", "之前", "以前", "那次",
     # the present and the start, as "now" and "currently" are English stop words
     "现在", "目前", "如今", "当初", "一开",
     # "what was it again": asks the memory to come back, names nothing (…是啥来着)
     "来着",
     # conjunctions join clauses and name nothing: 因为 alone made "我当初是因为啥戒的烟" a
     # match for "因为开心的时间总是过得快呀"
     "因为", "所以", "但是", "可是", "然后", "如果", "虽然", "而且", "或者", "不过"]
)
_stemmer = snowballstemmer.stemmer("english")
_stem_lock = threading.Lock()  # a snowball stemmer keeps state while it works: one at a time
# One pattern, two groups: group 1 is a CJK run, group 2 a word. Same alternation and order as
# _TOKEN_RE, so `findall` yields exactly its matches, already split by script.
_SPLIT_RE = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)?)", re.UNICODE)
# Word as matched → its token (lower-cased, curly apostrophe straightened, ASCII stemmed).
# Vocabulary is small next to text, so this turns almost every word into one dict lookup.
_WORDS: dict[str, str] = {}
_WORDS_MAX = 200_000


_CURLY = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})


def straight_quotes(text: str) -> str:
    """Apostrophes as typed on a phone (iOS writes ’ for ') read as the plain one: the rules
    spell I'm, don't, Nora's with ', and "I’m dating Sam" read nothing."""
    return text.translate(_CURLY)


def _stem(word: str) -> str:
    with _stem_lock:
        return _stemmer.stemWord(word)


def _lowered(word: str) -> str:
    return word.lower().replace("’", "'")


def base_form(low: str) -> str:
    """The base form of an irregularly inflected English word ("sold" → "sell", "went" → "go",
    "children" → "child"), else the word (chalicelib.domain.english_forms: lemminflect's
    dictionary, where it is sure)."""
    return english_forms.base_forms().get(low, low) if len(low) >= 3 and low.isalpha() else low


def _word_token(word: str) -> str:
    token = _WORDS.get(word)
    if token is None:
        low = _lowered(word)
        token = _stem(base_form(low)) if low.isascii() else low
        if len(_WORDS) >= _WORDS_MAX:
            _WORDS.clear()
        _WORDS[word] = token
    return token


def _cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return list(map(add, run[:-1], run[1:]))


def _content_bigrams(run: str) -> list[str]:
    """A query run's content bigrams. A stop word is a word: the bigrams across its edges
    straddle two words ("感知什么来着" → 知什, "那次去医院" → 次去, "现在住在哪" → 在住) and go
    with it, as those holding a particle do."""
    bigrams = _cjk_bigrams(run)
    stops = {i for i, b in enumerate(bigrams) if b in _ZH_QUERY_STOP}
    edges = {j for i in stops for j in (i - 1, i + 1)}
    return [b for i, b in enumerate(bigrams)
            if (i not in edges or b in _ZH_PARTICLE_WORDS) and _is_content_bigram(b)]


def _is_content_bigram(bigram: str) -> bool:
    if len(bigram) == 1:
        return bigram not in _ZH_FUNCTION_CHARS
    if bigram in _ZH_PARTICLE_WORDS:
        return True
    if all(ch in _ZH_FUNCTION_CHARS for ch in bigram) or bigram in _ZH_QUERY_STOP:
        return False
    return not any(ch in _ZH_PARTICLES for ch in bigram)


def tokenize(text: str) -> list[str]:
    """All tokens of `text`, in order: CJK bigrams and stemmed lower-case words."""
    tokens: list[str] = []
    append, extend, words = tokens.append, tokens.extend, _WORDS
    for run, word in _SPLIT_RE.findall(text):
        if run:
            if len(run) == 1:
                append(run)
            else:
                extend(map(add, run[:-1], run[1:]))
        else:
            token = words.get(word)
            append(token if token is not None else _word_token(word))
    return tokens


def query_terms(text: str) -> list[str]:
    """Distinct content-bearing tokens of a query: stop words and function bigrams dropped."""
    return list(_query_terms(text))


def search_terms(text: str) -> list[str]:
    """The terms a keyword index is searched with: the query's terms, and for a word read
    through its base form ("sold" → sell) also the stem of the word as written — a memory
    indexed before base forms were read holds only that."""
    terms = query_terms(text)
    for word in {w for _, w in _SPLIT_RE.findall(text) if w}:
        low = _lowered(word)
        if low.isascii() and low not in _EN_STOP and base_form(low) != low \
                and (written := _stem(low)) not in terms:
            terms.append(written)
    return terms


# A recall reads its query's terms in several places (intents, the gate, the time path, the
# keyword search); a 4,000-character query cost 20 ms each time. Read once, kept for the
# next callers; each gets its own list.
@lru_cache(maxsize=512)
def _query_terms(text: str) -> tuple[str, ...]:
    terms: list[str] = []
    seen: set[str] = set()
    for run, word in _SPLIT_RE.findall(text):
        if run:
            candidates = _content_bigrams(run)
        else:
            low = _lowered(word)
            if low in _EN_STOP or (len(low) < 2 and not low.isdigit()):
                continue
            candidates = [_word_token(word)]
        for token in candidates:
            if token not in seen:
                seen.add(token)
                terms.append(token)
    return tuple(terms)


def is_cjk(text: str, threshold: float = 0.2) -> bool:
    """True when a noticeable share of the letters are CJK: the text is 'Chinese' for output."""
    letters = sum(map(str.isalpha, text))
    if not letters:
        return False
    # One regex pass finds the CJK characters (the recall gate asks this of every card); of
    # them only letters count, as of the text ("・" is in the range but no letter).
    cjk = sum(map(str.isalpha, _CJK_RE.findall(text)))
    return cjk / letters >= threshold


def index_text(text: str) -> str:
    """The string handed to a keyword index: tokens joined by single spaces."""
    return " ".join(tokenize(text))

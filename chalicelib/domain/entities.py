"""Entities in event text, found offline: people, places, pets, works, organisations and
projects (docs/graph.md). Pure functions: text in, mentions out.

Every mention is a substring of the text it was found in (`verbatim`), so an entity can always
be shown where it came from. Rules, English and Chinese alike:

- known people (speakers, participants) and the event's location, when the text names them;
  role words, placeholders and generic nouns ("user", "Assistant", "{{char}}", "AI", "用户",
  "someone": names.is_placeholder) are never people nor entities;
- English: runs of two or more capitalised words ("Park Hyatt Kyoto"), a capitalised word after
  a travel word ("to Kyoto", "in Lisbon"), quoted titles ("“Spirited Away”"), pets by name
  ("a cat named Luna"), "Project X", "… University / Inc"; a word that opens a sentence is a
  name only on evidence (`opening_names`): it is a speaker, it is capitalised mid-sentence
  elsewhere, or it is the subject of "and I" or a verb ("Tom and I …", "Lisa said …");
- Chinese: 《书名》, names before a place suffix (大仓酒店, 西湖公园; a whole word, never
  one cut from a longer one: no 戏公司 from 游戏公司), well-known cities and
  countries, the place of 去X旅行, pets by name (取名叫奶糖), X项目, X公司/大学; a person
  who is the subject of 和我 or a verb ("小明和我…", "小明说…", "我和小明决定…").

>>> [(m.name, m.kind) for m in find_mentions("Mel and Sam flew to Kyoto and stayed at the "
...                                            "Park Hyatt Kyoto.", people=["Mel", "Sam"])]
[('Mel', 'person'), ('Sam', 'person'), ('Park Hyatt Kyoto', 'place'), ('Kyoto', 'place')]
>>> [(m.name, m.kind) for m in find_mentions("小明和小红订了京都的大仓酒店", people=["小明"])]
[('小明', 'person'), ('大仓酒店', 'place'), ('京都', 'place')]
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from chalicelib.domain.names import is_placeholder, mentioned_names
from chalicelib.domain.records import EntityKind
from chalicelib.domain.textproc import is_cjk

ID_PREFIX = "en_"
ID_RE = re.compile(r"^en_[0-9a-f]{12}$")
MAX_NAME_CHARS = 80
MIN_PREFIX_CHARS = 3  # "Mel" may stand for "Melanie"; "Me" or "Al" may not


@dataclass(frozen=True)
class Mention:
    name: str
    kind: EntityKind


# ------------------------------------------------------------------ names and ids


def normalise(name: str) -> str:
    """The form names are compared in: NFKC, case-folded, one space, no outer punctuation."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = re.sub(r"\s+", " ", text)
    return text.strip(" \"'“”‘’《》「」()（）.,;:!?，。；：！？")


def entity_id(name: str) -> str:
    """Deterministic: the same name gives the same id in every run (retries write the same)."""
    return ID_PREFIX + hashlib.sha256(normalise(name).encode("utf-8")).hexdigest()[:12]


def verbatim(name: str, texts: Iterable[str]) -> bool:
    """Whether the name occurs exactly as written in one of the texts."""
    return any(name in text for text in texts)


# ------------------------------------------------------------------ English rules

_CAP = r"[A-Z][\w'’&.-]*[\w]"
# "and" is not a joiner: "Mel and Sam" are two people, not one name
_JOINERS = r"(?:of|the|de|del|la|le|von|van)"
_MULTI = re.compile(rf"\b{_CAP}(?:\s+(?:{_JOINERS}\s+)?{_CAP})+")
# A capitalised word after a travel or place word is a place: "to Kyoto", "in Lisbon".
_PLACE_AFTER = re.compile(
    r"\b(?:in|at|from|visit(?:ed|ing)?|(?:trip|flight|flights|flew|fly|flying|went|go|going|"
    r"travel(?:l?ed)?|drove|moved|move|back)\s+to)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)"
    r"(?!['’]s)\b")
_QUOTED = re.compile(r"[“\"]([A-Z][^\"“”\n]{1,60}?)[”\"]")
_PET_EN = re.compile(r"\b(?:cat|dog|kitten|puppy|pet|parrot|rabbit|bunny|hamster|horse|turtle)"
                     r"\s+(?:named|called)\s+([A-Z][a-z]+)")
_PROJECT_EN = re.compile(r"\b(?:[Pp]roject)\s+([A-Z][\w-]+)")
_ORG_WORDS = frozenset({"inc", "ltd", "llc", "corp", "company", "university", "college",
                        "school", "bank", "institute", "foundation", "group", "studio",
                        "studios", "club", "society", "agency", "labs", "lab"})
_PLACE_WORDS = frozenset({"hotel", "hostel", "inn", "resort", "park", "street", "st", "road",
                          "avenue", "square", "city", "lake", "river", "mountain", "mount",
                          "beach", "island", "airport", "station", "museum", "temple",
                          "shrine", "castle", "bridge", "tower", "market", "cafe", "café",
                          "restaurant", "hospital", "center", "centre", "bay", "valley",
                          "garden", "gardens", "plaza", "hyatt", "hilton", "marriott",
                          "ryokan", "motel", "lodge", "guesthouse"})
# Capitalised words that start sentences or name times, not things.
_NOT_NAMES = frozenset({
    "i", "we", "he", "she", "they", "it", "you", "my", "our", "your", "his", "her", "their",
    "the", "a", "an", "this", "that", "these", "those", "there", "then", "and", "but", "so",
    "because", "after", "before", "when", "while", "if", "also", "just", "yes", "no", "oh",
    "ok", "okay", "hi", "hello", "thanks", "thank", "wow", "remember", "what", "who", "how",
    "why", "where", "which", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july",
    "august", "september", "october", "november", "december", "today", "tomorrow",
    "yesterday", "tonight", "christmas", "easter", "ai", "me", "us", "him", "them",
})


# Words that open chat sentences, capitalised by grammar and not by being names: "Hey Mel",
# "Glad Caroline …", "Whenever Caroline …" must not become entities. Greetings, feelings,
# discourse adverbs and auxiliaries; adjectives that open place names (Grand, Great, New) are
# left out on purpose. Words ending in -ing / -ly at the front are dropped as well
# ("Knowing Caroline", "Honestly Mel"), and so is any word with a pronoun contraction (I'm,
# How'd, Melanie've): names do not end in 'm / 've / 'd / 're / 'll.
_STARTERS = frozenset({
    "hey", "hiya", "yo", "bye", "goodbye", "glad", "lucky", "happy", "sorry", "congrats",
    "congratulations", "cheers", "woohoo", "yay", "aww", "aw", "haha", "lol", "omg", "ugh",
    "yeah", "yep", "yup", "nope", "sure", "right", "exactly", "totally", "definitely",
    "absolutely", "agreed", "true", "same", "wow", "whoa", "cool", "nice", "awesome",
    "amazing", "wonderful", "beautiful", "lovely", "sweet", "well", "anyway", "anyways", "btw",
    "now", "since", "for", "whenever", "wherever", "although", "though", "until", "unless",
    "as", "like", "do", "does", "did", "have", "has", "had", "was", "were", "is", "are", "am",
    "can", "could", "would", "should", "will", "wish", "hope", "love", "loved", "makes",
    "made", "sounds", "looks", "seems", "appreciate", "thankfully", "luckily", "sadly",
    "finally", "last", "next", "first", "every", "some", "any", "all", "both", "each", "most",
    "many", "much", "such", "even", "still", "yet", "plus", "maybe", "perhaps", "please",
    "let", "let's", "take", "keep", "stay", "check", "guess", "see", "look", "tell", "say",
    "said", "went", "got", "get", "going", "been", "being", "not", "never", "always", "only",
    "too", "very", "really", "good", "great", "best", "bad", "it's", "that's", "here's",
    "there's", "what's", "who's", "how's", "where's", "enjoy", "reminds", "fri", "sat", "sun", "mon", "tue",
    "tues", "wed", "thu", "thur", "thurs", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "mr", "mrs", "ms", "dr",
})
_CONTRACTED = re.compile(r"['’](?:m|ve|d|re|ll)$", re.IGNORECASE)


def _not_a_name_word(word: str, leading: bool) -> bool:
    low = word.casefold().strip(".")
    if low in _NOT_NAMES or _CONTRACTED.search(word):
        return True
    return leading and (low in _STARTERS or (len(low) > 4 and low.endswith(("ing", "ly"))))


def _trim_words(name: str) -> str:
    """Drop leading and trailing words that are not part of a name ("The Park Hyatt" →
    "Park Hyatt"; "Kyoto Yesterday" → "Kyoto"; "Hey Mel" → "Mel"; "Ed Sheeran's" →
    "Ed Sheeran")."""
    words = name.split()
    if words:
        words[-1] = re.sub(r"['’]s$", "", words[-1])
    while words and _not_a_name_word(words[0], leading=True):
        words.pop(0)
    if any(_CONTRACTED.search(w) for w in words):
        return ""  # "Now I'm", "Caroline've come": a sentence, not a name
    while words and (words[-1].casefold().strip(".") in _NOT_NAMES
                     or words[-1].casefold() in {"of", "the", "and", "&", "de", "la"}):
        words.pop()
    return " ".join(words)


def _english_kind(name: str, people: Sequence[str]) -> EntityKind:
    words = [w.casefold().strip(".") for w in name.split()]
    if any(w in _ORG_WORDS for w in words):
        return "organisation"
    if any(w in _PLACE_WORDS for w in words):
        return "place"
    if people and words and any(words[0] == p.split()[0].casefold() for p in people if p):
        return "person"
    return "thing"


def _around_a_person(name: str, people: Sequence[str]) -> bool:
    """A known person's name after other words ("Reminds Melanie", "Expression of Melanie"):
    words around a person, not a new name. The person's own name first ("Melanie Smith") is a
    name; the person alone is found by the speaker list."""
    words = [w.casefold() for w in name.split()]
    firsts = {p.split()[0].casefold() for p in people if p and p.split()}
    return any(w in firsts for w in words[1:]) and words[0] not in firsts


def english_mentions(text: str, people: Sequence[str] = (),
                     seen: Collection[str] = ()) -> list[Mention]:
    """`seen`: words capitalised mid-sentence in the other texts the linker reads with this
    one (the event's title, summary and evidence, the batch's other events), which make a
    sentence-opening word a name (`opening_names`)."""
    out: list[Mention] = []
    for m in _PET_EN.finditer(text):
        out.append(Mention(m.group(1), "pet"))
    for m in _PROJECT_EN.finditer(text):
        out.append(Mention(m.group(0), "project"))
    for m in _QUOTED.finditer(text):
        title = m.group(1).strip()
        if 1 <= len(title.split()) <= 8:
            out.append(Mention(title, "work"))
    for m in _MULTI.finditer(text):
        name = _trim_words(m.group(0))
        if len(name.split()) >= 2 and not _around_a_person(name, people):
            out.append(Mention(name, _english_kind(name, people)))
    for m in _PLACE_AFTER.finditer(text):
        name = _trim_words(m.group(1))
        if name and _english_kind(name, people) != "person":
            out.append(Mention(name, "place"))
    out += opening_names(text, people, seen)
    return out


# ------------------------------------------------------------------ names that open sentences

# In chat a sentence very often opens with a name ("Tom and I decided …", "Lisa said …"),
# and a word that opens a sentence is capitalised by grammar whether it is a name or not.
# Such a word is a name on evidence only: it is a known person (found by the speaker list
# already), it is capitalised mid-sentence elsewhere (in this text or `seen`), or it is the
# subject of "and I" / a verb. Never an ordinary opener (The, My, We, Yesterday, Thanks, So,
# Everyone, Dinner …: _NOT_NAMES, _STARTERS, _ORDINARY_OPENERS, -ing/-ly words).
_OPENING = re.compile(r"(?:^|(?<=[.!?…;:\n。！？；：]))[\"”’)\]]*\s*[\"“‘(\[]*"
                      r"([A-Z][a-z]+)(?![\w'’-])")
_MID_CAPITAL = re.compile(r"(?<=[\w,)] )([A-Z][a-z]+)(?![\w'’-])")
# Verbs whose subject is someone: "Tom booked", "Lisa said". Not the copula, modals or
# verbs a place or a thing does as often ("Kyoto was lovely", "Kyoto feels like home",
# "Coffee made my day", "Music helps", "Plans changed", "Summer started").
_SUBJECT_VERBS = (
    "said|says|told|tells|asked|asks|booked|books|decided|decides|planned|plans|wants|"
    "wanted|went|came|called|calls|texted|texts|thinks|thought|loves|loved|likes|liked|"
    "hates|hated|bought|buys|suggested|suggests|agreed|agrees|invited|invites|picked|chose|"
    "chooses|joined|joins|visited|visits|arrived|flew|drove|moved|lives|lived|works|worked|"
    "met|meets|sent|wrote|writes|cooked|cooks|paid|pays|reserved|cancell?ed|switched|"
    "recommended|recommends|mentioned|mentions|promised|promises|hopes|hoped|knows|knew|"
    "wishes|replied|answered|laughed|smiled|cried|studies|studied|teaches|taught|bakes|"
    "baked|paints|painted|sings|sang|dances|danced|adopted|married|is going|was going|"
    "and i|and me|& i|and my|and we")
_SUBJECT = re.compile(rf"\s*(?:(?:also|just|then|finally|already|never|always|really|"
                      rf"still|actually|and i)\s+)?(?:{_SUBJECT_VERBS})\b", re.IGNORECASE)
# Words that open sentences and are no names, beyond _NOT_NAMES and _STARTERS: pronouns of
# everyone, common nouns that open chat sentences, family words (a role, not a name).
_ORDINARY_OPENERS = frozenset({
    "everyone", "everybody", "everything", "nothing", "nobody", "someone", "somebody",
    "something", "anyone", "anybody", "anything", "one", "people", "mine", "ours", "yours",
    "here", "later", "soon", "once", "again", "afterwards", "meanwhile", "besides", "instead",
    "otherwise", "life", "work", "school", "dinner", "lunch", "breakfast", "food", "weather",
    "traffic", "time", "family", "mom", "mum", "dad", "mother", "father", "grandma", "grandpa",
    "sister", "brother", "wife", "husband", "boyfriend", "girlfriend", "kids", "baby",
    "friends", "nope", "yesterday", "tonight", "lately", "recently", "whatever", "hmm",
    "sorry", "thanks", "please", "sure", "wait", "guys", "dear", "honey", "babe", "spring",
    "summer", "autumn", "fall", "winter", "weekend", "morning", "evening", "night", "plans",
    "coffee", "tea", "music", "rain", "snow", "news", "class", "practice", "training",
})


def capitalised_mid_sentence(text: str) -> set[str]:
    """Words capitalised inside a sentence ("with Tom", "to Kyoto"): names, not grammar."""
    return {w for w in _MID_CAPITAL.findall(text)
            if not _not_a_name_word(w, leading=False) and w.casefold() not in _STARTERS}


def opening_names(text: str, people: Sequence[str] = (),
                  seen: Collection[str] = ()) -> list[Mention]:
    """Sentence-opening words that are names (see above): a person when the subject of
    "and I" or a verb, else by the words in it ("Kyoto …" once "to Kyoto" was seen)."""
    known = {*capitalised_mid_sentence(text), *seen}
    out: list[Mention] = []
    for m in _OPENING.finditer(text):
        word, rest = m.group(1), text[m.end():]
        if _ordinary_opener(word, rest):
            continue
        if _SUBJECT.match(rest) and not _written_lowercase(word, text):
            out.append(Mention(word, "person"))
        elif word in known or any(p.split()[0] == word for p in people if p.split()):
            out.append(Mention(word, _english_kind(word, people)))
    return out


def _ordinary_opener(word: str, rest: str) -> bool:
    """Grammar, a common word, or the first word of a longer name (_MULTI's)."""
    low = word.casefold()
    return _not_a_name_word(word, leading=True) or low in _ORDINARY_OPENERS \
        or low in _PLACE_WORDS or low in _ORG_WORDS or is_placeholder(word) \
        or bool(re.match(r"\s+[A-Z]", rest))


def _written_lowercase(word: str, text: str) -> bool:
    """Whether the text also writes the word in lower case ("Coffee made my day, I love
    coffee"): a common noun that opened a sentence, not a name."""
    return re.search(rf"(?<![\w'’-]){re.escape(word.lower())}(?![\w'’-])", text) is not None


# ------------------------------------------------------------------ Chinese rules

_HAN = "\u4e00-\u9fff"
_PLACE_SUFFIXES = ("酒店", "宾馆", "饭店", "民宿", "旅馆", "机场", "公园", "博物馆", "美术馆",
                   "寺", "神社", "大社", "神宫", "古镇", "景区", "海滩", "车站", "火车站", "广场", "餐厅",
                   "医院", "大学", "商场", "岛", "湖", "山")
_ORG_SUFFIXES = ("公司", "集团", "银行", "学校", "研究所", "工作室")
# Characters that end a name when reading backwards from a suffix: verbs, particles and
# pronouns that sit right before a name ("订了|大仓酒店", "去|西湖").
_STOP_CHARS = frozenset("的了在去到住订把和与跟是我你他她它们个这那从往离要想说也都还就给被让"
                        "换成改为叫于向对及或很最又再已将会能可里上下中间前后次趟家位"
                        "看逛玩游观爬回来飞坐吃买见过经顺便近附欢")
MAX_ZH_NAME = 4  # characters before a suffix: 东京柏悦 yes, a whole clause no
# Cities and countries a chat names bare (no suffix); short on purpose: a wrong place is worse
# than a missing one.
ZH_PLACES = frozenset({
    "北京", "上海", "广州", "深圳", "杭州", "南京", "苏州", "成都", "重庆", "西安", "武汉",
    "长沙", "厦门", "青岛", "大连", "天津", "昆明", "大理", "丽江", "三亚", "桂林", "拉萨",
    "哈尔滨", "香港", "澳门", "台北", "东京", "京都", "大阪", "奈良", "北海道", "札幌", "首尔",
    "釜山", "曼谷", "清迈", "新加坡", "巴黎", "伦敦", "罗马", "纽约", "洛杉矶", "旧金山",
    "悉尼", "墨尔本", "柏林", "巴塞罗那", "里斯本", "冰岛", "日本", "韩国", "泰国", "法国",
    "英国", "美国", "意大利", "西班牙", "德国", "澳大利亚", "云南", "西藏", "新疆", "海南",
})
_TRIP_PLACE = re.compile(rf"(?:去|到|飞往|前往|飞到|回)([{_HAN}]{{2,4}}?)"
                         r"(?:旅行|旅游|玩|度假|出差|过年|过节)")
_PET_ZH = re.compile(rf"(?:猫|狗|猫咪|小猫|小狗|狗狗|兔子|仓鼠|鹦鹉|宠物)[{_HAN}，, ]{{0,4}}?"
                     rf"(?:取名叫|取名为|名叫|叫做|起名叫|叫)([{_HAN}]{{2,3}})")
_NAMED_ZH = re.compile(rf"(?:取名叫|取名为|起名叫)([{_HAN}]{{2,3}})")
_BOOK_ZH = re.compile(r"《([^《》\n]{1,40})》")
_PROJECT_ZH = re.compile(rf"([{_HAN}A-Za-z0-9]{{2,8}}?)项目")


def _back_to_name(text: str, end: int) -> str:
    """The name ending at `end`: Han characters read backwards until a stop character.
    家 is one inside a name after another of its characters (柊家旅馆), not after a numeral,
    a demonstrative or a pronoun (一家酒店, 这家酒店, 我家). Empty when the name is not a
    word of its own (`_delimited_head`)."""
    start = end
    while start > 0 and re.match(rf"[{_HAN}]", text[start - 1]):
        ch = text[start - 1]
        if ch in _STOP_CHARS and not (ch == "家" and _family_name_char(text, start - 2)):
            break
        if end - start == MAX_ZH_NAME:
            return ""  # the run goes on: a span cut here would start inside a word
        start -= 1
    return _delimited_head(text[start:end])


def _delimited_head(head: str) -> str:
    """The head itself when it can be a name, else "". Chinese has no spaces, so a name must
    be delimited on its own: at least two characters (one character before 公司 is the end of
    another word, 游戏公司 → 戏, or a modifier, 新公司), and not opening with a quantity (a
    numeral and its measure word are a word apart from the noun they count: 一点点山, 两座山;
    a numeral before another character may open a name: 千岛湖, 九华山)."""
    if len(head) < 2 or (head[0] in _COUNTS and head[1] in _MEASURE_WORDS):
        return ""
    return head


def _family_name_char(text: str, at: int) -> bool:
    """Whether text[at] may come before 家 in a name (柊家, 王家): a Han character that is no
    stop character nor a numeral or measure word."""
    return at >= 0 and bool(re.match(rf"[{_HAN}]", text[at])) \
        and text[at] not in _STOP_CHARS and text[at] not in _NUMERALS


_NUMERALS = frozenset("一二两三四五六七八九十百千几每某哪整全")
_COUNTS = frozenset("一二两三四五六七八九十百千万几半每某哪整")
# Measure words: after a numeral or a determiner they make a quantity (一座, 两片, 一点, 几个).
_MEASURE_WORDS = frozenset("个只条张片点座家位次趟本块件种些群头匹棵朵间所栋层双对套杯瓶碗份根"
                           "支颗首部台辆架艘处")


def _suffixed(text: str, suffixes: Sequence[str], kind: EntityKind) -> list[Mention]:
    out = []
    pattern = "|".join(sorted(map(re.escape, suffixes), key=len, reverse=True))
    for m in re.finditer(pattern, text):
        if len(m.group(0)) == 1 and re.match(rf"[{_HAN}]", text[m.end():m.end() + 1]):
            continue  # 湖 in 西湖公园 is inside a longer name, not its end
        head = _back_to_name(text, m.start())
        if head:  # two characters at least: "爬山", "离公司" are no names
            out.append(Mention(head + m.group(0), kind))
    return out


# People in Chinese text have no capitals: a name is found as the subject of 和我 / a verb
# ("小明和我决定…", "小明说…", "小明订了…") at the start of a sentence or clause, or after 我和
# ("我和小明一起去…"): two or three Han characters, never a pronoun, a time word, a family word
# (a role, not a name), a generic noun or a known place.
_ZH_SUBJECT_OF = ("和我|跟我|与我|同我|说|告诉|订了|订好|决定|打算|计划|觉得|喜欢|建议|提议|"
                  "推荐|答应|同意|问我|带我|约我|请我|给我|帮我|想去|想要|想看|想吃|"
                  "已经|刚刚|昨天|今天")
_ZH_OPENING_PERSON = re.compile(rf"(?:^|(?<=[。！？；!?;，,：:\n\s]))([{_HAN}]{{2,3}}?)"
                                rf"(?={_ZH_SUBJECT_OF})")
_ZH_WITH_PERSON = re.compile(rf"我们?(?:和|跟|与|同)([{_HAN}]{{2,3}}?)"
                             r"(?=一起|决定|打算|计划|去|订|说|约|商量|聊|见面|都|[，,。！？])")
_ZH_NOT_PEOPLE = frozenset({
    "今天", "昨天", "明天", "前天", "后天", "现在", "刚才", "后来", "然后", "最后", "周末",
    "晚上", "早上", "上午", "下午", "中午", "当时", "那天", "这天", "今年", "去年", "明年",
    "上周", "下周", "这周", "本周", "每天", "终于", "其实", "因为", "所以", "但是", "不过",
    "而且", "如果", "虽然", "一起", "一直", "已经", "还是", "可能", "应该", "突然", "大概",
    "妈妈", "爸爸", "老公", "老婆", "男朋友", "女朋友", "男友", "女友", "同事", "老板", "老师",
    "孩子", "儿子", "女儿", "哥哥", "姐姐", "弟弟", "妹妹", "爷爷", "奶奶", "外婆", "外公",
    "室友", "同学", "邻居", "家人", "对象", "酒店", "旅馆", "医生", "大家", "朋友",
    # generic nouns that say, decide or plan as often as people do ("公司决定…", "新闻说…")
    "公司", "学校", "医院", "新闻", "电视", "网站", "天气", "东西", "事情", "工作", "房东",
    "客服", "导游", "司机", "店员", "前台", "别人", "自己", "本来", "原来", "之前", "以前",
    "最近", "目前", "平时", "假期", "老家", "宝宝", "小孩", "领导", "经理", "客户", "阿姨",
    "叔叔", "舅舅", "姥姥", "姥爷", "婆婆", "丈夫", "妻子", "先生", "太太", "闺蜜", "兄弟",
    "姐妹", "团队", "部门", "政府", "官方", "商家", "航班", "飞机", "火车", "周一", "周二",
    "周三", "周四", "周五", "周六", "周日", "五一", "国庆", "春节", "早饭", "午饭", "晚饭",
})


def chinese_people(text: str) -> list[Mention]:
    out: list[Mention] = []
    for m in (*_ZH_OPENING_PERSON.finditer(text), *_ZH_WITH_PERSON.finditer(text)):
        name = m.group(1)
        if name in _ZH_NOT_PEOPLE or name in ZH_PLACES or is_placeholder(name) \
                or any(ch in _STOP_CHARS for ch in name):
            continue
        out.append(Mention(name, "person"))
    return out


def chinese_mentions(text: str) -> list[Mention]:
    out: list[Mention] = chinese_people(text)
    for m in _BOOK_ZH.finditer(text):
        out.append(Mention(m.group(1).strip(), "work"))
    for m in (*_PET_ZH.finditer(text), *_NAMED_ZH.finditer(text)):
        out.append(Mention(m.group(1), "pet"))
    for m in _PROJECT_ZH.finditer(text):
        head = _back_to_name(text, m.end(1))
        if head:
            out.append(Mention(head + "项目", "project"))
    out += _suffixed(text, _PLACE_SUFFIXES, "place")
    out += _suffixed(text, _ORG_SUFFIXES, "organisation")
    for m in _TRIP_PLACE.finditer(text):
        out.append(Mention(m.group(1), "place"))
    out += [Mention(p, "place") for p in sorted(ZH_PLACES, key=text.find) if p in text]
    return out


# ------------------------------------------------------------------ all together


def find_mentions(text: str, *, people: Sequence[str] = (), places: Sequence[str] = (),
                  known: Sequence[Mention] = (), seen: Collection[str] = ()) -> list[Mention]:
    """Every entity the text names, first kind wins per name, each verbatim in `text`.
    `people`: known speakers and participants; `places`: known locations (an event's);
    `known`: names of entities seen before, found again wherever they occur as words
    ("Kyoto" in "our Kyoto trip", where no rule alone would see a place); `seen`: words
    capitalised mid-sentence in the texts read with this one (`capitalised_mid_sentence`),
    which make a word that opens a sentence here a name."""
    people = _usable(people)  # a role word or placeholder is nobody ("user", "{{char}}")
    found: list[Mention] = []
    found += [Mention(p, "person") for p in mentioned_names(text, people)]
    found += [Mention(p, "place") for p in _usable(places) if p in text]
    kinds = {m.name: m.kind for m in known}
    found += [Mention(n, kinds[n]) for n in mentioned_names(text, _usable(kinds))]
    found += english_mentions(text, people, seen)
    if is_cjk(text, threshold=0.05):
        found += chinese_mentions(text)
    out: dict[str, Mention] = {}
    for m in found:
        name = m.name.strip()
        if not name or len(name) > MAX_NAME_CHARS or name not in text:
            continue  # never keep a name that is not in the text as written
        if normalise(name) in _NOT_NAMES or is_placeholder(name):
            continue
        out.setdefault(normalise(name), Mention(name, m.kind))
    return list(out.values())


def _usable(names: Iterable[str]) -> list[str]:
    return [n for n in dict.fromkeys(names) if not is_placeholder(n)]


# ------------------------------------------------------------------ aliases


def _tokens(name: str) -> list[str]:
    return normalise(name).split()


def same_entity(a: str, a_kind: str, b: str, b_kind: str) -> bool:
    """Conservative alias test. Equal names (case-insensitive) are one entity. Otherwise only
    when the kinds agree and, for Latin names, one name's words start the other's ("Park
    Hyatt" / "Park Hyatt Kyoto", "Melanie" / "Melanie Chen") or a single word of at least
    MIN_PREFIX_CHARS letters starts the other's first word ("Mel" / "Melanie"). Chinese
    names are never merged by prefix (京都 is not 京都大学)."""
    if normalise(a) == normalise(b):
        return True
    if a_kind != b_kind or a_kind == "thing" or is_cjk(a) or is_cjk(b):
        return False
    ta, tb = _tokens(a), _tokens(b)
    short, long_ = sorted((ta, tb), key=lambda t: (len(t), len(" ".join(t))))
    if not short:
        return False
    if len(short) < len(long_) and long_[:len(short)] == short:
        return True
    return (len(short) == 1 and len(short[0]) >= MIN_PREFIX_CHARS
            and long_[0] != short[0] and long_[0].startswith(short[0]) and a_kind == "person")

"""What a recall searches for: the user's new message read with its recent turns, and split
into its intents (ST-BME reads the current message with the last reply and the previous user
message, and searches several intents separately).

- Recent turns: "When was that?" names nothing; the turns before it do. The query's embedding
  is the message's own plus the recent turns' with smaller weights (`recent_weights`, most
  recent first: the last reply, then the previous user message), normalised. Keywords stay the
  message's own unless it has fewer than `recent_keyword_min_terms` content terms, then the
  recent user turn's words are searched too.
- A message that names nothing ("Can you tell me more about that?": fewer content terms than
  `recent_keyword_min_terms`) points back at the turn before it, so that turn is what is
  searched: the recent user turn's embedding joins with `anaphoric_weight` (against the
  message's 1.0) and the gate judges cards against its words too — with the small default
  weights a follow-up's own vector (which means "tell me more") wins and the gate, reading
  only "tell me more", refuses every card.
- Lists: "What books has Mel read?", "Where has Mel camped?", "小明都去过哪些地方？" ask for
  every item of a kind, said over many sessions, not for one fact (`asks_for_list`). Recall
  then ranks whole turns, the named person's own (recall.search_list): see bench/README.md.
- Intents: "奶糖体检结果怎么样？还有小明的吉他课呢？" asks two things. A message is split at
  question ends and at "also / 还有 / 另外 …" when at least two parts each carry
  `min_intent_terms` content terms; each part is searched on its own (at most `max_intents`).
- The past: "which hotel did we book first?", 我们一开始订的是哪家酒店？ ask about how things
  were before they changed (`asks_about_past`, `Intent.past`): recall keeps the facts a later
  event updated (recall/updates.py), which it otherwise leaves out for the new ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from chalicelib.domain.models import RecallRequest
from chalicelib.domain.names import strip_names
from chalicelib.domain.textproc import query_terms
from chalicelib.ports import Services
from chalicelib.usecases.recall.languages import Across, across
from chalicelib.usecases.recall.recipes import RecallRecipe

_BOUNDARY = re.compile(
    r"(?<=[?？])\s*"
    r"|\s*(?:[,，;；。.]\s*)?(?:还有|另外|顺便问一下|顺便|以及|再问一下)\s*"
    r"|\s*(?:[,;.]\s*)?\b(?:also|and also|besides|by the way|another thing)\b[,:]?\s*",
    re.IGNORECASE)


@dataclass(frozen=True)
class Intent:
    text: str  # what the intent says (names kept): the trace reads it
    judged: str  # what the gate judges cards against: the text, or for a follow-up with it
    # the recent user turn it points back at
    keywords: str  # what is searched by keyword
    vector: np.ndarray  # what is searched by meaning
    past: bool = False  # asks how things were before a change (asks_about_past)
    now: bool = False  # asks how things are now (asks_about_now)
    across: Across | None = None  # the vector moved into the other language (languages.py)


# "What/Which [kind of] [adjective…] <plural noun> has/does/…": "What books has Mel read?",
# "Which cities has Jon visited?", "What LGBTQ+ events has Caroline joined?". Not with a
# modal ("What fields would Caroline pursue?"): a guess asks for no record of items.
_PLURAL_ASKED = re.compile(
    r"\b(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[\w+/-]+\s+){0,2}?"
    r"([a-z][\w/-]*s)\s+(?:has|have|does|do|did|is|are|was|were)\b",
    re.IGNORECASE)
# "What are some changes …", "What are Mel's pets' names?" (not "What are the shoes …": one thing)
_PLURAL_NAMED = re.compile(
    r"\bwhat (?:are|were) (?:some|\w+['’]s?) (?:[\w'’-]+\s+){0,2}?([a-z][\w/-]*s)\b",
    re.IGNORECASE)
# Not plural nouns, though they end in s: verbs of the third person and -ss/-us/-is words.
_NOT_PLURAL = re.compile(r"(?:ss|us|is|ous|ics|news|does|has|was|says|means|thinks|makes|"
                         r"gives|goes|wants|likes|feels|needs|seems|looks)$", re.IGNORECASE)
# Experience across time or several items: "Where has Mel camped?", "What has she painted?",
# "how many times", "both", "in what ways", "all the …", "what types of"; 哪些, 几次, 多少次, 都…什么/哪, 列举.
_MANY_ASKED = re.compile(
    r"\b(?:where|what|who)\s+(?:has|have)\b|\bhow many times\b|\bboth\b|\bin what ways\b"
    r"|\ball (?:the )?(?:things|places|times)\b|\bwhat (?:kinds|types|sorts) of\b"
    r"|哪些|几次|多少次|(?<![京成首])都.{0,8}(?:什么|哪|啥)|列举|列出"
    # a count gathered over time ("how many dogs has she adopted", "how many races have I
    # run", 去了几趟, 去过哪几个地方): the items, one a turn, over sessions; not a count said
    # once ("how many kids does she have", 带回来几个粽子)
    r"|\bhow many\s+(?!(?:years|months|weeks|days|hours|minutes|times)\b)(?:[a-z'-]+\s+)?"
    r"[a-z]+s\s+(?:has|have)\b|几趟|几回|多少趟|多少回|哪几",
    re.IGNORECASE)
# (京都, 成都, 首都 hold a 都 that is no "all": "我们在京都住哪家酒店？" asks for one hotel.)


def asks_for_list(text: str) -> bool:
    """Whether a question asks for all the items of a kind rather than one fact: a plural
    "what/which <things>" question, an experience over time ("where has …"), a count of times,
    "both", or the Chinese 哪些 / 几次 / 都…什么. Its evidence is many turns, each naming one
    item, spread over sessions."""
    if _MANY_ASKED.search(text):
        return True
    return any(not _NOT_PLURAL.search(m.group(1))
               for pattern in (_PLURAL_ASKED, _PLURAL_NAMED) for m in pattern.finditer(text))


# Words asking about an earlier state: "first", "originally", "used to", 原来, 一开始 … Not
# "how old" (an age) nor "first name"; "before" alone counts ("the hotel before this one").
_PAST_ASKED = re.compile(
    r"\b(?:first|at first|originally|original|initially|before|used? to|previous(?:ly)?|"
    r"old|earlier|formerly|history|historically)\b(?<!\bhow old)(?! name)"
    r"|原来|之前|以前|一开始|最初|起初|第一次|原先|先前|历史|当初|本来", re.IGNORECASE)


_NOW_ASKED = re.compile(
    r"\b(?:now|currently|current|these days|nowadays|still|anymore|any more)\b"
    r"|现在|目前|如今|当前|这阵子|最近|还在|还[^，。？?]{0,6}[吗么]", re.IGNORECASE)


def asks_about_now(text: str) -> bool:
    """Whether the query asks how things are now ("我现在在哪上班？", "Is Sam still learning
    the cello?"): the latest telling of a thing answers it, not the first."""
    return _NOW_ASKED.search(text) is not None and not asks_about_past(text)


def asks_about_past(text: str) -> bool:
    """Whether the query asks how things were before they changed ("which hotel did we book
    first?", 我们一开始订的是哪家酒店？): then recall keeps what later events updated."""
    return _PAST_ASKED.search(text) is not None


def split_intents(query: str, recipe: RecallRecipe) -> list[str]:
    """The parts of a message that each ask something; the whole message when it asks one."""
    if not recipe.split_intents or len(query) > recipe.split_max_chars:
        return [query]
    parts = [p.strip(" ,，;；") for p in _BOUNDARY.split(query) if p and p.strip(" ,，;；")]
    asking = [p for p in parts if len(query_terms(p)) >= recipe.min_intent_terms]
    if len(asking) < 2:
        return [query]
    return asking[: recipe.max_intents]


def intents(services: Services, request: RecallRequest, recipe: RecallRecipe,
            named: set[str]) -> list[Intent]:
    recent = [t.content for t in reversed(request.recent)]  # most recent first
    weighted = [(weight, text, services.embedder.embed_query(text))
                for text, weight in zip(recent, recipe.recent_weights, strict=False)
                if weight > 0]
    embedded = {text: vec for _, text, vec in weighted}
    out = []
    for text in split_intents(request.query, recipe):
        search = strip_names(text, named) or text if named and recipe.strip_names else text
        vector = services.embedder.embed_query(search)
        mixed = [(w, v) for w, _, v in weighted]
        keywords = judged = search
        pointed = referent(request, search, recipe)
        if pointed is not None:
            keywords = judged = f"{search} {pointed}"
            vec = embedded.get(pointed)
            mixed.append((recipe.anaphoric_weight,
                          vec if vec is not None else services.embedder.embed_query(pointed)))
        if mixed:
            total = vector + sum(w * v for w, v in mixed)
            vector = (total / max(float(np.linalg.norm(total)), 1e-12)).astype(np.float32)
        moved = across(services.embedder, search, vector) if recipe.across_languages else None
        out.append(Intent(text=text, judged=judged, keywords=keywords, vector=vector,
                          past=asks_about_past(text), now=asks_about_now(text),
                          across=moved))
    return out


# Words that point back at an earlier turn. A short message holding one ("那后来呢？",
# "能再多说说吗？", "what about that?") is read as a follow-up even when its CJK bigrams count
# as content terms ("后来", "多说"): bigrams cannot tell a frame from a topic.
_POINTS_BACK = re.compile(
    r"\b(?:that|it|this|those|these|them|there|then|more|else|again)\b"
    r"|那|这|它|后来|然后|接着|继续|多说|详细|再说|呢", re.IGNORECASE)


def referent(request: RecallRequest, search: str, recipe: RecallRecipe) -> str | None:
    """The recent user turn a message that names nothing points back at, or None: a message
    with fewer content terms than `recent_keyword_min_terms`, or a short one (at most
    `anaphoric_max_terms`) that holds a word pointing back."""
    terms = len(query_terms(search))
    if terms >= recipe.recent_keyword_min_terms and not (
            terms <= recipe.anaphoric_max_terms and _POINTS_BACK.search(search)):
        return None
    user_turns = [t.content for t in reversed(request.recent) if t.role == "user"]
    return user_turns[0] if user_turns else None

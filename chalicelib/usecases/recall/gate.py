"""Admission gate: a card is injected only when there is absolute evidence that it is about
the query, so a recall returns nothing rather than fill its slots with whatever ranked first.
A hook-sized recall (at most the recipe's max_cards) needs `min_relevance`; a wider one only
the lower floor `min_relevance_wide`, which refuses what is plainly unrelated (recall.
gate_threshold picks the threshold, and the trace names it).

The fused score cannot say this: it is min-max normalised per query, so the best candidate
scores high even when nothing relevant is stored. The gate reads two pieces of absolute
evidence instead (the query vector is the one recall searched with: without the people it
names, under the hybrid recipe):

- **lift**: the query's cosine to the card (the vector list's own score) minus the query's
  cosine to small talk in its own language (`SMALL_TALK`, the mean vector of a few greetings
  and thanks, embedded once per embedder). e5 puts any chat line at 0.75-0.85 of any
  question, and how high depends on the question; small talk is what an unrelated line looks
  like *to this query*, so the lift is how much more the card means to it than chatter does.
- **coverage**: the share of the query's content terms (`query_terms`: stop words and
  particles dropped, names excluded) that the card's title and text hold.

- **the space's words** (a hook-sized recall): the share of those terms that any memory of
  the space holds at all; a term the space never used costs space_weight × its share.

    relevance = lift + term_weight × coverage − space_weight × (1 − space share)
                                                     admitted when relevance ≥ the threshold

A card whose vector is not among the vector list's hits has a cosine at most the list's
lowest, which stands in for it when the list is full; a card with no vector evidence at all
(not embedded yet, or no vector list) is admitted on its words alone: every content term,
or at least two covering two thirds of the query, a CJK bigram counted by its characters
(`words_suffice`).
A card in another language than the query (a Chinese question about a memory told in
English) is judged against small talk in *its* language — e5 puts any pair of languages
further apart than any pair within one, so the query's own small talk would sink every
foreign card below zero — and its coverage is read over the query terms in its script
(names in Latin letters in a Chinese query); with none there, over the query's terms as
its language's words (the `Glossary`: "daughter" is 女儿), and a hook-sized recall charges
the space term, at `ACROSS_MISS`, for the terms no ranked card holds so; with no glossary,
a card whose meaning is closer to the query than small talk counts `cross_coverage`.
Calibration (LoCoMo, fit on one conversation and tested on the other): bench/README.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from chalicelib.domain.models import Card
from chalicelib.domain.names import strip_names
from chalicelib.domain.salience import SMALL_TALK, language
from chalicelib.domain.textproc import is_cjk, query_terms, tokenize
from chalicelib.ports import Embedder, Glossary, KeywordIndex, small_talk_vector
from chalicelib.usecases.recall.languages import Across, chinese_words

# A card not embedded yet (a message PUT a moment ago) is judged on its words alone: every
# content term, or at least two of them covering two thirds of the query. CJK bigrams that
# straddle a word boundary ("奶糖体检" → 奶糖 / 糖体 / 体检) are rarely in the text, so "every
# term" alone refused "奶糖昨天进行了体检" for "奶糖体检" until its embedding arrived; and
# counted as terms, "奶糖打疫苗了吗" (two of four bigrams straddle) refused "奶糖昨天打了疫苗".
WORDS_ONLY_SHARE = 2 / 3
WORDS_ONLY_MIN = 2

# A question's term the other language's cards never hold (as the glossary's words) costs
# this share of the space term a word the space never used costs within one language
# (`Gate.across_share`). Chosen on the Chinese bench's cross-lingual questions among all
# (1), none (0), half, and "one word held is enough": bench/README.md, "The gate reads
# across languages".
ACROSS_MISS = 0.5


def small_talk_cosines(embedder: Embedder, qvec) -> dict[str, float]:
    """The query's cosine to the small talk of each language ("zh", "en")."""
    q = np.asarray(qvec, np.float32)
    return {lang: float(np.dot(q, small_talk_vector(embedder, lang))) for lang in SMALL_TALK}


def words_suffice(terms: Sequence[str], held: Sequence[str]) -> bool:
    """Every content term held, or at least two covering two thirds of the query. A CJK
    bigram counts by the characters it covers, not as one term: the bigrams of "奶糖打疫苗"
    are 奶糖 / 糖打 / 打疫 / 疫苗, and a message saying 奶糖 and 疫苗 holds two of the four
    but four of the five characters — the other two straddle word boundaries."""
    if not terms:
        return False
    if len(held) >= len(terms):
        return True
    return len(held) >= WORDS_ONLY_MIN and _units(held) >= WORDS_ONLY_SHARE * _units(terms) - 1e-9


def _units(terms: Sequence[str]) -> int:
    """What a list of terms covers: the distinct characters of its CJK bigrams, plus one per
    other term."""
    cjk = [t for t in terms if is_cjk(t)]
    return len(set("".join(cjk))) + len(terms) - len(cjk)


def relevance(lift: float, coverage: float, term_weight: float, space_share: float = 1.0,
              space_weight: float = 0.0) -> float:
    """The gate's score: meaning above small talk, plus the share of content terms held,
    less space_weight × the share of them the space holds nowhere."""
    return lift + term_weight * coverage - space_weight * (1.0 - space_share)


def unit_share(terms: Sequence[str], card: Card,
               held: Sequence[str] | None = None) -> float:
    """The share of the query's content units the card holds: each character of its CJK
    bigrams on its own, each other term whole (`_units`' count). A Chinese query's bigrams
    straddle word boundaries ("我现在养了几只猫 都叫什么" → 几只 / 只猫 / 都叫): "我养的黑猫"
    holds none of them and one of their five characters (猫). `held`: the terms the card
    holds (`held_terms`), when the caller has read them already."""
    units = _units(terms)
    if not units:
        return 0.0
    text = f"{card.title} {card.text}"
    chars = set("".join(t for t in terms if is_cjk(t)))
    held = held_terms(terms, card) if held is None else held
    return (sum(1 for ch in chars if ch in text)
            + sum(1 for t in held if not is_cjk(t))) / units


def held_across(across: dict[str, frozenset[str]], texts: Sequence[str | frozenset[str]],
                held: Sequence[str]) -> list[str]:
    """The query's terms cards in the other language hold: as that language's words (`across`:
    the glossary's, per term), or as written — users switch languages mid-sentence ("终于 off
    work 了", "Vivi's cat!英短蓝猫"): a card told mostly in Chinese holds "work" and "cat" in
    English. `held`: the terms the cards hold as written (held_terms)."""
    return [*(t for t, words in across.items()
              if t in held or any(_holds(text, words) for text in texts)),
            *(t for t in held if t not in across)]


def share_read(across: dict[str, frozenset[str]], found: Sequence[str]) -> float:
    """The share of the terms a foreign card can be read for (those the glossary knows, and
    any it holds as written) that `found` (held_across) holds."""
    return share(found, [*across, *(t for t in found if t not in across)])


def _holds(text: str | frozenset[str], words: frozenset[str]) -> bool:
    if isinstance(text, str):
        return any(w in text for w in words)
    return not text.isdisjoint(words)


def held_terms(terms: Sequence[str], card: Card) -> list[str]:
    """The query's content terms that occur in the card's title and text."""
    tokens = set(tokenize(f"{card.title} {card.text}"))
    return [t for t in terms if t in tokens]


def coverage(terms: Sequence[str], card: Card) -> float:
    """Share of the query's content terms that occur in the card's title and text."""
    return share(held_terms(terms, card), terms)


def share(held: Sequence[str], terms: Sequence[str]) -> float:
    return len(held) / len(terms) if terms else 0.0


@dataclass(frozen=True)
class Judgement:
    admitted: bool
    relevance: float | None  # None: no meaning evidence (judged on terms alone)
    coverage: float
    needed: float | None = None  # the relevance it had to reach (by characters: more)


@dataclass
class Gate:
    """One recall's gate: the query's terms and small-talk baseline, and the cosine bound."""

    threshold: float
    term_weight: float
    terms: list[str]
    baselines: dict[str, float]  # the query's cosine to small talk, per language ("zh", "en")
    bound: float | None  # the lowest cosine of a full vector list; None if not full
    lang: str = "en"  # the query's
    text: str = ""  # the query's content (names stripped): its Chinese words, read across
    cross_coverage: float = 0.0
    # a card in another language: its lift counts as lift / cross_lift (e5 squeezes meaning
    # across languages into a narrower band than within one; recipe.cross_lift, wide recalls only)
    cross_lift: float = 1.0
    # the share of the content terms some memory of the space holds (`space_holds`), and its
    # weight: a question whose words the space never used is about something it was not told
    space_share: float = 1.0
    space_weight: float = 0.0
    # a Chinese query's card in Chinese judged on characters (`by_characters`), needing this
    # much more than the threshold; None: on bigrams, as any other
    units_margin: float | None = None
    # a card in another language is read through this (the query's terms as its words)
    glossary: Glossary | None = None
    # per language of the foreign cards admit() judges: the space share their words give the
    # query's terms (`across_share`)
    held_across: dict[str, float] = field(default_factory=dict)
    # per language: the query's terms as that language's words (`across`), read once
    _across: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict, init=False,
                                                         repr=False)
    # per card ref: the questions its turns answer (answers.questions_answered), read with it
    asked: dict[str, str] = field(default_factory=dict)
    # per card ref: what a foreign card says, as glossary words are looked for in it (read
    # once, by `across_share` or the first judgement of the card)
    _words: dict[str, str | frozenset[str]] = field(default_factory=dict, init=False,
                                                    repr=False)
    # what admit() saw, for the trace: cards judged, cards passed, the best relevance
    judged: int = 0
    passed: int = 0
    best: float | None = None
    best_needed: float | None = None  # the threshold the best card faced

    @classmethod
    def for_query(cls, embedder: Embedder, query: str, qvec, named: set[str],
                  cosines: Sequence[float], vector_k: int, threshold: float,
                  term_weight: float, cross_coverage: float = 0.5,
                  cross_lift: float = 1.0, moved: Across | None = None,
                  glossary: Glossary | None = None) -> Gate:
        """`cosines`: the vector list's scores for this query (all of them, any order);
        `cross_lift`: the share of a same-language card's lift a foreign one needs (1: all);
        `moved`: the query moved into the other language, when recall searched with it."""
        content = strip_names(query, named) if named else query
        baselines = small_talk_cosines(embedder, qvec)
        if moved is not None:  # foreign cards scored by the moved vector: so is their chatter
            other = next(lang for lang in baselines if lang != language(query))
            baselines[other] = float(np.dot(moved.vector, small_talk_vector(
                embedder, other))) - moved.offset
        bound = min(cosines) if cosines and vector_k and len(cosines) >= vector_k else None
        return cls(threshold=threshold, term_weight=term_weight,
                   terms=query_terms(content or query), baselines=baselines, bound=bound,
                   text=content or query,
                   lang=language(query), cross_coverage=cross_coverage,
                   cross_lift=cross_lift, glossary=glossary)

    @cached_property
    def terms_by_language(self) -> dict[str, list[str]]:
        """The query's terms by the language of their script, in order (once per gate)."""
        out: dict[str, list[str]] = {}
        for term in self.terms:
            out.setdefault(language(term), []).append(term)
        return out

    @property
    def baseline(self) -> float:
        """The query's cosine to small talk in its own language."""
        return self.baselines[self.lang]

    def read(self, card: Card) -> Card:
        """The card as the gate reads its words: with the questions it answers before it
        (`asked`). Its language and meaning stay its own."""
        question = self.asked.get(card.ref)
        return card.model_copy(update={"text": f"{question} {card.text}"}) if question else card

    def judge(self, card: Card) -> Judgement:
        lang = language(f"{card.title} {card.text}")
        card = self.read(card)
        held = held_terms(self.terms, card)
        cover = share(held, self.terms)
        cosine = card.score_parts.get("vector", self.bound)
        if cosine is None:  # nothing known about its meaning: the words must say it
            return Judgement(words_suffice(self.terms, held), None, cover)
        lift = cosine - self.baselines[lang]
        space_share = self.space_share
        needed = self.threshold
        if lang != self.lang:  # its words are not the query's: the glossary's may be
            lift = lift / self.cross_lift if lift > 0 else lift
            cover = self.foreign_coverage(held, lang, lift, card)
            space_share = self.held_across.get(lang, 1.0) if self.space_weight else 1.0
        elif self.units_margin is not None and lang == "zh":
            cover, needed = unit_share(self.terms, card, held), self.threshold + self.units_margin
        score = relevance(lift, cover, self.term_weight, space_share, self.space_weight)
        return Judgement(score >= needed, score, cover, needed)

    def by_characters(self, margin: float) -> None:
        """A Chinese query's Chinese cards are judged on the characters they hold
        (`unit_share`), with the threshold raised by `margin` (characters are held more
        often than bigrams are). Hook-sized recalls (bench/README.md, "The gate reads
        characters"); a foreign card keeps its coverage and the threshold."""
        if self.lang == "zh" and margin >= 0:
            self.units_margin = margin

    def space_holds(self, keywords: KeywordIndex, space: str, weight: float) -> None:
        """Read, in one keyword index call, which content words the space holds at all
        (foreign questions: "the LGBTQ support group" asked of a space that never spoke of
        one; LoCoMo, bench/README.md "The gate's space term"), and weigh it. Words only, not
        CJK bigrams: half of a Chinese query's bigrams straddle a word boundary (我今年一共看了
        → 共看) and no memory holds them, so the share would punish every Chinese question
        (Chinese bench hook hit@2 0.649 → 0.497 when they counted)."""
        words = [t for t in self.terms if not is_cjk(t)]
        if weight <= 0 or not words:
            return
        held = keywords.held_terms(space, words)
        self.space_share = sum(1 for t in words if t in held) / len(words)
        self.space_weight = weight

    def foreign_coverage(self, held: Sequence[str], lang: str, lift: float,
                         card: Card) -> float:
        """A card in another language: the share of the query terms in its script it holds;
        when the query has none in its script, the share of the terms it can be read for —
        those the glossary knows in that language, and those it holds as written (a
        code-switched card: `held_across`) — that it holds ("daughter" in "女儿，叫朵朵"); with
        neither, `cross_coverage` if its meaning is closer to the query than small talk is
        (nothing stands in for words the meaning lacks)."""
        mine = self.terms_by_language.get(lang, [])
        if mine:
            return share([t for t in held if t in mine], mine)
        across = self.across(lang)
        if across or held:
            return share_read(across, held_across(across, [self.words_of(card, lang)], held))
        return self.cross_coverage if lift > 0 else 0.0

    def words_of(self, card: Card, lang: str) -> str | frozenset[str]:
        """What a card in `lang` says, as glossary words are looked for in it: Chinese as
        written (a word is a substring), English as its tokens; read once per card."""
        if card.ref not in self._words:
            text = f"{card.title} {card.text}"
            self._words[card.ref] = text if lang == "zh" else frozenset(tokenize(text))
        return self._words[card.ref]

    def across(self, lang: str) -> dict[str, frozenset[str]]:
        """The query's terms not in `lang`'s script, each as the words of `lang` the glossary
        gives for it (the terms it knows only)."""
        if self.glossary is None:
            return {}
        if lang not in self._across:
            out: dict[str, frozenset[str]] = {}
            # a Chinese question's words, not its bigrams (博物馆, not 博物 / 物馆)
            terms = (chinese_words(self.text, self.glossary) if lang == "en" and self.text
                     else [t for t in self.terms if language(t) != lang])
            for term in terms:
                words = (self.glossary.in_chinese(term) if lang == "zh"
                         else self.glossary.in_english(term))
                if words:
                    out[term] = words
            self._across[lang] = out
        return self._across[lang]

    def across_share(self, cards: Sequence[Card]) -> None:
        """Per language of the foreign cards: the share of the query's terms (as that
        language's words) that some card among these holds, a hook-sized recall's space term
        across languages ("What breed is 林悦's dog?" of a space whose memories say neither
        狗狗 nor 品种: words the space did not use; the cards recall ranked are read, the
        keyword index holds bigrams). A term missed so counts `ACROSS_MISS` of a word missed
        within one language: a dictionary misses how the other language says much of a
        question ("how old" is 五岁)."""
        texts: dict[str, list[str | frozenset[str]]] = {}
        written: dict[str, set[str]] = {}  # the terms they hold as written
        for card in cards:
            lang = language(f"{card.title} {card.text}")
            if lang != self.lang:
                read = self.read(card)
                texts.setdefault(lang, []).append(self.words_of(read, lang))
                written.setdefault(lang, set()).update(held_terms(self.terms, read))
        for lang, words_of_cards in texts.items():
            across = self.across(lang)
            if across:
                held = share_read(across, held_across(across, words_of_cards,
                                                      sorted(written[lang])))
                self.held_across[lang] = 1.0 - ACROSS_MISS * (1.0 - held)

    def admit(self, cards: Sequence[Card]) -> list[Card]:
        """The cards that pass, in order, each with its relevance in score_parts; the counts
        and the best relevance seen are kept on the gate (`judged`, `passed`, `best`)."""
        if self.space_weight and self.glossary is not None:
            self.across_share(cards)
        out = []
        for card in cards:
            judged = self.judge(card)
            self.judged += 1
            if judged.relevance is not None and (self.best is None
                                                 or judged.relevance > self.best):
                self.best, self.best_needed = judged.relevance, judged.needed
            if judged.admitted:
                self.passed += 1
                parts = {**card.score_parts, "coverage": round(judged.coverage, 6)}
                if judged.relevance is not None:
                    parts["relevance"] = round(judged.relevance, 6)
                out.append(card.model_copy(update={"score_parts": parts}))
        return out

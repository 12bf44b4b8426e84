"""Layered time-window recall (seed 003): search the window the user named, widen it ×factor
around its centre at most `max_expansions` times, and otherwise say "forgot" — never invent.

A memory is in a window when its `when` overlaps it. A candidate in the window is a *hit* when
it shares content words with the query (keyword points ≥ min_score, a CJK bigram or an
English word = 2 points, as in seed 003) or its meaning is very close
(cosine ≥ recipe.time_min_similarity). A query that names only a time ("上周二聊了什么")
has no content words, and then everything in the window is a hit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from chalicelib.domain.dates import window_label
from chalicelib.domain.models import Card
from chalicelib.domain.names import name_like_words
from chalicelib.domain.textproc import query_terms, tokenize
from chalicelib.ports import SearchFilter
from chalicelib.usecases.recall.fusion import Candidate
from chalicelib.usecases.recall.gate import language
from chalicelib.usecases.recall.recipes import RecallRecipe

if TYPE_CHECKING:
    from chalicelib.domain.timeparse import TimeSpan

POINTS_PER_TERM = 2


@dataclass(frozen=True)
class Anchor:
    """The time a recall names: where it came from and the window it resolves to."""

    matched: str
    start: datetime
    end: datetime
    granularity: str
    topic: str  # the query with the time expression removed
    terms: tuple[str, ...] = ()  # the topic's content words (topic_terms), tokenised once

    def terms_without(self, people: Iterable[str]) -> tuple[str, ...]:
        """The topic's words less those of the `people` it is about: they say whose day it
        was, not what happened, and nearly every memory of that day holds them (events are
        retold with names), so a name alone would make any memory of the window a hit."""
        names = {t for person in people for t in query_terms(person)}
        return tuple(t for t in self.terms if t not in names) if names else self.terms


# Verbs that only frame a question about a time ("Where did I go over the May Day holiday?",
# "how did you spend Christmas", "what happened last Tuesday", "what did we talk about on
# Friday"): they name no content, as 过 / 去哪 / 发生 / 聊了 / 说过 do not in Chinese (textproc
# drops those with its particles and frames), and a memory of that day rarely repeats them
# ("回重庆娘家了" for "spend the Spring Festival"). Only the time path drops them: elsewhere
# "go" and "spend" may be all a question has.
TIME_FRAME_VERBS = frozenset(query_terms(
    "go goes going went gone spend spends spending spent happen happens happened happening "
    "talk talks talking talked say says saying said chat chats chatting chatted "
    "mention mentions mentioning mentioned discuss discusses discussing discussed"))


# Chinese phrases that point back at the time just named ("暑假那会儿我在哪", "国庆那几天",
# "搬家那段时间"): the time again, not what happened in it. Left in, 那会儿 made 会儿 (and the
# straddling 假那) the question's only words, which no memory of that summer says.
ZH_TIME_FRAMES = re.compile(r"[那这](?:会儿|会|阵子|阵儿|段时间|段日子|几天|时候|时)|的时候|期间")


def topic_terms(topic: str) -> tuple[str, ...]:
    """The content words of what a query asks about a time, frame verbs left out."""
    return tuple(t for t in query_terms(ZH_TIME_FRAMES.sub(" ", topic))
                 if t not in TIME_FRAME_VERBS)


def anchored(span: TimeSpan, query: str) -> Anchor:
    """The anchor a parsed time names in `query`, its topic tokenised once."""
    topic = strip_span(query, span.matched)
    return Anchor(span.matched, span.start, span.end, span.granularity, topic,
                  topic_terms(topic))


def find_anchor(query: str, time_hint: str | None, now: datetime,
                tz: str | None) -> tuple[Anchor | None, bool]:
    """(anchor, hint_understood). A time_hint wins over a time named in the query."""
    from chalicelib.domain.timeparse import parse_time  # lazily: ~0.05 s of modules to load

    if time_hint:
        span = parse_time(time_hint, now, tz)
        if span is None:
            return None, False
        return anchored(span, query), True
    span = parse_time(query, now, tz)
    if span is None:
        return None, True
    return anchored(span, query), True


def strip_span(query: str, matched: str) -> str:
    return query.replace(matched, " ", 1).strip() if matched else query


def layer_windows(start: datetime, end: datetime, factor: float,
                  expansions: int) -> list[tuple[datetime, datetime]]:
    """Layer 0 is the named window; each later layer is `factor` times longer, same centre."""
    length = end - start
    centre = start + length / 2
    windows = [(start, end)]
    for i in range(1, expansions + 1):
        half = length * (factor**i) / 2
        windows.append((centre - half, centre + half))
    return windows


def keyword_points(terms: list[str], tokens: set[str]) -> int:
    """The points a card's `tokens` (its title and text, tokenized) score for `terms`."""
    return POINTS_PER_TERM * sum(1 for t in terms if t in tokens)


def named_terms(topic: str, terms: Sequence[str]) -> frozenset[str]:
    """The terms that name someone a hook-sized question is about besides its speakers (they
    are out of `terms` there: recall_by_time): "What did Vivi give Kevin for Christmas?" →
    kevin. Names are read from capitals (domain.names.name_like_words): none in Chinese."""
    return frozenset(t for name in name_like_words(topic) for word in name
                     for t in query_terms(word) if t in terms)


def is_hit(card: Card, cand: Candidate, terms: list[str], recipe: RecallRecipe,
           shift: dict[str, float] | None = None, names: frozenset[str] = frozenset()) -> bool:
    """A window's memory is about the question: it holds the question's words, or its meaning
    is `time_min_similarity` close. `shift`: per language, how much lower a card in that
    language sits for this query than one in the query's own (its small talk's cosine minus
    the query's small talk's, recall.gate) — e5 puts any two languages further apart than
    any pair within one, so a memory told in English is judged by the same lift above its
    small talk as a Chinese one, not by a cosine no English line reaches for a Chinese query.
    `names`: the terms that name someone the question is about besides its speakers ("What
    did Vivi give Kevin for Christmas?"): a memory that does not name them is no hit by its
    meaning alone — Vivi's Christmas alone is not what she gave Kevin."""
    if not terms:
        return True
    tokens = set(tokenize(f"{card.title} {card.text}"))
    if keyword_points(terms, tokens) >= recipe.min_score:
        return True
    if names and names.isdisjoint(tokens):
        return False
    floor = recipe.time_min_similarity
    if shift:
        floor += shift.get(language(f"{card.title} {card.text}"), 0.0)
    return cand.parts.get("vector", 0.0) >= floor


def window_filter(base: SearchFilter, start: datetime, end: datetime) -> SearchFilter:
    return SearchFilter(kinds=base.kinds, statuses=base.statuses, start=start.timestamp(),
                        end=end.timestamp(), exclude_ids=base.exclude_ids)


__all__ = ["Anchor", "find_anchor", "is_hit", "layer_windows", "window_filter", "window_label"]

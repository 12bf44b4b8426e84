"""How events link to each other, purely (docs/graph.md): words that say one thing caused or
followed another, words that say a fact was changed, and how much two events (or an event
and a thread) have in common. `chalicelib.usecases.graph` writes what these decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chalicelib.domain.entities import find_mentions, normalise
from chalicelib.domain.models import Event
from chalicelib.domain.textproc import query_terms
from chalicelib.domain.textrules import split_sentences

# ------------------------------------------------------------------ causes and follows

# "so" and "then" alone are too common ("so fun", "back then"): only in the forms that join
# two happenings.
_CAUSE = re.compile(
    r"\bbecause\b|\bdue to\b|\btherefore\b|\bas a result\b|\bthat'?s why\b|[,;]\s*so\b|"
    r"\band so\b|\bso (?:we|i|he|she|they)\b|因为|所以|因此|于是|导致|由于", re.IGNORECASE)
_FOLLOW = re.compile(
    r"\bafter(?:wards?| that)?\b|\blater\b|\bthen\b|\bnext\b|之后|然后|后来|接着|以后|随后",
    re.IGNORECASE)


def sequence_marker(text: str) -> tuple[str, str] | None:
    """("causes" | "follows", the words) when the text says one thing led to or came after
    another; a cause is the stronger claim and wins."""
    for kind, pattern in (("causes", _CAUSE), ("follows", _FOLLOW)):
        m = pattern.search(text)
        if m:
            return kind, m.group(0).strip(" ,;")
    return None


# ------------------------------------------------------------------ changed facts

_CHANGE = re.compile(
    r"\b(?:changed|switched|swapped|moved|rebooked|re-booked|replaced|cancell?ed|instead|"
    r"no longer|not (?:going|staying) (?:to|at)|changed our mind)\b|"
    r"换了|换成|改成|改为|改订|改到|改住|取消了|不去了|不住了|退掉|退了", re.IGNORECASE)
REPLACE_MIN_SHARED_WORDS = 2  # plus a shared named thing: "hotel" alone is not the booking


def change_sentence(text: str) -> str | None:
    """The sentence that says a fact changed ("we changed the hotel …"), if any."""
    for sentence in split_sentences(text):
        if _CHANGE.search(sentence):
            return sentence
    return None


def named(text: str, people: Sequence[str] = ()) -> set[str]:
    """Normalised names of the non-person entities the text names."""
    return {normalise(m.name) for m in find_mentions(text, people=people)
            if m.kind != "person"}


def keywords(text: str, drop: Iterable[str] = ()) -> set[str]:
    """Content words (stemmed English words, Chinese bigrams) without the names in `drop`."""
    dropped = {t for name in drop for t in query_terms(name)}
    return set(query_terms(text)) - dropped


@dataclass(frozen=True)
class Replacement:
    new: Event
    old: Event
    note: str


def replacement(new: Event, earlier: Sequence[Event]) -> Replacement | None:
    """The earlier event a changed fact replaces: `new` says it changed something (changed,
    switched, cancelled, 换成, 改订 …) and one earlier event shares a named place or thing and
    at least REPLACE_MIN_SHARED_WORDS words with that sentence; the one sharing most (then
    the latest) wins. `earlier` is oldest first. People never count: they are in everything."""
    sentence = change_sentence(new.summary)
    if sentence is None:
        return None
    people = new.participants
    names = named(new.summary, people)
    words = keywords(sentence, people)
    best: tuple[int, int] | None = None
    chosen: Event | None = None
    for i, old in enumerate(earlier):
        if old.id == new.id or old.status != "active" or old.kind == "summary":
            continue
        if not names & named(old.summary, old.participants):
            continue
        shared = len(words & keywords(old.summary, old.participants))
        if shared >= REPLACE_MIN_SHARED_WORDS and (best is None or (shared, i) > best):
            best, chosen = (shared, i), old
    if chosen is None:
        return None
    return Replacement(new, chosen, f"changed: {sentence[:120]}")


# ------------------------------------------------------------------ overlap (threads)

# A new event joins a thread when it shares at least one named thing (a place, a work, a pet
# — never a person: speakers are in every event) and its score reaches LINK_SCORE: two points
# per shared named thing, one per other shared word. One named thing plus one word ("Kyoto" +
# "hotel", "京都" + "旅行") is an arc; a name alone is not (a brother who lives in Kyoto and a
# trip to Kyoto are two stories), and words alone link everything to everything.
LINK_SCORE = 3
MIN_SHARED_NAMES = 1
NAME_WEIGHT = 2


def overlap(names_a: set[str], words_a: set[str], names_b: set[str],
            words_b: set[str]) -> int:
    """The link score of two sets of (named things, words); 0 below MIN_SHARED_NAMES."""
    shared_names = names_a & names_b
    if len(shared_names) < MIN_SHARED_NAMES:
        return 0
    return NAME_WEIGHT * len(shared_names) + len(words_a & words_b)

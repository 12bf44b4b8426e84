"""Reranking loaded cards: query understanding that needs the memories themselves.

Names: a query that names exactly one of the people in the candidate memories ("What did
Caroline research?") is about that person's own memories, so theirs are lifted.
"""

from __future__ import annotations

from ..models import Card
from .fusion import Candidate
from .recipes import RecallRecipe

Pair = tuple[Card, Candidate]


def boost_named(pairs: list[Pair], named: set[str], boost: float) -> list[Pair]:
    if boost <= 0 or len(named) != 1:
        return pairs
    for card, _ in pairs:
        if card.speaker in named:
            card.score *= 1 + boost
            card.score_parts["name_boost"] = boost
    return pairs


def prefer_events(cards: list[Card]) -> list[Card]:
    """Where a raw message and an event distilled from it are both candidates, show the event
    at the better of the two places: it is shorter, names the speaker and carries the date
    the message meant (昨天 → the day before), while citing the same evidence."""
    best_event: dict[tuple[str, int], Card] = {}
    for card in cards:  # best first, so the first event per turn is its best
        if card.kind == "event":
            for s in card.sources:
                for seq in range(s.seq_start, s.seq_end + 1):
                    best_event.setdefault((s.session, seq), card)
    out: list[Card] = []
    used: set[str] = set()
    for card in cards:
        if card.kind == "message" and len(card.sources) == 1:
            s = card.sources[0]
            event = best_event.get((s.session, s.seq_start))
            if event is not None:
                card = event.model_copy(update={"score": max(event.score, card.score)})
        if card.ref not in used:
            used.add(card.ref)
            out.append(card)
    return out


def rerank(pairs: list[Pair], named: set[str], recipe: RecallRecipe) -> list[Card]:
    pairs = boost_named(pairs, named, recipe.name_boost)
    cards = [card for card, _ in sorted(pairs, key=lambda p: (-p[0].score, p[0].ref))]
    return prefer_events(cards) if recipe.prefer_events else cards

"""Reranking loaded cards: query understanding that needs the memories themselves.

Names: a query that names exactly one of the people in the candidate memories ("What did
Caroline research?") is about that person's own memories, so theirs are lifted.
Who spoke: the AI's own turns go behind the user's (recipe.character_weight).
"""

from __future__ import annotations

from chalicelib.domain.models import Card
from chalicelib.domain.textproc import tokenize
from chalicelib.domain.textrules import wholly_out_of_character
from chalicelib.usecases.recall.fusion import Candidate
from chalicelib.usecases.recall.recipes import RecallRecipe

Pair = tuple[Card, Candidate]


def boost_named(pairs: list[Pair], named: set[str], boost: float) -> list[Pair]:
    if boost <= 0 or len(named) != 1:
        return pairs
    for card, _ in pairs:
        if card.speaker in named:
            card.score *= 1 + boost
            card.score_parts["name_boost"] = boost
    return pairs


def ai_line(card: Card, named: set[str]) -> bool:
    """The AI's own turn (role "assistant") whose speaker the query does not name."""
    return card.kind == "message" and card.role == "assistant" and card.speaker not in named


def behind_the_user(pairs: list[Pair], named: set[str], weight: float) -> list[Pair]:
    """The AI's own turns (role "assistant") weigh `weight` of their score, unless the query
    names their speaker: what a companion says back is seldom what the user asks about."""
    if weight >= 1:
        return pairs
    for card, _ in pairs:
        if ai_line(card, named):
            card.score *= weight
            card.score_parts["character"] = weight
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


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def diversify(cards: list[Card], weight: float, duplicate: float) -> list[Card]:
    """Maximal marginal relevance over word overlap: each next card is the best by
    score − weight × (its largest overlap with a card already chosen) × top score; a card
    overlapping a chosen one by `duplicate` or more is a near-duplicate and dropped."""
    if not cards or (weight <= 0 and duplicate >= 1):
        return cards
    tokens = {c.ref: set(tokenize(c.text)) for c in cards}
    scale = max(c.score for c in cards) or 1.0
    left, chosen = list(cards), []
    while left:
        def marginal(card: Card) -> float:
            overlap = max((jaccard(tokens[card.ref], tokens[c.ref]) for c in chosen), default=0.0)
            return card.score - weight * overlap * scale
        best = max(left, key=marginal)
        left.remove(best)
        if any(jaccard(tokens[best.ref], tokens[c.ref]) >= duplicate for c in chosen):
            continue
        chosen.append(best)
    return chosen


def user_told(cards: list[Card], named: set[str]) -> list[Card]:
    """A hook's cards for a question about someone (`named`: "我", "I", a name) without the
    AI's own old lines ("What is the name of 小满's dog?" — "阿澈: 土豆！好可爱的名字。"): a
    person's life is told by their turns and the events made of them, not by what the
    character said back, and a hook has two slots (issue 36). The AI's line stays when the
    question names its speaker, or no one ("奶糖的疫苗打完了吗？": an assistant may have done
    it). Applied after the gate, which reads them among the space's words."""
    return [c for c in cards if not ai_line(c, named)] if named else cards


def in_character(cards: list[Card], named: set[str]) -> list[Card]:
    """A hook's cards for a question that names someone (`named`: by name, not "我" or "I")
    without the player's asides out of character ("(ooc: brb, doorbell)", "（ooc：下周三我要
    出差去深圳）"): in a role-play the player speaks of their own week there, not of the
    persona the question names ("Jess 在火星上是做什么工作的？" was answered with "(ooc:
    aaand that's where I'll stop tonight…)"), and a hook has two slots (issue 36). A
    question in the first person may ask about the player's week ("上周六我说出差到底是哪天
    走？"): the asides stay for it, as for a wider recall."""
    return [c for c in cards if not wholly_out_of_character(c.text)] if named else cards


def latest_first(pairs: list[Pair], weight: float) -> list[Pair]:
    """A question about now: each card's score × (1 + weight × how late it was told among the
    candidates — its place among their dates, 0 for the earliest, 1 for the latest; a place,
    not a distance, so one memory of years ago does not make all the rest "late") — the
    latest telling of a thing answers "where do I work now?", not the first."""
    dated = sorted({card.when.start for card, _ in pairs if card.when is not None})
    if weight <= 0 or len(dated) < 2:
        return pairs
    place = {start: i / (len(dated) - 1) for i, start in enumerate(dated)}
    for card, _ in pairs:
        if card.when is not None:
            late = place[card.when.start]
            card.score *= 1 + weight * late
            card.score_parts["now"] = round(late, 3)
    return pairs


def rerank(pairs: list[Pair], named: set[str], recipe: RecallRecipe,
           now: bool = False) -> list[Card]:
    """`now`: the query asks how things are now (query.asks_about_now)."""
    pairs = boost_named(pairs, named, recipe.name_boost)
    pairs = behind_the_user(pairs, named, recipe.character_weight)
    if now:
        pairs = latest_first(pairs, recipe.now_recency)
    cards = [card for card, _ in sorted(pairs, key=lambda p: (-p[0].score, p[0].ref))]
    if recipe.prefer_events:
        cards = prefer_events(cards)
    return diversify(cards, recipe.diversity, recipe.duplicate_overlap)

"""Answers inherit their question's match.

In chat the topic of an answer is often only in the question it answers: "What concert was
it?" — "It was Matt Patterson, he is so talented!". A search for the concerts someone saw
finds the question and misses the answer. So a hit that asks something passes a share of
its score to the turn right after it, said by somebody else (LoCoMo: most evidence turns
that no search found at depth 50 answer a question the search did find; bench/README.md,
"Answers inherit their question's match").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from chalicelib.domain.models import Card, Message
from chalicelib.domain.refs import MessageRef, parse_ref
from chalicelib.domain.textrules import is_question, split_sentences
from chalicelib.ports import Hit, Services


def asks(text: str) -> bool:
    """Whether any sentence of a turn is a question ("…? The event was great." asks)."""
    return any(is_question(s) for s in split_sentences(text))


def asking(text: str) -> str:
    """The sentences of a turn that ask: a character's turn narrates around its question
    ("*raises an eyebrow* We run spin gravity ninety percent of the time. And the cat —
    what's its name?"), and only the question is what the next turn answers."""
    return " ".join(s for s in split_sentences(text) if is_question(s))


def load_hits(services: Services, space: str, refs: Iterable[str]) -> list[Message]:
    """The messages among hit refs, in one read (events are skipped)."""
    keys = [(r.session, r.seq) for r in map(parse_ref, dict.fromkeys(refs))
            if isinstance(r, MessageRef)]
    return services.store.load_messages(space, keys) if keys else []


def answers_to(services: Services, space: str, messages: Iterable[Message],
               by: Collection[str] | None = None) -> dict[str, str]:
    """question ref → ref of the turn right after it, for the messages that ask something,
    when that turn is somebody else's (and, given `by`, one of theirs)."""
    asking = {(m.session, m.seq + 1): m for m in messages if asks(m.content)}
    if not asking:
        return {}
    out = {}
    for reply in services.store.load_messages(space, list(asking)):
        question = asking[(reply.session, reply.seq)]
        if reply.speaker != question.speaker and (by is None or reply.speaker in by):
            out[question.ref] = reply.ref
    return out


def inherit(hits: list[Hit], keep: Collection[str], answers: dict[str, str],
            weight: float, question_keeps: float = 1.0) -> list[Hit]:
    """The hits in `keep`, and the answer to each question hit scored `weight` of the way
    from the list's lowest score up to its question's (a share of a distance, so it means
    the same for BM25 scores and cosines); the question itself `question_keeps` of its way;
    best first, each ref once at its best score."""
    if not answers or not hits or weight <= 0:
        return [h for h in hits if h.id in keep]
    low = hits[-1].score
    best: dict[str, float] = {}

    def offer(ref: str, score: float) -> None:
        if score > best.get(ref, float("-inf")):
            best[ref] = score

    for hit in hits:
        if hit.id in keep:
            kept = question_keeps if hit.id in answers else 1.0
            offer(hit.id, low + kept * (hit.score - low))
        if hit.id in answers:
            offer(answers[hit.id], low + weight * (hit.score - low))
    return [Hit(ref, score) for ref, score in sorted(best.items(), key=lambda x: -x[1])]


def with_answers(services: Services, space: str,
                 lists: dict[str, tuple[list[Hit], float]],
                 weight: float, question_keeps: float = 1.0
                 ) -> dict[str, tuple[list[Hit], float]]:
    """Every hit list with the answers to its question hits joined (recipe.answers)."""
    if weight <= 0:
        return lists
    loaded = load_hits(services, space, (h.id for hits, _ in lists.values() for h in hits))
    answers = answers_to(services, space, loaded)
    if not answers:
        return lists
    return {name: (inherit(hits, {h.id for h in hits}, answers, weight, question_keeps), w)
            for name, (hits, w) in lists.items()}


def questions_answered(services: Services, space: str, cards: Iterable[Card]) -> dict[str, str]:
    """card ref → the questions its turns answer: for each turn a card cites, the turn right
    before it when the AI character said it and it asks ("孩子多大啦？" before "女儿，叫朵朵，五
    岁"; "And the cat — what's its name?" before "Sprocket. Three legs, one ear"). An answer
    often holds none of its topic's words, which its question holds (the gate reads them with
    it: gate.Gate.asked). The character's turns are never memories of their own (no event
    cites one), so their words reach a card only so; a person's question is a turn recall
    finds itself (LoCoMo, two people: their questions read so let 1.4 % more of the foreign
    questions through the gate). One read for all the cards."""
    cited = {card.ref: [(s.session, q) for s in card.sources
                        for q in range(s.seq_start, s.seq_end + 1)] for card in cards}
    turns = {key for keys in cited.values() for key in keys}
    if not turns:
        return {}
    before = {(session, seq - 1) for session, seq in turns if seq > 0}
    loaded = {(m.session, m.seq): m
              for m in services.store.load_messages(space, sorted(turns | before))}
    out: dict[str, str] = {}
    for ref, keys in cited.items():
        asked = [asking(question.content) for session, seq in keys
                 if (turn := loaded.get((session, seq))) is not None
                 and (question := loaded.get((session, seq - 1))) is not None
                 and question.role == "assistant" and turn.role != "assistant"
                 and (session, seq - 1) not in keys and asks(question.content)]
        if asked:
            out[ref] = services.clean(" ".join(dict.fromkeys(asked)))
    return out

"""Turning index hits back into cards the caller can read."""

from __future__ import annotations

from datetime import timedelta

from chalicelib.domain.models import Card, Event, Message, Source, When
from chalicelib.ports import Store
from chalicelib.usecases.recall.fusion import Candidate


def parse_ref(ref: str) -> tuple[str, ...]:
    kind, _, rest = ref.partition(":")
    if kind == "event" and rest:
        return ("event", rest)
    if kind == "message":
        session, _, seq = rest.rpartition(":")
        if session and seq.lstrip("-").isdigit():
            return ("message", session, seq)
    raise ValueError(f"not a memory ref: {ref!r}")


def event_card(event: Event, cand: Candidate) -> Card:
    return Card(ref=event.ref, kind="event", title=event.title, text=event.summary,
                when=event.when, sources=event.sources, importance=event.importance,
                speaker=event.participants[0] if event.participants else None,
                score=cand.score, score_parts=cand.parts)


def message_card(msg: Message, cand: Candidate) -> Card:
    when = When(start=msg.at, end=msg.at + timedelta(minutes=1), granularity="minute")
    return Card(ref=msg.ref, kind="message", title=f"{msg.speaker} · {msg.at:%Y-%m-%d %H:%M}",
                text=f"{msg.speaker}: {msg.content}", when=when,
                sources=[Source(session=msg.session, seq_start=msg.seq, seq_end=msg.seq,
                                preview=msg.content[:80])],
                speaker=msg.speaker, score=cand.score, score_parts=cand.parts)


def load_card(store: Store, space: str, cand: Candidate) -> Card | None:
    """The card for a candidate, or None when the memory is gone or no longer active
    (an index may lag the store; the store is the truth)."""
    parsed = parse_ref(cand.ref)
    if parsed[0] == "event":
        event = store.get_event(space, parsed[1])
        if event is None or event.status != "active":
            return None
        return event_card(event, cand)
    msg = store.get_message(space, parsed[1], int(parsed[2]))
    return message_card(msg, cand) if msg else None

"""Turning index hits back into cards the caller can read, with one store read per kind."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from chalicelib.domain.models import Card, Event, Message, Source, When
from chalicelib.domain.refs import EventRef, MessageRef, parse_ref
from chalicelib.ports import Store
from chalicelib.usecases.recall.fusion import Candidate


def event_card(event: Event, cand: Candidate) -> Card:
    return Card(ref=event.ref, kind="event", title=event.title, text=event.summary,
                when=event.when, sources=event.sources, importance=event.importance,
                speaker=event.participants[0] if event.participants else None,
                tags=event.tags, score=cand.score, score_parts=cand.parts)


def message_card(msg: Message, cand: Candidate) -> Card:
    when = When(start=msg.at, end=msg.at + timedelta(minutes=1), granularity="minute")
    speaker = " ".join(msg.speaker.split()) or msg.role  # one line, even if stored with breaks
    return Card(ref=msg.ref, kind="message", title=f"{speaker} · {msg.at:%Y-%m-%d %H:%M}",
                text=f"{speaker}: {msg.content}", when=when,
                sources=[Source(session=msg.session, seq_start=msg.seq, seq_end=msg.seq,
                                preview=msg.content[:80])],
                speaker=msg.speaker, score=cand.score, score_parts=cand.parts)


def load_cards(store: Store, space: str,
               candidates: Sequence[Candidate]) -> list[tuple[Card, Candidate]]:
    """Cards for the candidates, in their order, from two batch reads (events, messages).
    A memory that is gone or no longer active is skipped: an index may lag the store, and
    the store is the truth."""
    refs = {c.ref: parse_ref(c.ref) for c in candidates}
    event_ids = [r.id for r in refs.values() if isinstance(r, EventRef)]
    message_keys = [(r.session, r.seq) for r in refs.values() if isinstance(r, MessageRef)]
    events = {e.id: e for e in store.load_events(space, event_ids) if e.status == "active"}
    messages = {(m.session, m.seq): m for m in store.load_messages(space, message_keys)}
    pairs = []
    for cand in candidates:
        ref = refs[cand.ref]
        try:
            if isinstance(ref, EventRef):
                if ref.id in events:
                    pairs.append((event_card(events[ref.id], cand), cand))
            elif (ref.session, ref.seq) in messages:
                pairs.append((message_card(messages[(ref.session, ref.seq)], cand), cand))
        except (ValueError, OverflowError):  # stored before times were range-checked
            continue
    return pairs

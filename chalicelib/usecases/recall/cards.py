"""Turning index hits back into cards the caller can read, with one store read per kind.

A card's text is what a model reads (the context, a hook's additional_context, MCP's
recall_memory), so it is the stored text cleaned (chalicelib.domain.cleaning, `services.clean`:
no <think> block, no status panel); the stored message stays as it was, as evidence."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta

from chalicelib.domain.models import Card, Event, Message, Source, When
from chalicelib.domain.refs import EventRef, MessageRef, parse_ref
from chalicelib.domain.textrules import is_question, split_sentences
from chalicelib.ports import Store
from chalicelib.usecases.events import hidden_turns
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
                speaker=msg.speaker, role=msg.role, score=cand.score, score_parts=cand.parts)


def cleaned_event(event: Event, clean: Callable[[str], str]) -> Event:
    title, summary = clean(event.title) or event.title, clean(event.summary) or event.summary
    if (title, summary) == (event.title, event.summary):
        return event
    return event.model_copy(update={"title": title, "summary": summary})


def cleaned_message(msg: Message, clean: Callable[[str], str]) -> Message | None:
    """The message as a model may read it; None when nothing but machinery is left."""
    content = clean(msg.content)
    if content == msg.content:
        return msg
    return msg.model_copy(update={"content": content}) if content else None


def only_asks(text: str) -> bool:
    """A turn that does nothing but ask ("那新工作什么时候开始？", "How did it go?") holds the
    topic's words and none of its information: it is context for its answer (which inherits
    its match: recall.answers), never a card of its own, whoever asked it."""
    sentences = split_sentences(text)
    return bool(sentences) and all(is_question(s) for s in sentences)


def load_cards(store: Store, space: str, candidates: Sequence[Candidate],
               clean: Callable[[str], str] | None = None) -> list[tuple[Card, Candidate]]:
    """Cards for the candidates, in their order, from two batch reads (events, messages).
    A memory that is gone or no longer active is skipped: an index may lag the store, and
    the store is the truth. A turn an event archived by hand cites is no card either
    (events.hidden_turns): what the user archived stays out. With `clean`, card texts are
    cleaned, and a message holding nothing else (a reply that was all reasoning) is no card."""
    refs = {c.ref: parse_ref(c.ref) for c in candidates}
    event_ids = [r.id for r in refs.values() if isinstance(r, EventRef)]
    message_keys = [(r.session, r.seq) for r in refs.values() if isinstance(r, MessageRef)]
    events = {e.id: e for e in store.load_events(space, event_ids) if e.status == "active"}
    hidden = hidden_turns(store, space) if message_keys else frozenset()
    messages = {(m.session, m.seq): m for m in store.load_messages(space, message_keys)
                if m.ref not in hidden}
    pairs = []
    for cand in candidates:
        ref = refs[cand.ref]
        try:
            if isinstance(ref, EventRef):
                if ref.id in events:
                    event = events[ref.id]
                    pairs.append((event_card(cleaned_event(event, clean) if clean else event,
                                             cand), cand))
            elif (ref.session, ref.seq) in messages:
                msg = messages[(ref.session, ref.seq)]
                shown = cleaned_message(msg, clean) if clean else msg
                if shown is not None and not only_asks(shown.content):
                    pairs.append((message_card(shown, cand), cand))
        except (ValueError, OverflowError):  # stored before times were range-checked
            continue
    return pairs


def found_sources_first(cards: Sequence[Card], candidates: Sequence[Candidate]) -> list[Card]:
    """Each card's sources with the messages this recall found for the query itself first
    (in the order it ranked them), the others after in conversation order. An event cites
    every turn it was told in ("一只橘猫…" and "去年十二月领养的" two turns apart); which of
    them answers depends on the question, and a reader — or a client that shows a card's
    first source — should meet that one first. Nothing is dropped or added."""
    found: dict[tuple[str, int], int] = {}
    for rank, cand in enumerate(candidates):
        if isinstance(ref := parse_ref(cand.ref), MessageRef):
            found.setdefault((ref.session, ref.seq), rank)
    if not found:
        return list(cards)
    return [_sources_ordered(card, found) for card in cards]


def _sources_ordered(card: Card, found: dict[tuple[str, int], int]) -> Card:
    if len(card.sources) < 2:
        return card
    miss = max(found.values()) + 1  # after every turn found

    def first_found(source: Source) -> int:
        return min((found.get((source.session, seq), miss)
                    for seq in range(source.seq_start, source.seq_end + 1)), default=miss)

    ordered = sorted(card.sources, key=first_found)  # stable: ties keep conversation order
    return card if ordered == card.sources else card.model_copy(update={"sources": ordered})

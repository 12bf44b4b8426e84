"""What each memory looks like to the search indexes, and keeping them in step with the store."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.domain.models import Event, IndexDoc, Message
from chalicelib.wiring import Services


def message_text(msg: Message) -> str:
    """Speaker and day are part of the searchable text: people ask "what did Mel say in May"."""
    return f"{msg.speaker}: {msg.content}"


def event_text(event: Event) -> str:
    names = " ".join(p for p in event.participants if p not in event.summary)
    return " ".join(part for part in (event.title + ".", event.summary, names) if part)


def message_doc(msg: Message) -> IndexDoc:
    ts = msg.at.timestamp()
    return IndexDoc(id=msg.ref, space=msg.space, kind="message", text=message_text(msg),
                    start=ts, end=ts + 1)


CONTEXT_CHARS = 300


def message_docs(services: Services, messages: Sequence[Message]) -> list[IndexDoc]:
    """Message docs whose embedding also reads the other party's turn just before: a reply
    ("Researching adoption agencies") means what it answers ("Any plans for the summer?"). Keywords stay on
    the message's own words, so a card is never found for text it does not contain."""
    by_key = {(m.session, m.seq): m for m in messages}
    docs = []
    for msg in messages:
        prev = by_key.get((msg.session, msg.seq - 1))
        if prev is None and msg.seq > 0:
            prev = services.store.get_message(msg.space, msg.session, msg.seq - 1)
        docs.append(with_context(message_doc(msg), msg, prev))
    return docs


def with_context(doc: IndexDoc, msg: Message | None, prev: Message | None) -> IndexDoc:
    """Only the other party's turn explains a reply; a speaker's own previous message is
    usually a different topic and would lend this one meaning it does not have."""
    if msg is None or prev is None or prev.speaker == msg.speaker:
        return doc
    context = f"{prev.speaker}: {prev.content[:CONTEXT_CHARS]}"
    return doc.model_copy(update={"embed_text": f"{context}\n{doc.text}"})


def event_docs(services: Services, events: Sequence[Event]) -> list[IndexDoc]:
    """Event docs; an event's embedding reads the turn its message answered, as messages do
    (measured on LoCoMo: R@10 0.773 → 0.789)."""
    docs = []
    for event in events:
        doc = event_doc(event)
        if event.sources:
            first = event.sources[0]
            msg = services.store.get_message(event.space, first.session, first.seq_start)
            prev = (services.store.get_message(event.space, first.session, first.seq_start - 1)
                    if first.seq_start > 0 else None)
            doc = with_context(doc, msg, prev)
        docs.append(doc)
    return docs


def event_doc(event: Event) -> IndexDoc:
    return IndexDoc(id=event.ref, space=event.space, kind="event", text=event_text(event),
                    start=event.when.start.timestamp(), end=event.when.end.timestamp(),
                    status=event.status, importance=event.importance)


def embed_docs(services: Services, docs: Sequence[IndexDoc]) -> list[IndexDoc]:
    """Embed first, write later: if the embedder fails nothing has been written yet."""
    vectors = services.embedder.embed_passages([d.embed_text or d.text for d in docs])
    return [d.model_copy(update={"vector": v.tolist()}) for d, v in zip(docs, vectors, strict=True)]


def prepare_docs(services: Services, docs: Sequence[IndexDoc]) -> list[IndexDoc]:
    """Embedded docs ready to write inline, or none when the stream handler indexes (AWS)."""
    return embed_docs(services, docs) if services.index_inline and docs else []


def write_docs(services: Services, docs: Sequence[IndexDoc]) -> None:
    if not docs or not services.index_inline:
        return
    services.keywords.upsert(docs)
    if services.vectors is not services.keywords:  # OpenSearch holds both in one document
        services.vectors.upsert(docs)


def index_messages(services: Services, messages: Sequence[Message]) -> None:
    if services.index_inline:  # else the stream handler indexes (and reads context) later
        write_docs(services, prepare_docs(services, message_docs(services, messages)))


def index_events(services: Services, events: Sequence[Event]) -> None:
    if services.index_inline:
        write_docs(services, prepare_docs(services, event_docs(services, events)))


def unindex(services: Services, space: str, refs: Sequence[str]) -> None:
    if refs and services.index_inline:
        services.keywords.delete(space, refs)
        if services.vectors is not services.keywords:
            services.vectors.delete(space, refs)

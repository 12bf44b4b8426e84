"""Ingest: messages are evidence. They are stored verbatim, idempotently by (space, session, seq)."""

from __future__ import annotations

from chalicelib.domain.errors import NotFound
from chalicelib.domain.models import Message, PutMessagesRequest, PutMessagesResponse
from chalicelib.ports import UpsertOutcome
from chalicelib.usecases.indexing import message_docs, prepare_docs, unindex, write_docs
from chalicelib.usecases.people import remember_people
from chalicelib.wiring import Services


def put_messages(services: Services, space: str, session: str,
                 request: PutMessagesRequest) -> PutMessagesResponse:
    """Upsert by seq. Same content hash → unchanged; a different hash → changed, which marks the
    session dirty from that seq so the derived events get re-extracted (history safety)."""
    messages = [Message.from_input(space, session, m) for m in request.messages]
    if services.message_indexer is not None:  # the outbox trigger queues the indexing
        outcome = services.store.upsert_messages(space, session, messages, services.clock())
        services.message_indexer.notify()
    else:
        outcome = put_and_index(services, space, session, messages)
    remember_people(services, space, {m.speaker for m in messages if m.role != "system"})
    if outcome.accepted or outcome.changed:
        notify_extraction(services, space, session)
    return PutMessagesResponse(
        accepted=len(outcome.accepted), unchanged=len(outcome.unchanged),
        changed=len(outcome.changed),
        seqs={"accepted": outcome.accepted, "unchanged": outcome.unchanged,
              "changed": outcome.changed},
    )


def put_and_index(services: Services, space: str, session: str,
                  messages: list[Message]) -> UpsertOutcome:
    """Upsert and index in the request (AWS defers indexing to the stream instead)."""
    if not services.index_inline:
        return services.store.upsert_messages(space, session, messages, services.clock())
    seqs = [m.seq for m in messages]
    stored = {m.seq: m.content_hash
              for m in services.store.get_messages(space, session, min(seqs), max(seqs))}
    fresh = [m for m in messages if stored.get(m.seq) != m.content_hash]
    # Embed before writing anything: an embedder failure must leave no half-ingested batch.
    docs = {d.id: d for d in prepare_docs(services, message_docs(services, fresh))}
    outcome = services.store.upsert_messages(space, session, messages, services.clock())
    written = set(outcome.accepted) | set(outcome.changed)
    write_docs(services, [docs[m.ref] for m in messages if m.seq in written and m.ref in docs])
    return outcome


def delete_message(services: Services, space: str, session: str, seq: int) -> Message:
    deleted = services.store.delete_message(space, session, seq, services.clock())
    if deleted is None:
        raise NotFound(f"no message {seq} in session {session!r} of space {space!r}")
    unindex(services, space, [deleted.ref])
    notify_extraction(services, space, session)
    return deleted


def notify_extraction(services: Services, space: str, session: str) -> None:
    """AWS: ask the extraction worker to look at this session once the quiet window may have
    passed (the scheduled sweep catches anything this check finds not ready yet)."""
    if services.queue is not None:
        services.queue.send({"kind": "check-session", "space": space, "session": session},
                            delay_seconds=services.settings.extract_delay_seconds)

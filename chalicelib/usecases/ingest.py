"""Ingest: messages are evidence. They are stored verbatim, idempotently by (space, session, seq);
how they then reach the search indexes is the IndexWriter's business (chalicelib.wiring)."""

from __future__ import annotations

from chalicelib.domain.errors import NotFound
from chalicelib.domain.models import Message, PutMessagesRequest, PutMessagesResponse
from chalicelib.ports import Services
from chalicelib.usecases.people import learn_user_names, remember_people


def put_messages(services: Services, space: str, session: str,
                 request: PutMessagesRequest) -> PutMessagesResponse:
    """Upsert by seq. Same content hash → unchanged; a different hash → changed, which marks the
    session dirty from that seq so the derived events get re-extracted (history safety)."""
    messages = [Message.from_input(space, session, m) for m in request.messages]
    outcome = services.index.put_messages(space, session, messages, services.clock())
    remember_people(services, space, {m.speaker for m in messages if m.role != "system"},
                    {m.speaker for m in messages if m.role == "user"})
    learn_user_names(services, space, messages)  # "我叫阿梅", said as "user"
    if outcome.accepted or outcome.changed:
        notify_extraction(services, space, session)
    return PutMessagesResponse(
        accepted=len(outcome.accepted), unchanged=len(outcome.unchanged),
        changed=len(outcome.changed),
        seqs={"accepted": outcome.accepted, "unchanged": outcome.unchanged,
              "changed": outcome.changed},
    )


def delete_message(services: Services, space: str, session: str, seq: int) -> Message:
    deleted = services.store.delete_message(space, session, seq, services.clock())
    if deleted is None:
        raise NotFound(f"no message {seq} in session {session!r} of space {space!r}")
    services.index.remove(space, [deleted.ref])
    notify_extraction(services, space, session)
    return deleted


def notify_extraction(services: Services, space: str, session: str) -> None:
    """AWS: ask the extraction worker to look at this session once the quiet window may have
    passed (the scheduled sweep catches anything this check finds not ready yet)."""
    if services.queue is not None:
        services.queue.send({"kind": "check-session", "space": space, "session": session},
                            delay_seconds=services.settings.extract_delay_seconds)

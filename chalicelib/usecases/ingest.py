"""Ingest: messages are evidence. They are stored verbatim, idempotently by (space, session, seq);
how they then reach the search indexes is the IndexWriter's business (chalicelib.wiring)."""

from __future__ import annotations

from chalicelib.domain.errors import BadRequest, NotFound
from chalicelib.domain.models import (
    MAX_SEQ,
    Message,
    MessageList,
    PutMessagesRequest,
    PutMessagesResponse,
)
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


WHOLE_REST = 1 << 16  # a seq span this wide is read to the end at once


def list_messages(services: Services, space: str, session: str, limit: int = 50,
                  cursor: str | None = None) -> MessageList:
    """A page of the session's messages in seq order, as stored (the gateway's turns too);
    `next_cursor` (the seq to go on from) fetches the next. The store reads a seq range, not a
    count, so the page is read in spans growing eightfold from `limit` + 1 seqs: one read
    where seqs run on (0, 1, 2 …), a few where they are sparse, the rest at once past
    WHOLE_REST."""
    if services.store.get_session(space, session) is None:
        raise NotFound(f"no session {session!r} in space {space!r}", code="unknown_session")
    lo = _cursor_seq(cursor)
    found: list[Message] = []
    span = limit + 1
    while len(found) <= limit and lo <= MAX_SEQ:
        hi = None if span >= WHOLE_REST else min(lo + span - 1, MAX_SEQ)
        found += services.store.get_messages(space, session, lo, hi)
        if hi is None:
            break
        lo, span = hi + 1, span * 8
    page = found[:limit]
    more = len(found) > limit
    return MessageList(messages=page, next_cursor=str(page[-1].seq + 1) if more else None)


def _cursor_seq(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 17 or int(cursor) > MAX_SEQ + 1:
        raise BadRequest("cursor must be the next_cursor of a page before",
                         code="invalid_cursor")
    return int(cursor)


def notify_extraction(services: Services, space: str, session: str) -> None:
    """AWS: ask the extraction worker to look at this session once the quiet window may have
    passed (the scheduled sweep catches anything this check finds not ready yet)."""
    if services.queue is not None:
        services.queue.send({"kind": "check-session", "space": space, "session": session},
                            delay_seconds=services.settings.extract_delay_seconds)

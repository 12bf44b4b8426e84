"""Extraction use-case: pending messages of a session → dated events that cite them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from chalicelib.domain.models import Event, EventDraft, Message, SessionState
from chalicelib.domain.records import JournalBatch
from chalicelib.ports import ExtractionContext, Services, iter_events
from chalicelib.usecases.extract import journal

CONTEXT_MESSAGES = 6


def pending_sessions(services: Services, space: str | None = None) -> list[SessionState]:
    return [
        s for s in services.store.list_sessions(space)
        if s.dirty_from is not None or s.pending_since is not None
    ]


def event_id(space: str, draft: EventDraft, ordinal: int, evidence: Sequence[Message]) -> str:
    """Deterministic: re-running extraction over the same evidence yields the same ids, so a
    retried job (or a duplicate queue delivery) cannot create the same memory twice."""
    h = hashlib.sha256()
    for part in (space, str(ordinal), draft.summary, *(m.content_hash for m in evidence)):
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return "ev_" + h.hexdigest()[:20]


def extract_session(services: Services, space: str, session: str,
                    now: datetime | None = None) -> list[Event]:
    """Extract one session's pending (or dirty) messages. Returns the events written."""
    store = services.store
    state = store.get_session(space, session)
    if state is None:
        return []
    now = now or services.clock()
    batch = journal.start_batch(space, session, now)
    start = state.extracted_upto + 1
    if state.dirty_from is not None:
        start = min(start, state.dirty_from)
        rolled = supersede_from(services, space, session, state.dirty_from, now)
        batch.superseded = [(e.id, e.version) for e in rolled]  # versions before
    messages = store.get_messages(space, session, seq_from=start)
    if not messages:
        store.mark_extracted(space, session, state.extracted_upto)
        journal.record(services, space, session, batch)
        return []
    earlier = store.get_messages(space, session, seq_from=max(0, start - CONTEXT_MESSAGES),
                                 seq_to=start - 1)
    ctx = ExtractionContext(space=space, session=session, earlier=earlier)
    drafts = services.extractor.extract(messages, ctx)
    events = save_drafts(services, space, drafts, messages, now, batch)
    services.index.index_events(events)
    store.mark_extracted(space, session, max(m.seq for m in messages))
    journal.record(services, space, session, batch)
    return events


def save_drafts(services: Services, space: str, drafts: Sequence[EventDraft],
                messages: Sequence[Message], now: datetime,
                batch: JournalBatch | None = None) -> list[Event]:
    by_seq = {(m.session, m.seq): m for m in messages}
    saved: list[Event] = []
    per_source: dict[tuple, int] = {}
    for draft in drafts:
        first = (draft.sources[0].session, draft.sources[0].seq_start) if draft.sources else ()
        ordinal = per_source[first] = per_source.get(first, -1) + 1
        evidence = [by_seq[(s.session, q)] for s in draft.sources
                    for q in range(s.seq_start, s.seq_end + 1) if (s.session, q) in by_seq]
        eid = event_id(space, draft, ordinal, evidence)
        existing = services.store.get_event(space, eid)
        if existing is not None and existing.status == "active":
            continue  # already written by an earlier run over the same evidence
        event = Event(id=eid, space=space, created_at=now, updated_at=now,
                      **draft.model_dump())
        if existing is None:
            saved.append(services.store.create_event(event))
            if batch is not None:
                batch.created.append(eid)
        else:  # the same evidence came back after a rollback: revive, keeping history
            revived = event.model_copy(update={"created_at": existing.created_at})
            saved.append(services.store.update_event(revived, existing.version))
            if batch is not None:
                batch.revived.append((eid, existing.version))
    return saved


def supersede_from(services: Services, space: str, session: str, seq: int,
                   now: datetime) -> list[Event]:
    """History safety: events citing any message at or after `seq` are rolled back
    (status superseded, a new version; never deleted) before the range is re-extracted."""
    affected = [e for e in iter_events(services.store, space)
                if any(s.session == session and s.seq_end >= seq for s in e.sources)]
    rolled = [services.store.update_event(
        event.model_copy(update={"status": "superseded", "updated_at": now}), event.version)
        for event in affected]
    services.index.index_events(rolled)  # superseded events leave the indexes
    return affected


def run_extraction(services: Services, space: str, session: str | None = None,
                   now: datetime | None = None) -> list[Event]:
    sessions = [session] if session else [s.session for s in pending_sessions(services, space)]
    events: list[Event] = []
    for name in sessions:
        events.extend(extract_session(services, space, name, now))
    return events

"""Extraction journal (seed 001): every extraction batch records what it created, revived and
superseded, with the versions those events had before, so a batch can be rolled back exactly.
One `JournalBatch` record per batch (scope = space/session), keyed by time so keys sort in
order; the last MAX_BATCHES are kept, and the cooldown job compacts batches older than the
retention age."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from chalicelib.domain.errors import NotFound
from chalicelib.domain.models import Event
from chalicelib.domain.records import JournalBatch
from chalicelib.ports import Services

MAX_BATCHES = 50


def scope(space: str, session: str) -> str:
    return f"{space}/{session}"


def start_batch(space: str, session: str, now: datetime) -> JournalBatch:
    key = f"{now.astimezone().strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}"
    return JournalBatch(scope=scope(space, session), key=key, at=now)


def begin(services: Services, space: str, session: str, attempt: str,
          now: datetime) -> tuple[JournalBatch, bool]:
    """The batch of an extraction attempt (`attempt`: extract.attempt_id), and whether it is
    resumed. A retry after a failure part-way finds the batch its first try journalled as the
    session's latest one, and resumes it (True); otherwise a new batch starts (False), keyed
    by time and attempt and later than every batch before it, even when the clock is not."""
    kept = batches(services, space, session)
    if kept and kept[-1].key.endswith(f"-{attempt}") and not kept[-1].rolled_back:
        return kept[-1], True
    at = max(now, kept[-1].at + timedelta(microseconds=1)) if kept else now
    key = f"{at.astimezone().strftime('%Y%m%dT%H%M%S%f')}-{attempt}"
    return JournalBatch(scope=scope(space, session), key=key, at=at), False


def batches(services: Services, space: str, session: str) -> list[JournalBatch]:
    """The session's batches, oldest first."""
    return services.store.list_records(JournalBatch, scope(space, session))


def record(services: Services, space: str, session: str, batch: JournalBatch) -> None:
    if batch.empty:
        return
    services.store.put_record(batch)
    kept = batches(services, space, session)
    if len(kept) > MAX_BATCHES:
        services.store.delete_records(JournalBatch, scope(space, session),
                                      [b.key for b in kept[:-MAX_BATCHES]])


def _restore(services: Services, space: str, event_id: str, version: int) -> Event | None:
    """Put back the content and status the event had at `version`, as a new version."""
    history = {e.version: e for e in services.store.event_history(space, event_id)}
    current = services.store.get_event(space, event_id)
    if current is None or version not in history:
        return None
    prior = history[version]
    restored = prior.model_copy(update={"version": current.version,
                                        "updated_at": current.updated_at})
    return services.store.update_event(restored, current.version)


def rollback(services: Services, space: str, session: str, batch_id: str,
             now: datetime) -> list[Event]:
    """Undo one batch exactly: its new events are superseded, and every event it revived or
    superseded gets back the version it had before. Returns the events written."""
    batch = services.store.get_record(JournalBatch, scope(space, session), batch_id)
    if batch is None:
        raise NotFound(f"no extraction batch {batch_id!r} in session {session!r}")
    if batch.rolled_back:
        return []
    written: list[Event] = []
    for event_id in batch.created:
        event = services.store.get_event(space, event_id)
        if event is not None and event.status != "superseded":
            written.append(services.store.update_event(
                event.model_copy(update={"status": "superseded", "updated_at": now}),
                event.version))
    for event_id, version in [*batch.revived, *batch.superseded]:
        restored = _restore(services, space, event_id, version)
        if restored is not None:
            written.append(restored)
    services.index.index_events(written)
    services.store.put_record(batch.model_copy(update={"rolled_back": True}))
    return written


def compact(services: Services, space: str, session: str, now: datetime,
            retention: timedelta) -> int:
    """Forget journal batches older than `retention` (their events keep their history)."""
    old = [b.key for b in batches(services, space, session) if now - b.at >= retention]
    if old:
        services.store.delete_records(JournalBatch, scope(space, session), old)
    return len(old)

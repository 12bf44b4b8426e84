"""Extraction journal (seed 001): every extraction batch records what it created, revived and
superseded, with the versions those events had before, so a batch can be rolled back exactly.
Kept in job state per session (the last MAX_BATCHES batches); the cooldown job compacts
batches older than the retention age."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from chalicelib.domain.errors import NotFound
from chalicelib.domain.models import Event
from chalicelib.usecases.indexing import index_events, unindex
from chalicelib.wiring import Services

JOB = "journal"
MAX_BATCHES = 50


@dataclass
class Batch:
    id: str
    at: str  # ISO time of the batch
    created: list[str] = field(default_factory=list)
    # (event id, the version it had before this batch touched it)
    revived: list[tuple[str, int]] = field(default_factory=list)
    superseded: list[tuple[str, int]] = field(default_factory=list)
    rolled_back: bool = False

    @classmethod
    def start(cls, now: datetime) -> Batch:
        return cls(id=uuid.uuid4().hex[:12], at=now.isoformat())

    def as_dict(self) -> dict:
        return {"id": self.id, "at": self.at, "created": self.created,
                "revived": [list(p) for p in self.revived],
                "superseded": [list(p) for p in self.superseded],
                "rolled_back": self.rolled_back}

    @classmethod
    def from_dict(cls, raw: dict) -> Batch:
        return cls(id=raw["id"], at=raw["at"], created=list(raw.get("created", [])),
                   revived=[(e, int(v)) for e, v in raw.get("revived", [])],
                   superseded=[(e, int(v)) for e, v in raw.get("superseded", [])],
                   rolled_back=bool(raw.get("rolled_back", False)))

    @property
    def empty(self) -> bool:
        return not (self.created or self.revived or self.superseded)


def _key(space: str, session: str) -> str:
    return f"{space}/{session}"


def batches(services: Services, space: str, session: str) -> list[Batch]:
    state = services.store.get_job_state(JOB, _key(space, session)) or {}
    return [Batch.from_dict(b) for b in state.get("batches", [])]


def _save(services: Services, space: str, session: str, kept: list[Batch]) -> None:
    services.store.put_job_state(JOB, _key(space, session),
                                 {"batches": [b.as_dict() for b in kept[-MAX_BATCHES:]]})


def record(services: Services, space: str, session: str, batch: Batch) -> None:
    if not batch.empty:
        _save(services, space, session, [*batches(services, space, session), batch])


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
    kept = batches(services, space, session)
    batch = next((b for b in kept if b.id == batch_id), None)
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
    unindex(services, space, [e.ref for e in written if e.status != "active"])
    index_events(services, [e for e in written if e.status == "active"])
    batch.rolled_back = True
    _save(services, space, session, kept)
    return written


def compact(services: Services, space: str, session: str, now: datetime,
            retention: timedelta) -> int:
    """Forget journal batches older than `retention` (their events keep their history)."""
    kept = batches(services, space, session)
    fresh = [b for b in kept if now - datetime.fromisoformat(b.at) < retention]
    if len(fresh) != len(kept):
        _save(services, space, session, fresh)
    return len(kept) - len(fresh)

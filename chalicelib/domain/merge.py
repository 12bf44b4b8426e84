"""Merge instructions (seed 000) and applying them, purely: events + instructions → what to
create, update and supersede. Nothing is written here; `chalicelib.usecases.merge` writes.

"delete" never removes anything: the event becomes `superseded`, a new version, readable in
its history — and only when every message it cites is still cited by an active event (a
duplicate merged into another, whose update takes its sources): a bare delete that would leave
evidence uncited is skipped and reported.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from chalicelib.domain.models import Event, EventFields, EventKind, Source, When
from chalicelib.domain.textrules import make_title

Action = Literal["add", "update", "delete", "keep"]




class EventChanges(EventFields):
    """What an add or update sets; absent fields stay as they are. No id, space, status or
    version: ids are immutable and deleting is its own action."""

    sources: list[Source] | None = None  # added to the event's sources, never replacing them
    kind: EventKind | None = None
    plan: bool | None = None


class MergeInstruction(BaseModel):
    action: Action
    id: str | None = None  # update / delete / keep: the event; add: an optional new id
    fields: EventChanges = Field(default_factory=EventChanges)
    # add / update: events whose sources this event takes over (usually deleted alongside)
    merge_from: list[str] = Field(default_factory=list)
    reason: str = ""


@dataclass
class MergeResult:
    """Events to write. `updated` and `superseded` carry the version they were read at: write
    them with store.update_event(event, event.version). Each id is in at most one list."""

    created: list[Event] = field(default_factory=list)
    updated: list[Event] = field(default_factory=list)
    superseded: list[Event] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why instructions were ignored

    @property
    def changes(self) -> int:
        return len(self.created) + len(self.updated) + len(self.superseded)


def union_sources(*groups: Sequence[Source]) -> list[Source]:
    seen: dict[tuple, Source] = {}
    for group in groups:
        for s in group:
            seen.setdefault((s.session, s.seq_start, s.seq_end), s)
    return list(seen.values())


def hull(whens: Sequence[When]) -> When:
    coarse = ["minute", "hour", "part_of_day", "day", "week", "month", "year"]
    start = min(w.start for w in whens)
    end = max(w.end for w in whens)
    gran = max((w.granularity for w in whens), key=coarse.index)
    return When(start=start, end=end, granularity=gran)


def merge_event_id(space: str, summary: str, when: When, sources: Sequence[Source]) -> str:
    """Deterministic id of an event an add creates: the same add twice is the same event."""
    h = hashlib.sha256()
    for part in (space, "merge", summary, when.start.isoformat(),
                 *(f"{s.session}:{s.seq_start}-{s.seq_end}" for s in sources)):
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return "ev_" + h.hexdigest()[:20]


def _content(event: Event) -> dict:
    return event.model_dump(exclude={"updated_at"})


def _patched(event: Event, fields: EventChanges, donors: Sequence[Event], now: datetime) -> Event:
    changes = fields.model_dump(exclude_unset=True, exclude_none=True)
    changes.pop("sources", None)
    sources = union_sources(event.sources, fields.sources or [], *(d.sources for d in donors))
    data = {**event.model_dump(), **changes, "sources": [s.model_dump() for s in sources],
            "updated_at": now}
    return Event.model_validate(data)


def apply_instructions(events: Sequence[Event], instructions: Sequence[MergeInstruction],
                       now: datetime, *, space: str | None = None) -> MergeResult:
    """Apply merge instructions in order to `events` (pure: nothing is written).

    keep: nothing. update: set the given fields; sources only grow (the event's, the given
    ones and those of `merge_from`). delete: the event becomes superseded (an update then a
    delete of one id ends superseded; an add then a delete is never created). add: a new
    event; it needs a summary, a `when` (or `merge_from` events to take the span of) and at
    least one source (its own or from `merge_from`): nothing is added that cites nothing.
    An add without a usable id gets a deterministic one. Unknown ids, updates of superseded
    events and adds with clashing ids are skipped and reported in `skipped`.
    """
    space = space or (events[0].space if events else None)
    work: dict[str, Event] = {e.id: e for e in events}
    created: list[str] = []
    updated: list[str] = []
    superseded: list[str] = []
    skipped: list[str] = []

    def known(ins: MergeInstruction) -> Event | None:
        event = work.get(ins.id or "")
        if event is None:
            skipped.append(f"{ins.action} {ins.id!r}: unknown id")
        elif event.status == "superseded" and ins.action != "keep":
            skipped.append(f"{ins.action} {ins.id}: already superseded")
            return None
        return event

    def donors_of(ins: MergeInstruction) -> list[Event]:
        out = []
        for donor_id in dict.fromkeys(ins.merge_from):
            if donor_id == ins.id:
                continue
            if donor_id in work:
                out.append(work[donor_id])
            else:
                skipped.append(f"{ins.action} {ins.id}: unknown merge_from {donor_id!r}")
        return out

    for ins in instructions:
        if ins.action == "keep":
            known(ins)
        elif ins.action == "delete":
            event = known(ins)
            if event is None:
                continue
            if ins.id in created:  # added and deleted in one pass: it never existed
                created.remove(ins.id)
                del work[ins.id]
                continue
            work[event.id] = event.model_copy(update={"status": "superseded", "updated_at": now})
            superseded.append(event.id)
            if event.id in updated:
                updated.remove(event.id)
        elif ins.action == "update":
            event = known(ins)
            if event is None:
                continue
            try:
                new = _patched(event, ins.fields, donors_of(ins), now)
            except ValidationError as exc:
                skipped.append(f"update {ins.id}: {exc.errors()[0]['msg']}")
                continue
            if _content(new) == _content(event):
                continue
            work[event.id] = new
            if event.id not in created and event.id not in updated:
                updated.append(event.id)
        else:  # add
            event = _added(ins, donors_of(ins), work, space, now, skipped)
            if event is not None:
                work[event.id] = event
                created.append(event.id)

    for event_id in list(superseded):  # nothing is lost: evidence stays cited
        if orphaned(work[event_id], work.values()):
            superseded.remove(event_id)
            previous = {e.id: e for e in events}[event_id]
            work[event_id] = previous
            skipped.append(f"delete {event_id}: its evidence would be cited by no active "
                           "event; merge it into the event that replaces it instead")
    return MergeResult(created=[work[i] for i in created], updated=[work[i] for i in updated],
                       superseded=[work[i] for i in superseded], skipped=skipped)


def orphaned(deleted: Event, events: Sequence[Event] | object) -> bool:
    """Whether a source of `deleted` would be cited by no active event."""
    cited = {(s.session, q) for e in events if e.status == "active" and e.id != deleted.id
             for s in e.sources for q in range(s.seq_start, s.seq_end + 1)}
    return any((s.session, q) not in cited
               for s in deleted.sources for q in range(s.seq_start, s.seq_end + 1))


def _added(ins: MergeInstruction, donors: Sequence[Event], work: dict[str, Event],
           space: str | None, now: datetime, skipped: list[str]) -> Event | None:
    f = ins.fields
    sources = union_sources(f.sources or [], *(d.sources for d in donors))
    when = f.when or (hull([d.when for d in donors]) if donors else None)
    if not f.summary or when is None or not sources or space is None:
        missing = [n for n, ok in (("summary", f.summary), ("when", when),
                                   ("sources", sources), ("space", space)) if not ok]
        skipped.append(f"add: needs {', '.join(missing)}")
        return None


    event_id = ins.id if ins.id and ins.id not in work and _valid_id(ins.id) else None
    event_id = event_id or merge_event_id(space, f.summary, when, sources)
    if event_id in work:
        skipped.append(f"add {event_id}: id exists")
        return None
    participants = f.participants
    if participants is None:
        participants = list(dict.fromkeys(p for d in donors for p in d.participants))
    try:
        return Event(
            id=event_id, space=space, title=f.title or make_title(f.summary),
            summary=f.summary, when=when,
            importance=f.importance or max([d.importance for d in donors], default=5),
            participants=participants, location=f.location, tags=f.tags or [],
            sources=sources, kind=f.kind or "event", plan=bool(f.plan),
            created_at=now, updated_at=now,
        )
    except ValidationError as exc:
        skipped.append(f"add: {exc.errors()[0]['msg']}")
        return None


def _valid_id(value: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9_.:@-]{1,128}", value))



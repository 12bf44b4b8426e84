"""The merge pass (seed 000): every N new events, look at a window of recent events and apply
instructions add / update / delete / keep.

- `apply_instructions` is pure: events + instructions → what to create, update, supersede.
- `LLMMerger` asks the model for instructions (ANNALS_LLM=openai|bedrock).
- `OfflineMerger` joins near-duplicates without a model: shared participants, overlapping
  dates (or the same day), cosine of the summaries' passage vectors ≥ merge_similarity; the
  richer event (longer summary, then higher importance) is kept with every source.
- `merge_job` (JOBS["merge"]) runs the pass per space after `merge_every` new events, writing
  every change as a new version (history keeps them all) and re-indexing.

"delete" never removes anything: the event becomes `superseded`, a new version, readable in
its history.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from chalicelib.adapters.llm import LLMClient, LLMError, persist_usage, track_usage
from chalicelib.domain.models import Event, EventFields, EventKind, SessionState, Source, When
from chalicelib.ports import ConflictError, Embedder
from chalicelib.usecases.extract.llm import parse_date, span_label
from chalicelib.usecases.indexing import index_events, unindex
from chalicelib.wiring import Services

log = logging.getLogger("annals.merge")

MERGE_JOB = "merge"  # job-state name of the per-space marker
Action = Literal["add", "update", "delete", "keep"]


# ------------------------------------------------------------------ instructions


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

    return MergeResult(created=[work[i] for i in created], updated=[work[i] for i in updated],
                       superseded=[work[i] for i in superseded], skipped=skipped)


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
    from chalicelib.usecases.extract.rules import make_title

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


# ------------------------------------------------------------------ offline merger


class OfflineMerger:
    """Near-duplicates, no model: see the module docstring. A plan and an event are never
    joined (a plan and what came of it are two entries of a chronicle)."""

    name = "offline"

    def __init__(self, embedder: Embedder, similarity: float = 0.95):
        self.embedder = embedder
        self.similarity = similarity

    def instructions(self, window: Sequence[Event],
                     new_ids: set[str] | frozenset[str] = frozenset()) -> list[MergeInstruction]:
        events = [e for e in window if e.status == "active" and e.kind != "summary"]
        if len(events) < 2:
            return []
        vectors = self.embedder.embed_passages([e.summary for e in events])
        sims = vectors @ vectors.T
        parent = list(range(len(events)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i in range(len(events)):
            for j in range(i + 1, len(events)):
                if new_ids and events[i].id not in new_ids and events[j].id not in new_ids:
                    continue
                if self.near_duplicates(events[i], events[j], float(sims[i, j])):
                    parent[root(j)] = root(i)
        clusters: dict[int, list[Event]] = {}
        for i, event in enumerate(events):
            clusters.setdefault(root(i), []).append(event)
        out: list[MergeInstruction] = []
        for members in clusters.values():
            if len(members) > 1:
                out.extend(self.join(members))
        return out

    def near_duplicates(self, a: Event, b: Event, similarity: float) -> bool:
        if a.plan != b.plan or similarity < self.similarity:
            return False
        if (a.participants or b.participants) and not set(a.participants) & set(b.participants):
            return False
        same_day = a.when.start.date() == b.when.start.date()
        return same_day or a.when.overlaps(b.when.start, b.when.end)

    @staticmethod
    def join(members: Sequence[Event]) -> list[MergeInstruction]:
        keeper = max(members, key=lambda e: (len(e.summary), e.importance,
                                             -e.created_at.timestamp()))
        others = [e for e in members if e.id != keeper.id]
        fields = EventChanges(
            importance=max(e.importance for e in members),
            participants=list(dict.fromkeys(p for e in [keeper, *others] for p in e.participants)),
            tags=list(dict.fromkeys(t for e in [keeper, *others] for t in e.tags)),
        )
        reason = "near-duplicate of " + ", ".join(e.id for e in others)
        return [MergeInstruction(action="update", id=keeper.id, fields=fields,
                                 merge_from=[e.id for e in others], reason=reason),
                *(MergeInstruction(action="delete", id=e.id, reason=f"merged into {keeper.id}")
                  for e in others)]


# ------------------------------------------------------------------ LLM merger

MERGE_SYSTEM_PROMPT = """\
You maintain a chronicle of events extracted from a conversation. Tidy the window of events \
below; events marked [new] were just added.
Instructions you may give, one per event you change:
- "update": rewrite an event (title, summary, date, importance, participants, tags) when \
events repeat or complete each other. Put the ids of the events it absorbs in "merge" (their \
sources join it) and delete those.
- "delete": remove an event that duplicates another or that a later event corrects.
- "add": a new event combining others (give "merge" with their ids); rarely needed.
- "keep": leave an event as it is (you may omit keeps).
Rules: nothing invented; combine only what the events say. Keep the events' language. Keep \
dates unless events about the same thing give different precision. Distinct facts stay \
separate events. A plan and what later happened are two events.
Reply with one JSON object and nothing else:
{"instructions": [{"action": "update", "id": "E1", "title": "...", "summary": "...", \
"date": "YYYY-MM-DD", "importance": 7, "merge": ["E4"], "reason": "..."}, \
{"action": "delete", "id": "E4", "reason": "..."}]}
Reply {"instructions": []} when nothing needs to change."""

_ACTIONS = {"add": "add", "create": "add", "new": "add", "update": "update", "edit": "update",
            "merge": "update", "modify": "update", "delete": "delete", "remove": "delete",
            "drop": "delete", "keep": "keep", "none": "keep", "noop": "keep"}


class MergeOpOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    action: Action
    id: str | None = None
    title: str | None = None
    summary: str | None = None
    date: str | None = None
    date_end: str | None = None
    importance: float | None = None
    participants: list[str] | None = None
    tags: list[str] | None = None
    merge: list[str] = Field(default_factory=list)
    reason: str = ""

    @field_validator("action", mode="before")
    @classmethod
    def _synonyms(cls, value):
        return _ACTIONS.get(str(value).strip().lower(), value)

    @field_validator("merge", mode="before")
    @classmethod
    def _list(cls, value):
        if value is None:
            return []
        return [value] if isinstance(value, str) else value


class MergeOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    instructions: list[MergeOpOut]


def format_window(window: Sequence[Event], new_ids: set[str] | frozenset[str]) -> str:
    lines = []
    for n, e in enumerate(window, 1):
        mark = " [new]" if e.id in new_ids else ""
        people = ", ".join(e.participants) or "-"
        plan = " | plan" if e.plan else ""
        lines.append(f"E{n}{mark} | {span_label(e.when)} | {e.title} | {e.summary} | "
                     f"participants: {people} | importance {e.importance}{plan}")
    return "Events (oldest first):\n" + "\n".join(lines)


def _text(value: str | None, limit: int) -> str | None:
    value = (value or "").strip()
    return value[:limit] or None


class LLMMerger:
    name = "llm"

    def __init__(self, llm: LLMClient, max_tokens: int = 3000):
        self.llm = llm
        self.max_tokens = max_tokens

    def instructions(self, window: Sequence[Event],
                     new_ids: set[str] | frozenset[str] = frozenset()) -> list[MergeInstruction]:
        """Raises LLMError when the model fails (the caller falls back to OfflineMerger)."""
        if len(window) < 2:
            return []
        result = self.llm.complete_json(MERGE_SYSTEM_PROMPT, format_window(window, new_ids),
                                        MergeOut, max_tokens=self.max_tokens)
        return self.convert(result, window)

    @staticmethod
    def convert(result: MergeOut, window: Sequence[Event]) -> list[MergeInstruction]:
        """Handles (E1…) → ids; dates checked: a new date must overlap the span of the events
        it is built from, else the old date stays (a merge cannot move an event in time)."""
        handles = {f"E{n}": e for n, e in enumerate(window, 1)}

        def lookup(handle: str | None) -> Event | None:
            key = (handle or "").strip().upper().lstrip("#")
            return handles.get(key if key.startswith("E") else f"E{key}")

        out: list[MergeInstruction] = []
        for op in result.instructions:
            target = lookup(op.id)
            donors = [d for d in (lookup(h) for h in op.merge) if d is not None]
            if op.action in ("update", "delete", "keep") and target is None:
                log.info("merge: %s of unknown event %r skipped", op.action, op.id)
                continue
            base = [e for e in (target, *donors) if e is not None]
            fields: dict = {"title": _text(op.title, 200), "summary": _text(op.summary, 4000),
                            "participants": op.participants, "tags": op.tags}
            if op.importance is not None:
                fields["importance"] = max(1, min(10, round(op.importance)))
            if op.date and base:
                when = parse_date(op.date, op.date_end, base[0].when.start.tzinfo)
                span = hull([e.when for e in base])
                if when is not None and when.overlaps(span.start, span.end):
                    fields["when"] = when
                elif op.action == "add":
                    fields["when"] = span
            try:
                ef = EventChanges(**{k: v for k, v in fields.items() if v is not None})
            except ValidationError as exc:
                log.info("merge: unusable fields for %s %r: %s", op.action, op.id, exc)
                continue
            out.append(MergeInstruction(
                action=op.action, id=target.id if target else None, fields=ef,
                merge_from=[d.id for d in donors], reason=op.reason[:500]))
        return out


# ------------------------------------------------------------------ the job


def active_events(services: Services, space: str) -> list[Event]:
    events, cursor = [], None
    while True:
        page = services.store.list_events(space, limit=500, cursor=cursor)
        events.extend(page.events)
        if not page.next_cursor:
            return events
        cursor = page.next_cursor


def written_order(event: Event) -> tuple:
    """The order events were written: creation time, then conversation order."""
    first = event.sources[0] if event.sources else None
    return (event.created_at, first.session if first else "", first.seq_start if first else -1,
            event.when.start, event.id)


def save_result(services: Services, space: str, result: MergeResult) -> MergeResult:
    """Write every change as a new version and keep the indexes in step. A change that lost
    a race (someone edited the event meanwhile) is skipped and reported."""
    store = services.store
    saved = MergeResult(skipped=list(result.skipped))
    for event in result.created:
        try:
            saved.created.append(store.create_event(event))
        except ConflictError as exc:
            saved.skipped.append(f"create {event.id}: {exc}")
    for target, bucket in ((result.updated, saved.updated), (result.superseded,
                                                            saved.superseded)):
        for event in target:
            try:
                bucket.append(store.update_event(event, event.version))
            except ConflictError as exc:
                saved.skipped.append(f"write {event.id}: {exc}")
    index_events(services, [*saved.created, *saved.updated])
    unindex(services, space, [e.ref for e in saved.superseded])
    return saved


def merge_window(services: Services, window: Sequence[Event], new_ids: set[str], space: str,
                 now: datetime) -> tuple[MergeResult, str]:
    """One merge over one window: the LLM merger when configured (offline on failure)."""
    offline = OfflineMerger(services.embedder, services.settings.merge_similarity)
    merger_name = offline.name
    if services.llm is not None:
        with track_usage() as usage:
            try:
                instructions = LLMMerger(services.llm).instructions(window, new_ids)
                merger_name = "llm"
            except LLMError as exc:
                log.warning("LLM merge failed for %s (%s); offline merger", space, exc)
                instructions = offline.instructions(window, new_ids)
                merger_name = "offline-fallback"
        if usage.calls or usage.failures:
            persist_usage(services.store, space, usage, "merge", services.llm.model)
    else:
        instructions = offline.instructions(window, new_ids)
    result = apply_instructions(window, instructions, now, space=space)
    return save_result(services, space, result), merger_name


def sessions_fingerprint(sessions: Sequence[SessionState]) -> str:
    """Changes whenever extraction can have written events in a space (messages arrived,
    were extracted, edited): the job skips reading an unchanged space's events."""
    h = hashlib.sha256()
    for s in sorted(sessions, key=lambda s: s.session):
        h.update(f"{s.session}|{s.extracted_upto}|{s.message_count}|{s.dirty_from}|"
                 f"{s.pending_since}\x1f".encode())
    return h.hexdigest()[:16]


def merge_space(services: Services, space: str, now: datetime | None = None, *,
                force: bool = False, fingerprint: str | None = None) -> dict:
    """Merge one space if it has `merge_every` new events (or at once with `force`, e.g. the
    consolidate route). New = active events created after the last merge's marker. With a
    `fingerprint` (sessions_fingerprint) equal to the last one seen, nothing is read."""
    now = now or services.clock()
    settings = services.settings
    state = services.store.get_job_state(MERGE_JOB, space) or {}
    summary = {"new": int(state.get("pending", 0)), "merged": False, "created": 0,
               "updated": 0, "superseded": 0, "merger": None}
    if not force and fingerprint is not None and state.get("fingerprint") == fingerprint:
        return summary
    marker = datetime.fromisoformat(state["marker"]) if state.get("marker") else None
    events = sorted(active_events(services, space), key=written_order)
    new = [e for e in events if marker is None or e.created_at > marker]
    summary["new"] = len(new)
    if not force and len(new) < settings.merge_every:
        if (state.get("pending"), state.get("fingerprint")) != (len(new), fingerprint):
            services.store.put_job_state(MERGE_JOB, space, {
                **state, "pending": len(new), "fingerprint": fingerprint})
        return summary
    step = max(settings.merge_every, settings.merge_window // 2)
    chunks = [new[i:i + step] for i in range(0, len(new), step)] or [[]]
    gone: set[str] = set()
    for chunk in chunks:
        chunk_ids = {e.id for e in chunk}
        before = [e for e in events if e.id not in chunk_ids and e.id not in gone
                  and (not chunk or written_order(e) < written_order(chunk[0]))]
        room = max(0, settings.merge_window - len(chunk))
        window = [*(before[-room:] if room else []), *chunk]
        window = [e for e in window if e.id not in gone]
        result, merger_name = merge_window(services, window, chunk_ids, space, now)
        gone |= {e.id for e in result.superseded}
        summary["created"] += len(result.created)
        summary["updated"] += len(result.updated)
        summary["superseded"] += len(result.superseded)
        summary["merger"] = merger_name
        # later chunks see this chunk's outcome
        latest = {e.id: e for e in [*result.created, *result.updated]}
        events = [latest.get(e.id, e) for e in events if e.id not in gone]
        events += [e for e in result.created if e.id not in {x.id for x in events}]
    summary["merged"] = True
    stamps = [e.created_at for e in events] + ([marker] if marker else [])
    services.store.put_job_state(MERGE_JOB, space, {
        "marker": max(stamps).isoformat() if stamps else now.isoformat(),
        "last_merged_at": now.isoformat(), "pending": 0, "runs": int(state.get("runs", 0)) + 1,
        "fingerprint": fingerprint,
    })
    log.info("merge %s: %s", space, summary)
    return summary


def merge_job(services: Services, now: datetime | None = None):
    """JOBS["merge"]: every space with `merge_every` new events since its last merge."""
    from chalicelib.usecases.jobs import JobResult

    now = now or services.clock()
    by_space: dict[str, list[SessionState]] = {}
    for state in services.store.list_sessions(None):
        by_space.setdefault(state.space, []).append(state)
    merged: dict[str, dict] = {}
    changes = 0
    for space, sessions in sorted(by_space.items()):
        summary = merge_space(services, space, now,
                              fingerprint=sessions_fingerprint(sessions))
        if summary["merged"]:
            merged[space] = summary
            changes += summary["created"] + summary["updated"] + summary["superseded"]
    return JobResult("merge", 0, changes, {"spaces": merged})

"""Event use-cases: the timeline, reading with evidence, saving by hand, editing, archiving."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from pydantic import ValidationError

from chalicelib.domain.errors import BadRequest, Conflict, NotFound, validation_error
from chalicelib.domain.models import (
    TIMELINE_KINDS,
    Event,
    EventList,
    Message,
    PatchEventRequest,
    SaveEventRequest,
    When,
)
from chalicelib.domain.records import ArchivedTurns
from chalicelib.domain.refs import message_ref, parse_ref
from chalicelib.domain.textproc import is_cjk
from chalicelib.ports import ConflictError, Page, Services, Store
from chalicelib.usecases.spaces import remember_space


def list_events(services: Services, space: str, *, start: datetime | None = None,
                end: datetime | None = None, limit: int = 50, cursor: str | None = None,
                statuses: tuple[str, ...] = ("active",),
                kinds: tuple[str, ...] = TIMELINE_KINDS) -> EventList:
    """A page of the timeline: events and notes by default (`kinds`); session summaries
    retell them and are asked for apart (("summary",)). Each day in conversation order
    (`said_order`). The store orders a day's events by id, so a page does not end inside a
    day it could leave whole: when the next event is of the page's last day, the page ends
    before that day (read again to that length, for the store's cursor) — unless the day
    fills the page, which is then in order within itself."""
    def read(at: str | None, size: int) -> Page:
        return services.store.list_events(space, start=start, end=end, statuses=statuses,
                                          limit=size, cursor=at, kinds=kinds)

    try:
        page = read(cursor, limit)
        if page.next_cursor and page.events:
            last = day_of(page.events[-1])
            before = sum(day_of(e) != last for e in page.events)
            if before and (peek := read(page.next_cursor, 1).events) \
                    and day_of(peek[0]) == last:
                page = read(cursor, before)
    except ValueError as exc:
        raise BadRequest(str(exc), code="invalid_cursor") from None
    return EventList(events=sorted(page.events, key=said_order), next_cursor=page.next_cursor)


def day_of(event: Event) -> date:
    """The day an event starts on, in its own offset."""
    return event.when.start.date()


def said_order(event: Event) -> tuple:
    """An event's place in the timeline: its day, then where the conversation told it (its
    first source's session and seq; a day's events share their start, and their ids are
    hashes), then its time; notes, which cite nothing, after the day's conversation in the
    order they were saved (note_id)."""
    told = min(((s.session, s.seq_start) for s in event.sources), default=None)
    place = (0, *told) if told else (1, "", 0)
    return (day_of(event), *place, event.when.start, event.id)


def get_event(services: Services, space: str, event_id: str) -> Event:
    event = services.store.get_event(space, event_id)
    if event is None:
        raise NotFound(f"no event {event_id!r} in space {space!r}")
    return event


def evidence(services: Services, event: Event) -> list[Message]:
    """The source messages an event cites, verbatim (some may have been deleted since)."""
    out: list[Message] = []
    for source in event.sources:
        out.extend(services.store.get_messages(event.space, source.session, source.seq_start,
                                               source.seq_end))
    return out


def configured_zone(services: Services) -> tzinfo:
    """ANNALS_TZ, else UTC: the zone of a server, which has no user's zone of its own."""
    return ZoneInfo(services.settings.tz) if services.settings.tz else UTC


def save_event(services: Services, space: str, request: SaveEventRequest,
               zone: tzinfo | None = None) -> Event:
    """memory_save: pin a memory to a day by hand — the day of `happened_at` in its own
    offset, else today in `zone` (default: configured_zone; the CLI passes the machine's).
    The space is recorded after the write (usecases.spaces: listed, and merged)."""
    now = services.clock()
    at = request.happened_at or now.astimezone(zone or configured_zone(services))
    start = at.replace(hour=0, minute=0, second=0, microsecond=0)
    when = When(start=start, end=start + timedelta(days=1), granularity="day")
    summary = request.summary if not request.details else f"{request.summary}\n{request.details}"
    title = request.title or _title_from(request.summary)
    event = Event(
        id=note_id(now), space=space, title=title, summary=summary, when=when,
        importance=request.importance, participants=request.participants, tags=request.tags,
        kind="note", created_at=now, updated_at=now,
    )
    services.store.create_event(event)
    services.index.index_events([event])
    remember_space(services, space, now)
    return event


def note_id(now: datetime) -> str:
    """`ev_` and 20 hex digits, the first 11 the save time in milliseconds: the notes of one
    day share their `when`, and the timeline orders ties by id, so by the time of saving."""
    return f"ev_{int(now.timestamp() * 1000):011x}{uuid.uuid4().hex[:9]}"


def _title_from(summary: str) -> str:
    limit = 24 if is_cjk(summary) else 60
    first = summary.strip().splitlines()[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def patch_event(services: Services, space: str, event_id: str,
                request: PatchEventRequest) -> Event:
    current = get_event(services, space, event_id)
    changes = request.model_dump(exclude_unset=True, exclude={"version"})
    if current.version != request.version:
        if _patched_already(current, request.version, changes):
            services.index.index_events([current])  # a retry: its write landed, maybe not this
            return current
        raise Conflict(f"event {event_id} is at version {current.version}, not {request.version}",
                       details={"current_version": current.version})
    if not changes:
        raise BadRequest("nothing to change: give at least one field besides version",
                         code="empty_patch")
    # Merge as plain data and validate once, so nested fields (when) become models again.
    merged = {**current.model_dump(), **changes, "updated_at": services.clock()}
    try:
        updated = Event.model_validate(merged)
    except ValidationError as exc:
        raise validation_error(exc) from None
    try:
        saved = services.store.update_event(updated, request.version)
    except ConflictError as exc:
        current = services.store.get_event(space, event_id)
        if current is None or not _patched_already(current, request.version, changes):
            raise Conflict(str(exc)) from None
        saved = current  # the same change, written by a racing copy of this request
    if "status" in changes:
        keep_hidden(services, saved)
    services.index.index_events([saved])
    return saved


def _patched_already(current: Event, version: int, changes: dict) -> bool:
    """Whether `current` is the version right after `version` and already holds `changes`:
    a PATCH sent again after a failure (or racing its own copy) finds its change made."""
    if not changes or current.version != version + 1:
        return False
    try:
        again = Event.model_validate({**current.model_dump(), **changes})
    except ValidationError:
        return False
    return again == current


def archive_event(services: Services, space: str, event_id: str) -> Event:
    current = get_event(services, space, event_id)
    if current.status == "archived":
        keep_hidden(services, current)  # a retry: the first try may not have got here
        services.index.index_events([current])
        return current
    archived = current.model_copy(update={"status": "archived", "updated_at": services.clock()})
    try:
        saved = services.store.update_event(archived, current.version)
    except ConflictError as exc:
        raise Conflict(str(exc)) from None
    keep_hidden(services, saved)
    services.index.index_events([saved])
    return saved


def keep_hidden(services: Services, event: Event) -> None:
    """An event archived by hand hides the turns it cites (an `ArchivedTurns` record); made
    active again, it shows them. Summaries hide nothing: they cite a whole session, and
    archiving a retelling is no wish to forget the chat. Events faded by forgetting never
    come here: fading leaves the turns to recall."""
    if event.status == "active":
        services.store.delete_records(ArchivedTurns, event.space, [event.id])
        return
    refs = [message_ref(s.session, seq) for s in event.sources
            for seq in range(s.seq_start, s.seq_end + 1)]
    if event.status == "archived" and event.kind == "event" and refs:
        services.store.put_record(ArchivedTurns(scope=event.space, key=event.id, refs=refs))


def hidden_turns(store: Store, space: str) -> frozenset[str]:
    """The message refs that events archived by hand cite: no message card shows them
    (recall.cards.load_cards) and no fact told only there is said (facts.core_block)."""
    return frozenset(ref for record in store.list_records(ArchivedTurns, space)
                     for ref in record.refs)


def history(services: Services, space: str, event_id: str) -> list[Event]:
    versions = services.store.event_history(space, event_id)
    if not versions:
        raise NotFound(f"no event {event_id!r} in space {space!r}")
    return versions


def validate_refs(refs: list[str]) -> list[str]:
    for ref in refs:
        try:
            parse_ref(ref)
        except ValueError as exc:
            raise BadRequest(str(exc), code="invalid_ref") from None
    return refs

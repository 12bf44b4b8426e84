"""Extraction use-case: pending messages of a session → dated events that cite them."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import ValidationError

from chalicelib.domain.models import Event, EventDraft, Message, SessionState
from chalicelib.domain.records import JournalBatch
from chalicelib.ports import ConflictError, ExtractionContext, Reader, Services, iter_events
from chalicelib.usecases.extract import journal, summaries
from chalicelib.usecases.extract.drafts import DraftCounts, check_drafts
from chalicelib.usecases.people import named_users, with_names

CONTEXT_MESSAGES = 6
log = logging.getLogger("annals.extract")


@dataclass
class ExtractionResult:
    """What an extraction run wrote, and what the draft checkpoint (`drafts.check_drafts`)
    did on the way: drafts repaired before saving, drafts dropped as holding nothing."""

    events: list[Event] = field(default_factory=list)
    drafts: DraftCounts = field(default_factory=DraftCounts)

    def add(self, other: ExtractionResult) -> None:
        self.events.extend(other.events)
        self.drafts.add(other.drafts)


class ExtractionFault(RuntimeError):
    """Extraction built an invalid record from its own data: a bug, reported as a server
    error (500), never as the client's validation error (422)."""


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


def attempt_id(state: SessionState, start: int, messages: Sequence[Message]) -> str:
    """What an extraction attempt starts from — the session's state, the range and the
    messages in it — as a short id: a retry after a failure part-way is the same attempt, and
    finds the journal batch its first try began (`journal.begin`)."""
    h = hashlib.sha256()
    for part in (state.space, state.session, str(start), str(state.extracted_upto),
                 str(state.dirty_from), *(f"{m.seq}:{m.content_hash}" for m in messages)):
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()[:12]


def extract_session(services: Services, space: str, session: str,
                    now: datetime | None = None) -> list[Event]:
    """Extract one session's pending (or dirty) messages. Returns the events written
    (`extract_session_result` also says what the draft checkpoint repaired and dropped)."""
    return extract_session_result(services, space, session, now).events


def extract_session_result(services: Services, space: str, session: str,
                           now: datetime | None = None, *, seq_to: int | None = None,
                           extractor: Reader | None = None) -> ExtractionResult:
    """`extract_session`, with the checkpoint's counts. A ValidationError here comes from
    Annals' own data (the request was checked before), so it is an ExtractionFault.
    `seq_to` reads the pending messages up to that seq only (a reading task's batch, the rest
    stays pending); `extractor` reads them instead of the space's reader (a host's answer)."""
    try:
        return _extract_session(services, space, session, now, seq_to, extractor)
    except ValidationError as exc:
        log.exception("extraction of %s/%s built an invalid record", space, session)
        raise ExtractionFault(f"extraction of {space}/{session} built an invalid record: "
                              f"{exc.title}, {exc.error_count()} errors") from exc


def _extract_session(services: Services, space: str, session: str, now: datetime | None,
                     seq_to: int | None = None,
                     extractor: Reader | None = None) -> ExtractionResult:
    """Extract one session's pending (or dirty) messages.

    Safe to run again after a failure at any step: every write is planned in the journal
    batch before it is made (an intent), and a retry of the same attempt resumes that batch —
    it supersedes the events the plan named (never the ones the failed try created), creates
    or revives only what is not there yet, indexes everything again, then marks the session."""
    store = services.store
    state = store.get_session(space, session)
    if state is None:
        return ExtractionResult()
    now = now or services.clock()
    start = state.unread_from
    messages = store.get_messages(space, session, seq_from=start, seq_to=seq_to)
    batch, resumed = journal.begin(services, space, session,
                                   attempt_id(state, start, messages), now)
    if state.dirty_from is not None:
        supersede_from(services, space, session, state.dirty_from, now, batch,
                       resumed=resumed)
    if not messages:
        if state.dirty_from is not None:  # the events before the edit lost their summary
            summaries.summarise_session(services, space, session, now, batch)
        store.mark_extracted(space, session, state.extracted_upto)
        return ExtractionResult()
    # a user who told their name ("我叫阿梅") is read under it, not as 用户 / "the user"
    names = named_users(services, space)
    ctx = ExtractionContext(space=space, session=session,
                            earlier=turns_before(services, space, session, start, names))
    # one reader reads the batch: its events, and the facts of the turns it read
    reading = (extractor or services.extractor).read(
        with_names(cleaned(services, messages), names), ctx)
    drafts = reading.events
    # Whatever the extractor proposed, only drafts that make valid events citing this batch
    # go on (repaired, or dropped when nothing is left): no message can break the batch.
    checked = check_drafts(drafts, messages)
    if checked.counts.repaired or checked.counts.dropped:
        log.info("extract %s/%s seq %d-%d: %d drafts, %d repaired, %d dropped", space,
                 session, messages[0].seq, messages[-1].seq, len(drafts),
                 checked.counts.repaired, checked.counts.dropped)
    mentions: dict[str, list[tuple[str, str]]] = {}
    events = save_drafts(services, space, checked.drafts, messages, now, batch, mentions)
    services.index.index_events(events)
    # loaded here, not with the package: building the extractor (wiring) on a cold start
    # that only recalls must not load the facts' and the graph's rules
    from chalicelib.usecases import facts, graph

    # Entities, threads, relations (docs/graph.md): idempotent, and before marking, so a
    # failure retries them with the batch.
    graph.after_extraction(services, space, session, events, now, mentions,
                           reading.corrections)
    # idempotent too: a turn read again adds nothing; what the reader read, the rules beneath
    facts.learn(services, space, with_names(messages, names), now, reading.facts)
    # Before marking: a failure here retries the batch, which writes the same summaries.
    summaries.summarise_session(services, space, session, now, batch)
    store.mark_extracted(space, session, max(m.seq for m in messages))
    return ExtractionResult(events=events, drafts=checked.counts)


def turns_before(services: Services, space: str, session: str, start: int,
                 names: dict[str, str]) -> list[Message]:
    """The CONTEXT_MESSAGES turns before `start`, as a reading shows them (cleaned, named):
    context for the batch, never cited."""
    earlier = services.store.get_messages(space, session,
                                          seq_from=max(0, start - CONTEXT_MESSAGES),
                                          seq_to=start - 1)
    return with_names(cleaned(services, earlier), names)


def cleaned(services: Services, messages: Sequence[Message]) -> list[Message]:
    """What the extractor reads: the words without reasoning or status blocks
    (chalicelib.domain.cleaning). The stored messages stay as they are: they are the
    evidence, and their hashes (event ids) do not change. Nothing left: not a statement."""
    out = []
    for msg in messages:
        text = services.clean(msg.content)
        if text:
            out.append(msg if text == msg.content else msg.model_copy(update={"content": text}))
    return out


def save_drafts(services: Services, space: str, drafts: Sequence[EventDraft],
                messages: Sequence[Message], now: datetime,
                batch: JournalBatch | None = None,
                mentions: dict[str, list[tuple[str, str]]] | None = None) -> list[Event]:
    """Write the drafts as events (deterministic ids) and return them, with those already
    there: created by an earlier run over the same evidence, or by a try of this batch that
    failed later on — they are indexed again by the caller. With a `batch`, what will be
    created and revived is journalled before anything is written."""
    by_seq = {(m.session, m.seq): m for m in messages}
    planned: list[tuple[Event, Event | None]] = []
    per_source: dict[tuple, int] = {}
    for draft in drafts:
        first = (draft.sources[0].session, draft.sources[0].seq_start) if draft.sources else ()
        ordinal = per_source[first] = per_source.get(first, -1) + 1
        evidence = [by_seq[(s.session, q)] for s in draft.sources
                    for q in range(s.seq_start, s.seq_end + 1) if (s.session, q) in by_seq]
        eid = event_id(space, draft, ordinal, evidence)
        if mentions is not None and draft.mentions:  # what an LLM named: for the graph
            mentions[eid] = list(draft.mentions)
        event = Event(id=eid, space=space, created_at=now, updated_at=now,
                      **draft.model_dump())
        planned.append((event, services.store.get_event(space, eid)))
    if batch is not None and _plan(batch, planned):
        journal.record(services, space, batch.scope.split("/", 1)[1], batch)
    saved: list[Event] = []
    for event, existing in planned:
        if existing is not None and existing.status == "active":
            saved.append(existing)  # already written (see above)
            continue
        try:
            if existing is None:
                saved.append(services.store.create_event(event))
            else:  # the same evidence came back after a rollback: revive, keeping history
                revived = event.model_copy(update={"created_at": existing.created_at})
                saved.append(services.store.update_event(revived, existing.version))
        except ConflictError:  # another writer (a duplicate job) wrote it first
            current = services.store.get_event(space, event.id)
            if current is not None and current.status == "active":
                saved.append(current)
    return saved


def _plan(batch: JournalBatch, planned: Sequence[tuple[Event, Event | None]]) -> bool:
    """Add what the drafts will create or revive to the batch; True if anything was new.
    An active event already there is no one's to claim: a retried try planned it already."""
    revived = {event_id for event_id, _ in batch.revived}
    added = False
    for event, existing in planned:
        if existing is None and event.id not in batch.created:
            batch.created.append(event.id)
            added = True
        elif existing is not None and existing.status != "active" and event.id not in revived:
            batch.revived.append((event.id, existing.version))
            revived.add(event.id)
            added = True
    return added


def supersede_from(services: Services, space: str, session: str, seq: int,
                   now: datetime, batch: JournalBatch | None = None, *,
                   resumed: bool = False) -> list[Event]:
    """History safety: events citing any message at or after `seq` are rolled back
    (status superseded, a new version; never deleted) before the range is re-extracted.

    With a `batch`, the events and the versions they had are journalled first; a `resumed`
    batch (a retry of the same attempt) supersedes exactly the events its plan named, those
    not done yet — never the events the failed try already created. Returns the superseded
    events as they are now."""
    if resumed and batch is not None:
        planned = list(batch.superseded)
    else:
        planned = [(e.id, e.version) for e in iter_events(services.store, space)
                   if any(s.session == session and s.seq_end >= seq for s in e.sources)]
        if batch is not None and planned:
            batch.superseded = planned
            journal.record(services, space, session, batch)
    rolled = [e for e in (_supersede(services, space, event_id, version, now)
                          for event_id, version in planned) if e is not None]
    services.index.index_events(rolled)  # superseded events leave the indexes
    return rolled


def _supersede(services: Services, space: str, event_id: str, version: int,
               now: datetime) -> Event | None:
    """Version `version + 1` of the event, superseded — written now, or found written by an
    earlier try (or a racing writer). None if the event moved on otherwise meanwhile."""
    current = services.store.get_event(space, event_id)
    if current is not None and current.version == version:
        try:
            return services.store.update_event(
                current.model_copy(update={"status": "superseded", "updated_at": now}), version)
        except ConflictError:
            current = services.store.get_event(space, event_id)
    if current is not None and current.version == version + 1 and \
            current.status == "superseded":
        return current
    return None


def run_extraction(services: Services, space: str, session: str | None = None,
                   now: datetime | None = None) -> list[Event]:
    """Extract the named session, or every pending one of the space. Returns the events."""
    return run_extraction_result(services, space, session, now).events


def run_extraction_result(services: Services, space: str, session: str | None = None,
                          now: datetime | None = None) -> ExtractionResult:
    """`run_extraction`, with the draft checkpoint's counts summed over the sessions."""
    sessions = [session] if session else [s.session for s in pending_sessions(services, space)]
    result = ExtractionResult()
    for name in sessions:
        result.add(extract_session_result(services, space, name, now))
    return result

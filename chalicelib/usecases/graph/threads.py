"""Threads (arcs): a trip planned, booked, taken and remembered; a months-long project
(docs/graph.md). One `Thread` record each; an event is in at most one thread.

The linker (`link_threads`, after every extraction) puts each new event in the existing
thread it overlaps most (chalicelib.domain.links.overlap ≥ LINK_SCORE), or, when none does,
starts a thread with the recent unthreaded events it overlaps — never a thread of one event.
By hand: create, rename, add and remove events, merge one thread into another (PATCH, with
the version read: 409 when it changed since).
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from chalicelib.domain.entities import normalise
from chalicelib.domain.errors import BadRequest, Conflict, NotFound
from chalicelib.domain.links import LINK_SCORE, keywords, overlap
from chalicelib.domain.models import Event
from chalicelib.domain.records import Entity, Thread
from chalicelib.domain.textproc import query_terms
from chalicelib.ports import Services
from chalicelib.usecases.graph.models import (
    CreateThreadRequest,
    PatchThreadRequest,
    ThreadDetail,
    ThreadList,
    ThreadView,
)

RECENT_UNTHREADED = 200  # unthreaded events (latest written) a new event may start a thread with
MAX_KEYWORDS = 400  # words a thread keeps for matching; enough for a long arc
MAX_TITLE_NAMES = 2


@dataclass(frozen=True)
class Features:
    names: set[str]  # ids of the non-person entities the event names
    words: set[str]


def event_features(event: Event, entities: Sequence[Entity]) -> Features:
    named = [e for e in entities if e.kind != "person"]
    drop = [n for e in entities for n in (e.name, *e.aliases)]
    return Features({e.key for e in named},
                    keywords(f"{event.title} {event.summary}", drop))


def thread_features(thread: Thread) -> Features:
    return Features(set(thread.entities), set(thread.keywords))


def score(a: Features, b: Features) -> int:
    return overlap(a.names, a.words, b.names, b.words)


def thread_id(space: str, first_event: str) -> str:
    """Deterministic: the thread the linker starts from the same events has the same id."""
    return "th_" + hashlib.sha256(f"{space}\x1f{first_event}".encode()).hexdigest()[:16]


def ordered(events: Sequence[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (e.when.start, e.created_at, e.id))


def with_events(thread: Thread, events: Sequence[Event], features: Sequence[Features],
                now: datetime, existing: Sequence[Event] = ()) -> Thread:
    """The thread with these events added and its features grown. Its events are kept oldest
    first (`existing`: its events as loaded; ids that no longer load keep their place first)."""
    known = {e.id: e for e in [*existing, *events]}
    lost = [eid for eid in thread.events if eid not in known]
    ids = [*lost, *(e.id for e in ordered(list(known.values())))]
    names = sorted({*thread.entities, *(n for f in features for n in f.names)})
    words = [*thread.keywords, *sorted({w for f in features for w in f.words}
                                       - set(thread.keywords))][:MAX_KEYWORDS]
    return thread.model_copy(update={"events": ids, "entities": names, "keywords": words,
                                     "version": thread.version + 1, "updated_at": now})


def title_for(events: Sequence[Event], features: Sequence[Features],
              entities: dict[str, Entity]) -> str:
    """The named things the founding events share most ("Kyoto", "京都 · 大仓酒店"), else the
    first event's title."""
    counts = Counter(n for f in features for n in f.names)
    shared = [n for n, c in counts.most_common() if c > 1 and n in entities]
    if shared:
        return " · ".join(entities[n].name for n in shared[:MAX_TITLE_NAMES])
    return events[0].title


# ------------------------------------------------------------------ titles that tell apart


def distinct_titles(threads: Sequence[Thread], firsts: dict[str, Event],
                    entities: dict[str, Entity], now: datetime) -> list[Thread]:
    """The linker's threads renamed where several share a title (three arcs of one chat all
    about 杭州): each by what tells it apart (`telling_title`). Threads named by hand keep
    their title, and the others are told apart from it too. `firsts`: each thread's first
    event, by thread id. Returns the renamed threads."""
    groups = _by_title(threads)
    taken = set(groups)
    renamed: list[Thread] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        for thread in sorted((t for t in group if not t.manual), key=_age):
            others = [t for t in group if t.key != thread.key]
            title = telling_title(thread, others, firsts.get(thread.key), entities, taken)
            if title != thread.title:
                taken.add(normalise(title))
                renamed.append(thread.model_copy(update={
                    "title": title, "version": thread.version + 1, "updated_at": now}))
    return renamed


def sharing_a_title(threads: Sequence[Thread]) -> list[Thread]:
    """The threads whose title another thread has too."""
    return [t for group in _by_title(threads).values() if len(group) > 1 for t in group]


def _by_title(threads: Sequence[Thread]) -> dict[str, list[Thread]]:
    groups: dict[str, list[Thread]] = {}
    for thread in threads:
        groups.setdefault(normalise(thread.title), []).append(thread)
    return groups


def telling_title(thread: Thread, others: Sequence[Thread], first: Event | None,
                  entities: dict[str, Entity], taken: set[str]) -> str:
    """A title for `thread` no other thread has (`taken`: every title in use, normalised),
    in the chat's own words: the shared title and the thread's own named thing ("杭州 ·
    灵隐寺"), else its first event's title, else the shared title and that event's date."""
    own = own_name(thread, others, entities)
    candidates = [f"{thread.title} · {own}" if own else None, first.title if first else None,
                  f"{thread.title} · {first.when.start.date()}" if first else None]
    for title in candidates:
        if title and normalise(title) not in taken:
            return title
    return thread.title


def own_name(thread: Thread, others: Sequence[Thread],
             entities: dict[str, Entity]) -> str | None:
    """The named thing of this thread that the others with its title never name: the one
    most of its events name (the arc's own), then the most specific (fewest events in the
    whole space), then by name — so the same threads always get the same title."""
    theirs = {n for other in others for n in other.entities}
    in_title = normalise(thread.title)
    events = set(thread.events)
    own = [entities[n] for n in thread.entities
           if n in entities and n not in theirs and entities[n].kind != "person"
           and normalise(entities[n].name) not in in_title]
    if not own:
        return None
    best = min(own, key=lambda e: (-len(events & set(e.events)), len(e.events), e.name))
    return best.name


# ------------------------------------------------------------------ the linker


@dataclass
class Linked:
    """What the linker did: (event, thread id, its neighbour in the thread) per event."""

    joins: list[tuple[Event, str, str | None]]


def link_threads(services: Services, space: str, new: Sequence[Event],
                 recent: Sequence[Event], by_event: dict[str, list[Entity]],
                 entities: dict[str, Entity], now: datetime) -> Linked:
    """Put the new events in threads (module docstring). `recent`: the space's active events,
    oldest written first, to find unthreaded companions in. Idempotent: an event already in a
    thread is left where it is."""
    threads = {t.key: t for t in services.store.list_records(Thread, space)}
    threaded = {eid: t.key for t in threads.values() for eid in t.events}
    feats = {e.id: event_features(e, by_event.get(e.id, [])) for e in [*recent, *new]}
    changed: set[str] = set()
    started: set[str] = set()
    joins: list[tuple[Event, str, str | None]] = []

    def join(thread: Thread, events: Sequence[Event]) -> None:
        existing = services.store.load_events(space, thread.events) if thread.events else []
        updated = with_events(thread, events, [feats[e.id] for e in events], now, existing)
        threads[updated.key] = updated
        changed.add(updated.key)
        for event in events:
            threaded[event.id] = updated.key
            at = updated.events.index(event.id)
            # its neighbour in time: the event before it, or after it when it is the first
            near = updated.events[at - 1] if at else (updated.events[1:2] or [None])[0]
            joins.append((event, updated.key, near))

    for event in new:
        if event.id in threaded or event.status != "active":
            continue
        best = max(((score(feats[event.id], thread_features(t)), -i, t)
                    for i, t in enumerate(sorted(threads.values(), key=_age))),
                   key=lambda x: x[:2], default=None)
        if best and best[0] >= LINK_SCORE:
            join(best[2], [event])

    pool = [e for e in [*recent[-RECENT_UNTHREADED:], *new]
            if e.id not in threaded and e.status == "active"]
    for event in new:
        if event.id in threaded or event.status != "active":
            continue
        group = [e for e in dict((x.id, x) for x in pool).values()
                 if e.id != event.id and e.id not in threaded
                 and score(feats[event.id], feats[e.id]) >= LINK_SCORE]
        if not group:
            continue  # never a thread for one event
        members = ordered([event, *group])
        key = thread_id(space, members[0].id)
        if key in threads:
            continue  # made (and maybe edited by hand) before: leave it to the hand
        title = title_for(members, [feats[e.id] for e in members], entities)
        empty = Thread(scope=space, key=key, title=title, created_at=now, updated_at=now,
                       version=0)
        join(empty, members)
        started.add(key)
    if started:  # only a new thread can share the title of another
        firsts = _firsts(services, space, sharing_a_title(list(threads.values())))
        for thread in distinct_titles(list(threads.values()), firsts, entities, now):
            threads[thread.key] = thread
            changed.add(thread.key)
    for key in sorted(changed):
        services.store.put_record(threads[key])
    return Linked(joins)


def _firsts(services: Services, space: str, threads: Sequence[Thread]) -> dict[str, Event]:
    """Each thread's first event (its events are kept oldest first), in one load."""
    heads = [t.events[0] for t in threads if t.events]
    loaded = {e.id: e for e in services.store.load_events(space, heads)} if heads else {}
    return {t.key: loaded[t.events[0]] for t in threads if t.events and t.events[0] in loaded}


def _age(thread: Thread) -> tuple:
    return (thread.created_at, thread.key)


# ------------------------------------------------------------------ routes


def list_threads(services: Services, space: str) -> ThreadList:
    threads = sorted(services.store.list_records(Thread, space), key=lambda t: (
        -t.updated_at.timestamp(), t.key))
    return ThreadList(threads=[ThreadView.of(t) for t in threads])


def thread_of(services: Services, space: str, event_id: str) -> Thread | None:
    """The thread an event belongs to (an event is in at most one), or None."""
    return next((t for t in services.store.list_records(Thread, space)
                 if event_id in t.events), None)


def load_thread(services: Services, space: str, key: str) -> Thread:
    thread = services.store.get_record(Thread, space, key)
    if thread is None:
        raise NotFound(f"no thread {key!r} in space {space!r}")
    return thread


def get_thread(services: Services, space: str, key: str) -> ThreadDetail:
    thread = load_thread(services, space, key)
    events = ordered(services.store.load_events(space, thread.events))
    return ThreadDetail(**ThreadView.of(thread).model_dump(), materials=events)


def _events(services: Services, space: str, ids: Sequence[str]) -> list[Event]:
    found = services.store.load_events(space, list(dict.fromkeys(ids)))
    missing = sorted(set(ids) - {e.id for e in found})
    if missing:
        raise BadRequest(f"no events {missing} in space {space!r}", code="unknown_event")
    return found


def _free(services: Services, space: str, ids: Sequence[str], mine: str | None) -> None:
    """An event is in at most one thread: refuse one that is in another."""
    for thread in services.store.list_records(Thread, space):
        taken = sorted(set(ids) & set(thread.events))
        if thread.key != mine and taken:
            raise Conflict(f"events {taken} are in thread {thread.key!r}; remove them there "
                           "first", code="event_in_thread")


def _features(services: Services, space: str, events: Sequence[Event]) -> list[Features]:
    by_event: dict[str, list[Entity]] = {}
    for entity in services.store.list_records(Entity, space):
        for eid in entity.events:
            by_event.setdefault(eid, []).append(entity)
    return [event_features(e, by_event.get(e.id, [])) for e in events]


def create_thread(services: Services, space: str, request: CreateThreadRequest) -> ThreadView:
    now = services.clock()
    events = _events(services, space, request.events)
    _free(services, space, request.events, None)
    thread = Thread(scope=space, key="th_" + uuid.uuid4().hex[:16], title=request.title,
                    aliases=request.aliases, manual=True, created_at=now, updated_at=now,
                    version=0)
    thread = with_events(thread, events, _features(services, space, events), now)
    services.store.put_record(thread)
    return ThreadView.of(thread)


def patch_thread(services: Services, space: str, key: str,
                 request: PatchThreadRequest) -> ThreadView:
    """Edit a thread (optimistic: `version` must be the current one). Records have no
    conditional write, so this is check-then-write: a race between two PATCHes in the same
    instant can still lose one (the linker and the web app rarely meet)."""
    now = services.clock()
    thread = load_thread(services, space, key)
    if thread.version != request.version:
        raise Conflict(f"thread {key!r} is at version {thread.version}, not "
                       f"{request.version}", details={"current_version": thread.version})
    if request.merge_into:
        return _merge(services, space, thread, request.merge_into, now)
    added = _events(services, space, [e for e in request.add_events
                                      if e not in thread.events])
    _free(services, space, [e.id for e in added], key)
    changes: dict = {"manual": True}
    if request.title is not None:
        changes["title"] = request.title
    if request.aliases is not None:
        changes["aliases"] = request.aliases
    kept = [e for e in thread.events if e not in set(request.remove_events)]
    thread = thread.model_copy(update={**changes, "events": kept})
    thread = with_events(thread, added, _features(services, space, added), now,
                         services.store.load_events(space, kept))
    services.store.put_record(thread)
    return ThreadView.of(thread)


def _merge(services: Services, space: str, thread: Thread, target_key: str,
           now: datetime) -> ThreadView:
    if target_key == thread.key:
        raise BadRequest("a thread cannot be merged into itself", code="merge_into_self")
    target = load_thread(services, space, target_key)
    events = services.store.load_events(space, thread.events)
    aliases = list(dict.fromkeys([*target.aliases, thread.title, *thread.aliases]))
    merged = target.model_copy(update={
        "aliases": [a for a in aliases if a != target.title],
        "summaries": list(dict.fromkeys([*target.summaries, *thread.summaries])),
        "entities": sorted({*target.entities, *thread.entities}),
        "keywords": list(dict.fromkeys([*target.keywords, *thread.keywords]))[:MAX_KEYWORDS],
        "manual": True})
    merged = with_events(merged, events, [], now,
                         services.store.load_events(space, target.events))
    services.store.put_record(merged)  # written first: a failure here loses nothing
    services.store.delete_records(Thread, space, [thread.key])
    return ThreadView.of(merged)


def find_threads(services: Services, space: str, query: str, limit: int = 10) -> list[Thread]:
    """Threads whose title, aliases or words share the query's words, best first."""
    terms = set(query_terms(query))
    scored = []
    for thread in services.store.list_records(Thread, space):
        named = set(query_terms(" ".join([thread.title, *thread.aliases])))
        hits = 3 * len(terms & named) + len(terms & set(thread.keywords))
        if hits or not terms:
            scored.append((-hits, -thread.updated_at.timestamp(), thread.key, thread))
    return [t for *_, t in sorted(scored, key=lambda x: x[:3])[:limit]]

"""Relations between events (docs/graph.md), one `Relation` record each (key "src|kind|dst"):

- `updates`: a later event says a fact changed and names, or is of the kind of, the earlier
  one (src = the later; `updates.update_relations`, at link time, the old event stays active),
  or the merge pass replaced an earlier event with a later one (`record_updates`);
- `same_thread`: an event joined a thread; it points to the thread's event before it;
- `causes` / `follows`: the event's words say it came of, or after, the event before it in
  the same session ("because", "so", "after", 因为, 所以, 之后 …), and the two share a named
  thing (a person does not count: the speakers are in every event of a session).

Writing a relation that exists changes nothing, so a retried extraction or merge pass writes
the same records again at most once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from chalicelib.domain.links import sequence_marker
from chalicelib.domain.merge import MergeInstruction, MergeResult
from chalicelib.domain.models import Event
from chalicelib.domain.records import Entity, Relation, RelationKind
from chalicelib.ports import Services
from chalicelib.usecases.graph.models import EventRelation

SEQUENCE_LOOKBACK = 6  # events of the session before this one that "the previous" may be


def relation_key(src: str, kind: str, dst: str) -> str:
    return f"{src}|{kind}|{dst}"


def relation(space: str, src: str, kind: RelationKind, dst: str, note: str,
             at: datetime) -> Relation:
    return Relation(scope=space, key=relation_key(src, kind, dst), src=src, dst=dst,
                    kind=kind, note=note[:300], created_at=at)


def save_relations(services: Services, space: str, relations: Iterable[Relation],
                   existing: set[str] | None = None) -> list[Relation]:
    """Write the relations not there yet (by key); returns those written."""
    if existing is None:
        existing = {r.key for r in services.store.list_records(Relation, space)}
    written = []
    for rel in relations:
        if rel.key in existing or rel.src == rel.dst:
            continue
        services.store.put_record(rel)
        existing.add(rel.key)
        written.append(rel)
    return written


def relations_of(services: Services, space: str, event_id: str) -> list[EventRelation]:
    """Every relation with the event at either end, oldest first."""
    rels = [r for r in services.store.list_records(Relation, space)
            if event_id in (r.src, r.dst)]
    rels.sort(key=lambda r: (r.created_at, r.key))
    return [EventRelation.of(r) for r in rels]


# ------------------------------------------------------------------ causes / follows


def session_order(event: Event, session: str) -> int:
    return min((s.seq_start for s in event.sources if s.session == session), default=-1)


def sequence_relations(space: str, session: str, new: Sequence[Event],
                       session_events: Sequence[Event], names: dict[str, set[str]],
                       ) -> list[Relation]:
    """causes / follows between each new event whose words say so and the latest event
    before it in the session that shares a named thing with it. `names`: event id → the
    ids of its non-person entities."""
    ordered = sorted(session_events, key=lambda e: (session_order(e, session), e.id))
    out = []
    for event in new:
        marker = sequence_marker(event.summary)
        if marker is None:
            continue
        kind, words = marker
        here = session_order(event, session)
        before = [e for e in ordered if session_order(e, session) < here and e.id != event.id]
        for prev in reversed(before[-SEQUENCE_LOOKBACK:]):
            shared = names.get(event.id, set()) & names.get(prev.id, set())
            if not shared:
                continue
            note = f"“{words}”"
            at = event.created_at
            if kind == "causes":  # the earlier happening led to this one
                out.append(relation(space, prev.id, "causes", event.id, note, at))
            else:
                out.append(relation(space, event.id, "follows", prev.id, note, at))
            break
    return out


def named_ids(entities: dict[str, Entity]) -> dict[str, set[str]]:
    """event id → ids of the non-person entities it names."""
    out: dict[str, set[str]] = {}
    for entity in entities.values():
        if entity.kind == "person":
            continue
        for event_id in entity.events:
            out.setdefault(event_id, set()).add(entity.key)
    return out


# ------------------------------------------------------------------ updates (the merge pass)


def replaced_pairs(window: Sequence[Event], instructions: Sequence[MergeInstruction],
                   result: MergeResult) -> list[tuple[str, str, str]]:
    """(new, old, why) for each event the pass supersedes in favour of a later one: an
    update or add that takes over its sources (merge_from). A newer duplicate folded into an
    older keeper is not an update (nothing later replaced anything)."""
    order = {e.id: i for i, e in enumerate(window)}  # the window is oldest first
    gone = {e.id for e in result.superseded}
    kept = {e.id for e in (*result.updated, *result.created)} | set(order)
    out = []
    for ins in instructions:
        if ins.action not in ("update", "add") or not ins.id or ins.id not in kept:
            continue
        for donor in ins.merge_from:
            if donor in gone and donor != ins.id and \
                    order.get(donor, -1) < order.get(ins.id, len(order)):
                out.append((ins.id, donor, ins.reason or "replaced"))
    return out


def record_updates(services: Services, space: str, window: Sequence[Event],
                   instructions: Sequence[MergeInstruction], result: MergeResult,
                   now: datetime) -> list[Relation]:
    """Write an `updates` relation for every replacement of this merge window."""
    pairs = replaced_pairs(window, instructions, result)
    if not pairs:
        return []
    return save_relations(services, space, [relation(space, new, "updates", old, why, now)
                                            for new, old, why in pairs])

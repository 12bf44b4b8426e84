"""The memory graph (docs/graph.md): entities, threads and relations between events.

`after_extraction` is the one hook: `extract.extract_session` calls it for the events it just
wrote, after indexing them and before marking the session extracted — so a failure here is
retried with the extraction, and every step is idempotent (deterministic ids; a link that
exists is not written again). An event saying a fact changed `updates` the earlier one
(`updates.update_relations`, the old event stays active for questions about the past); the
merge pass records `updates` of the events it supersedes itself (`relations.record_updates`);
a reader's corrections (a model's "this turn corrects that event") are `updates` too
(`updates.corrected`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime

from chalicelib.domain.models import Event
from chalicelib.ports import Correction, Services, iter_events
from chalicelib.usecases.graph import entities as entities_uc
from chalicelib.usecases.graph import relations as relations_uc
from chalicelib.usecases.graph import threads as threads_uc
from chalicelib.usecases.graph import updates as updates_uc


def after_extraction(services: Services, space: str, session: str, events: Sequence[Event],
                     now: datetime,
                     mentions: Mapping[str, Sequence[tuple[str, str]]] | None = None,
                     corrections: Sequence[Correction] = ()) -> dict[str, int]:
    """Link the entities, threads and relations of `events` (one session's new events).
    `mentions`: what an LLM extractor named per event id, (name, kind), kept where verbatim;
    `corrections`: the turns its reader said correct an earlier event (`updates`).
    Returns counts of what it linked."""
    # Summaries retell events (summaries.py): linking them would double every link.
    active = [e for e in events if e.status == "active" and e.kind != "summary"]
    if not active:
        return {"entities": 0, "threads": 0, "relations": 0}
    entities = entities_uc.link_entities(services, space, active, now, mentions or {})
    by_event = entities_uc.entities_by_event(entities)
    new_ids = {e.id for e in active}
    recent = sorted((e for e in iter_events(services.store, space)
                     if e.id not in new_ids and e.kind != "summary"),
                    key=lambda e: (e.created_at, e.id))
    linked = threads_uc.link_threads(services, space, active, recent, by_event, entities, now)
    names = relations_uc.named_ids(entities)
    session_events = [e for e in [*recent, *active]
                      if any(s.session == session for s in e.sources)]
    rels = relations_uc.sequence_relations(space, session, active, session_events, names)
    rels += updates_uc.update_relations(services, space, session, active, recent, entities,
                                        names)
    rels += updates_uc.corrected(space, session, active, recent, corrections)
    rels += [relations_uc.relation(space, event.id, "same_thread", prev,
                                   f"thread {thread}", event.created_at)
             for event, thread, prev in linked.joins if prev is not None]
    written = relations_uc.save_relations(services, space, rels)
    return {"entities": sum(bool(by_event.get(e.id)) for e in active),
            "threads": len({t for _, t, _ in linked.joins}), "relations": len(written)}


def rebuild(services: Services, space: str, now: datetime) -> dict[str, int]:
    """Link every active event of a space, session by session in the order they were
    written: for events extracted before the graph existed (an upgrade, an import of events).
    Idempotent like the hook, so running it twice changes nothing."""
    by_session: dict[str, list[Event]] = defaultdict(list)
    for event in iter_events(services.store, space):
        if event.kind != "summary" and event.sources:
            by_session[event.sources[0].session].append(event)
    order = sorted(by_session, key=lambda s: min(e.created_at for e in by_session[s]))
    totals = {"sessions": len(order), "entities": 0, "threads": 0, "relations": 0}
    for session in order:
        counts = after_extraction(services, space, session,
                                  sorted(by_session[session], key=lambda e: (e.when.start, e.id)),
                                  now)
        for key, value in counts.items():
            totals[key] += value
    return totals

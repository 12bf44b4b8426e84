"""Forgetting (seed 001): an event's retention falls with age and rises with importance and
with real use (deliveries a chat host reported). Low-retention events are archived — never
deleted: they leave default recall, stay listed with `?status=archived` and in the exported
timeline with `?status=all`, and a PATCH back to `active` restores them.

retention = 0.5 ** (days since Annals learned the event, or its last use / half-life), where
half-life = half_life_days × importance / 5 × (1 + uses). Key events (importance ≥
keep_importance) and plans still ahead never fade.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from chalicelib.domain.models import Event
from chalicelib.domain.records import MemoryUse
from chalicelib.ports import Services, iter_events


def usage(services: Services, space: str) -> dict[str, MemoryUse]:
    return {u.key: u for u in services.store.list_records(MemoryUse, space)}


def record_use(services: Services, space: str, refs: Iterable[str], at: datetime) -> None:
    """Count real injections of event cards (called when a host reports a delivery): one
    small record per memory, so concurrent deliveries of other memories never collide.
    Idempotent for a delivery sent again (its request retried after a failure part-way):
    a use at the very time already counted last is the same use."""
    for ref in dict.fromkeys(r for r in refs if r.startswith("event:")):
        before = services.store.get_record(MemoryUse, space, ref)
        if before is not None and before.last == at:
            continue
        count, last = (before.count, max(before.last, at)) if before else (0, at)
        services.store.put_record(MemoryUse(scope=space, key=ref, count=count + 1, last=last))


def retention(event: Event, now: datetime, use: MemoryUse | None, half_life_days: float) -> float:
    # Age counts from when Annals learned the event (or last really used it), never from the
    # event's own date: a year of imported history is fresh the day it is imported.
    anchor = max(filter(None, [event.created_at, use.last if use else None]))
    age_days = max(0.0, (now - anchor).total_seconds() / 86400)
    half_life = half_life_days * max(event.importance, 1) / 5 * (1 + (use.count if use else 0))
    return 0.5 ** (age_days / half_life)


def should_fade(event: Event, now: datetime, use: MemoryUse | None, settings) -> bool:
    if event.importance >= settings.forget_keep_importance:
        return False
    if event.plan and event.when.end > now:
        return False
    return retention(event, now, use, settings.forget_half_life_days) < settings.forget_threshold


def fade_space(services: Services, space: str, now: datetime) -> list[Event]:
    """Archive the active events of a space whose retention fell below the threshold."""
    used = usage(services, space)
    fading = [e for e in iter_events(services.store, space)
              if should_fade(e, now, used.get(e.ref), services.settings)]
    archived = [services.store.update_event(event.model_copy(update={
        "status": "archived", "tags": sorted({*event.tags, "faded"}), "updated_at": now}),
        event.version) for event in fading]
    services.index.index_events(archived)  # archived events leave the indexes
    return archived

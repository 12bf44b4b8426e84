"""Forgetting (seed 001): an event's retention falls with age and rises with importance and
with real use (deliveries a chat host reported). Low-retention events are archived — never
deleted: they leave default recall, stay listed with `?status=archived` and in the exported
timeline with `?status=all`, and a PATCH back to `active` restores them.

retention = 0.5 ** (days since the event or its last use / half-life), where
half-life = half_life_days × importance / 5 × (1 + uses). Key events (importance ≥
keep_importance) and plans still ahead never fade.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from chalicelib.domain.models import Event
from chalicelib.usecases.indexing import unindex
from chalicelib.wiring import Services

USAGE_JOB = "usage"
MAX_TRACKED = 5000  # refs kept per space in the usage record (the least recently used drop)


@dataclass(frozen=True)
class Usage:
    count: int = 0
    last: datetime | None = None


def usage(services: Services, space: str) -> dict[str, Usage]:
    raw = services.store.get_job_state(USAGE_JOB, space) or {}
    return {ref: Usage(u["count"], datetime.fromisoformat(u["last"]))
            for ref, u in raw.get("refs", {}).items()}


def record_use(services: Services, space: str, refs: Iterable[str], at: datetime) -> None:
    """Count real injections of event cards (called when a host reports a delivery)."""
    current = usage(services, space)
    for ref in refs:
        if ref.startswith("event:"):
            before = current.get(ref, Usage())
            current[ref] = Usage(before.count + 1, max(filter(None, [before.last, at])))
    recent = sorted(current.items(), key=lambda kv: kv[1].last, reverse=True)[:MAX_TRACKED]
    services.store.put_job_state(USAGE_JOB, space, {"refs": {
        ref: {"count": u.count, "last": u.last.isoformat()} for ref, u in recent}})


def retention(event: Event, now: datetime, use: Usage, half_life_days: float) -> float:
    anchor = max(filter(None, [event.when.end, use.last]))
    age_days = max(0.0, (now - anchor).total_seconds() / 86400)
    half_life = half_life_days * max(event.importance, 1) / 5 * (1 + use.count)
    return 0.5 ** (age_days / half_life)


def should_fade(event: Event, now: datetime, use: Usage, settings) -> bool:
    if event.importance >= settings.forget_keep_importance:
        return False
    if event.plan and event.when.end > now:
        return False
    return retention(event, now, use, settings.forget_half_life_days) < settings.forget_threshold


def fade_space(services: Services, space: str, now: datetime) -> list[Event]:
    """Archive the active events of a space whose retention fell below the threshold."""
    used = usage(services, space)
    archived: list[Event] = []
    cursor = None
    while True:
        page = services.store.list_events(space, limit=200, cursor=cursor)
        for event in page.events:
            if should_fade(event, now, used.get(event.ref, Usage()), services.settings):
                tags = sorted({*event.tags, "faded"})
                archived.append(services.store.update_event(event.model_copy(update={
                    "status": "archived", "tags": tags, "updated_at": now}), event.version))
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    unindex(services, space, [e.ref for e in archived])  # as for any archived event
    return archived

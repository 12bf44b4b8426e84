"""Forgetting: old, unimportant, unused events are archived (never deleted) and restorable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.domain.models import DeliveryRequest, Event, PatchEventRequest, RecallRequest, When
from chalicelib.domain.records import MemoryUse
from chalicelib.usecases import events as events_uc
from chalicelib.usecases import export, forgetting
from chalicelib.usecases.recall import recall

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=120)


def event(eid: str, summary: str, importance: int, day: int = 0, plan: bool = False) -> Event:
    start = T0 + timedelta(days=day)
    return Event(id=eid, space="sp", title=summary[:20], summary=summary, importance=importance,
                 when=When(start=start, end=start + timedelta(days=1)), plan=plan,
                 created_at=T0, updated_at=T0)


def test_retention_halves_per_half_life_and_use_slows_it():
    ev = event("a", "x", importance=5)
    age = ev.when.end + timedelta(days=30)
    assert forgetting.retention(ev, age, None, 30) == 0.5
    used = MemoryUse(scope="sp", key=ev.ref, count=1, last=ev.when.end)
    assert round(forgetting.retention(ev, age, used, 30), 3) == 0.707
    key = event("k", "x", importance=10)
    assert forgetting.retention(key, age, None, 30) > 0.7


def test_fading_archives_old_unused_events_and_keeps_the_rest(services):
    from chalicelib.usecases.deliveries import record_deliveries

    evs = [event("old", "Sam tried a new ramen place downtown", 3),
           event("key", "Sam's sister got married in Lisbon", 9),
           event("used", "Sam started learning the cello", 3),
           event("plan", "Sam will run a marathon in the autumn", 3, day=200, plan=True)]
    for ev in evs:
        services.store.create_event(ev)
    services.index.index_events(evs)
    record_deliveries(services, "sp", DeliveryRequest(window="w", ids=["event:used"],
                                                      at=NOW - timedelta(days=2)))

    faded = forgetting.fade_space(services, "sp", NOW)
    assert [e.id for e in faded] == ["old"]
    old = services.store.get_event("sp", "old")
    assert old.status == "archived" and "faded" in old.tags and old.version == 2

    hits = recall(services, "sp", RecallRequest(query="ramen place", max_cards=5)).recalled_ids
    assert "event:old" not in hits
    archived = events_uc.list_events(services, "sp", statuses=("archived",)).events
    assert [e.id for e in archived] == ["old"]
    md = export.export_markdown(services, "sp", status="all")
    assert "ramen" in md and "(archived)" in md
    assert "ramen" not in export.export_markdown(services, "sp")

    events_uc.patch_event(services, "sp", "old", PatchEventRequest(version=2, status="active"))
    hits = recall(services, "sp", RecallRequest(query="ramen place", max_cards=5)).recalled_ids
    assert "event:old" in hits


def test_the_cooldown_job_fades_and_compacts(services, put):
    from chalicelib.usecases import jobs
    from chalicelib.usecases.extract import extract_session

    put("c1", [(0, "user", "Sam", "I tried a new ramen place downtown."),
               (1, "assistant", "Aria", "Was it good?")])
    extract_session(services, "sp", "c1", T0)
    later = datetime.now(UTC) + timedelta(days=400)
    result = jobs.run_job("cooldown", services, later).as_dict()
    assert result["faded"] and result["compacted_journal_batches"] == 1
    assert all(e.status == "archived"
               for e in services.store.list_events("sp", statuses=("archived",)).events)

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
    age = ev.created_at + timedelta(days=30)
    assert forgetting.retention(ev, age, None, 30) == 0.5
    used = MemoryUse(scope="sp", key=ev.ref, count=1, last=ev.created_at)
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


def test_age_counts_from_when_annals_learned_the_event_not_its_date():
    """A year of imported history is fresh the day it is imported."""
    old_date = event("old", "Sam's first day at school", importance=3, day=-400)
    learned_today = old_date.model_copy(update={"created_at": NOW, "updated_at": NOW})
    assert forgetting.retention(learned_today, NOW, None, 30) == 1.0


def test_the_readme_walkthrough_then_cooldown_archives_nothing(services, put):
    """README: four messages from June 2026 extracted today (months later); the cooldown job
    right after archives none of them."""
    from datetime import timezone

    from chalicelib.usecases import jobs
    from chalicelib.usecases.extract import extract_session

    cst = timezone(timedelta(hours=8))
    put("s1", [(1, "user", "小明", "我今天领养了一只橘猫，取名叫奶糖"),
               (2, "user", "小明", "奶糖昨天进行了体检，结果一切正常"),
               (3, "user", "Sam", "I started learning the cello with a teacher downtown"),
               (4, "user", "Sam", "I finally booked the flight to Lisbon for my sister's wedding")],
        space="sp", base=datetime(2026, 6, 1, 20, 0, tzinfo=cst))
    today = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    events = extract_session(services, "sp", "s1", today)
    assert len(events) >= 4
    result = jobs.run_job("cooldown", services, today + timedelta(minutes=1)).as_dict()
    assert result["faded"] == {}
    assert services.store.list_events("sp", statuses=("archived",)).events == []

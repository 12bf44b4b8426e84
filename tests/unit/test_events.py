"""chalicelib.usecases.events: the timeline, evidence, manual saves, versioned edits, archive, history."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, time, timedelta

import pytest
from pydantic import ValidationError

from chalicelib.domain.errors import AnnalsError, BadRequest, Conflict, NotFound
from chalicelib.domain.models import PatchEventRequest, RecallRequest, SaveEventRequest, When
from chalicelib.ports import ConflictError
from chalicelib.usecases import events
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.recall import recall
from tests.unit.conftest import CST, SPACE, T0


def save(services, summary, day=None, **kw):
    happened = None if day is None else datetime(2026, day[0], day[1], 15, 30, tzinfo=CST)
    return events.save_event(services, SPACE, SaveEventRequest(summary=summary,
                                                                happened_at=happened, **kw))


@pytest.fixture
def three(services, clock):
    """Three notes saved out of order: June 14, May 3, June 1."""
    return [
        save(services, "奶糖去医院做了体检，结果一切正常", (6, 14), importance=7),
        save(services, "Adopted a kitten named Mochi", (5, 3), importance=8),
        save(services, "Mochi learned to open the fridge", (6, 1)),
    ]


class TestSave:
    def test_saved_on_a_day_in_the_given_offset(self, services, clock):
        event = save(services, "Adopted a kitten named Mochi", (5, 3), tags=["pets"],
                     participants=["Mel"], importance=8)
        assert event.id.startswith("ev_")
        assert event.when == When(start=datetime(2026, 5, 3, tzinfo=CST),
                                  end=datetime(2026, 5, 4, tzinfo=CST), granularity="day")
        assert (event.kind, event.status, event.version) == ("note", "active", 1)
        assert (event.title, event.summary) == ("Adopted a kitten named Mochi",) * 2
        assert (event.tags, event.participants, event.importance) == (["pets"], ["Mel"], 8)
        assert event.created_at == event.updated_at == T0
        assert events.get_event(services, SPACE, event.id) == event

    def test_without_a_day_it_is_today_in_the_zone(self, services, clock):
        event = save(services, "Had coffee with Jo")  # no ANNALS_TZ: UTC's day
        today = datetime.combine(T0.astimezone(UTC).date(), time(), UTC)
        assert event.when == When(start=today, end=today + timedelta(days=1),
                                  granularity="day")
        assert event.importance == 6  # the default for a hand-written memory
        there = events.save_event(services, SPACE, SaveEventRequest(summary="Tea with Jo"),
                                  zone=CST)
        assert there.when.start == datetime.combine(T0.astimezone(CST).date(), time(), CST)

    def test_details_are_appended_and_title_comes_from_the_summary(self, services, clock):
        event = save(services, "奶糖去医院做了体检，结果一切正常，医生还夸它很健康呢", (6, 14),
                     details="体重 4.2 公斤")
        assert event.summary == "奶糖去医院做了体检，结果一切正常，医生还夸它很健康呢\n体重 4.2 公斤"
        assert event.title == "奶糖去医院做了体检，结果一切正常，医生还夸它很…"
        assert len(event.title) == 24

    def test_blank_summary_is_a_client_error(self, services, clock):
        with pytest.raises((AnnalsError, ValidationError)):
            save(services, "   ")

    def test_saved_memory_is_searchable(self, services, clock):
        event = save(services, "Adopted a kitten named Mochi", (5, 3))
        hits = services.keywords.keyword_search(SPACE, "kitten", 5)
        assert [h.id for h in hits] == [event.ref]


class TestList:
    def test_oldest_first(self, services, three):
        listed = events.list_events(services, SPACE)
        assert [e.summary for e in listed.events] == [
            "Adopted a kitten named Mochi", "Mochi learned to open the fridge",
            "奶糖去医院做了体检，结果一切正常"]
        assert listed.next_cursor is None

    def test_cursor_pagination_visits_each_event_once(self, services, clock):
        saved = [save(services, f"Note number {i} about the garden", (6, 1 + i % 3))
                 for i in range(7)]
        seen, cursor, pages = [], None, 0
        while True:
            page = events.list_events(services, SPACE, limit=2, cursor=cursor)
            assert len(page.events) <= 2
            seen += page.events
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == 4
        assert sorted(e.id for e in seen) == sorted(e.id for e in saved)
        keys = [(e.when.start, e.id) for e in seen]
        assert keys == sorted(keys)  # oldest first, ties by id, across page boundaries

    def test_time_filter_keeps_overlapping_events(self, services, three):
        june = events.list_events(services, SPACE, start=datetime(2026, 6, 1, tzinfo=CST),
                                  end=datetime(2026, 7, 1, tzinfo=CST))
        assert [e.id for e in june.events] == [three[2].id, three[0].id]

    def test_bad_cursor_is_a_400(self, services, three):
        with pytest.raises(BadRequest) as err:
            events.list_events(services, SPACE, cursor="not-a-cursor")
        assert err.value.code == "invalid_cursor"

    def test_spaces_do_not_leak(self, services, three):
        assert events.list_events(services, "other").events == []


class TestGet:
    def test_missing_is_not_found(self, services):
        with pytest.raises(NotFound):
            events.get_event(services, SPACE, "ev_nope")

    def test_evidence_is_the_cited_messages_verbatim(self, services, put, clock):
        put("c1", [(0, "user", "小明", "你好呀"),
                   (1, "user", "小明", "我家的猫奶糖被确诊了肾病。"),
                   (2, "assistant", "Aki", "好的")])
        [event] = extract_session(services, SPACE, "c1")
        got = events.get_event(services, SPACE, event.id)
        assert [(m.seq, m.content) for m in events.evidence(services, got)] == [
            (1, "我家的猫奶糖被确诊了肾病。")]


class TestPatch:
    def test_right_version_bumps_version_and_adds_history(self, services, three, clock):
        event = three[1]
        clock.now = T0 + timedelta(hours=1)
        patched = events.patch_event(services, SPACE, event.id, PatchEventRequest(
            version=1, title="Mochi arrives", importance=9, tags=["pets"]))
        assert (patched.version, patched.title, patched.importance, patched.tags) == (
            2, "Mochi arrives", 9, ["pets"])
        assert patched.summary == event.summary  # untouched fields stay
        assert patched.created_at == T0 and patched.updated_at == T0 + timedelta(hours=1)
        assert events.get_event(services, SPACE, event.id) == patched
        assert [v.version for v in events.history(services, SPACE, event.id)] == [1, 2]

    def test_stale_version_is_a_409_and_changes_nothing(self, services, three):
        event = three[1]
        events.patch_event(services, SPACE, event.id, PatchEventRequest(version=1, importance=9))
        with pytest.raises(Conflict) as err:
            events.patch_event(services, SPACE, event.id,
                               PatchEventRequest(version=1, title="lost update"))
        assert err.value.status == 409
        assert err.value.details == {"current_version": 2}
        current = events.get_event(services, SPACE, event.id)
        assert (current.version, current.title) == (2, event.title)

    def test_store_rejects_a_stale_write_with_conflict_error(self, services, three):
        event = three[1]
        events.patch_event(services, SPACE, event.id, PatchEventRequest(version=1, importance=9))
        with pytest.raises(ConflictError):
            services.store.update_event(event.model_copy(update={"title": "x"}), 1)

    def test_empty_patch_is_a_400(self, services, three):
        with pytest.raises(BadRequest) as err:
            events.patch_event(services, SPACE, three[0].id, PatchEventRequest(version=1))
        assert err.value.code == "empty_patch"

    def test_patched_text_is_reindexed(self, services, three):
        events.patch_event(services, SPACE, three[1].id, PatchEventRequest(
            version=1, title="Luna arrives", summary="Adopted a puppy named Luna"))
        assert services.keywords.keyword_search(SPACE, "kitten", 5) == []
        assert [h.id for h in services.keywords.keyword_search(SPACE, "puppy", 5)] == [
            three[1].ref]

    def test_patch_when_moves_the_event_on_the_timeline(self, services, three):
        when = When(start=datetime(2026, 7, 1, tzinfo=CST), end=datetime(2026, 7, 2, tzinfo=CST))
        patched = events.patch_event(services, SPACE, three[1].id,
                                     PatchEventRequest(version=1, when=when))
        assert patched.when == when
        assert events.list_events(services, SPACE).events[-1].id == three[1].id

    def test_patch_when_emits_no_serializer_warning(self, services, three):
        when = When(start=datetime(2026, 7, 1, tzinfo=CST), end=datetime(2026, 7, 2, tzinfo=CST))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            events.patch_event(services, SPACE, three[1].id,
                               PatchEventRequest(version=1, when=when))


class TestArchive:
    @pytest.mark.usefixtures("timeparse_or_stub")
    def test_archive_hides_from_list_and_recall_but_keeps_it_readable(self, services, three):
        target = three[1]
        before = recall(services, SPACE, RecallRequest(query="kitten Mochi", max_cards=5))
        assert target.ref in before.recalled_ids

        archived = events.archive_event(services, SPACE, target.id)
        assert (archived.status, archived.version) == ("archived", 2)
        assert target.id not in [e.id for e in events.list_events(services, SPACE).events]
        assert [e.id for e in events.list_events(services, SPACE,
                                                 statuses=("archived",)).events] == [target.id]
        after = recall(services, SPACE, RecallRequest(query="kitten Mochi", max_cards=5))
        assert target.ref not in after.recalled_ids
        assert events.get_event(services, SPACE, target.id).status == "archived"

    def test_archiving_twice_writes_no_new_version(self, services, three):
        events.archive_event(services, SPACE, three[0].id)
        again = events.archive_event(services, SPACE, three[0].id)
        assert again.version == 2
        assert len(events.history(services, SPACE, three[0].id)) == 2

    def test_patch_status_archived_also_unindexes(self, services, three):
        events.patch_event(services, SPACE, three[1].id,
                           PatchEventRequest(version=1, status="archived"))
        assert services.keywords.keyword_search(SPACE, "kitten", 5) == []

    def test_archive_missing_is_not_found(self, services):
        with pytest.raises(NotFound):
            events.archive_event(services, SPACE, "ev_nope")


class TestHistory:
    def test_every_version_in_order(self, services, three):
        eid = three[2].id
        events.patch_event(services, SPACE, eid, PatchEventRequest(version=1, importance=2))
        events.patch_event(services, SPACE, eid, PatchEventRequest(version=2, title="Fridge"))
        events.archive_event(services, SPACE, eid)
        versions = events.history(services, SPACE, eid)
        assert [(v.version, v.importance, v.title, v.status) for v in versions] == [
            (1, 6, "Mochi learned to open the fridge", "active"),
            (2, 2, "Mochi learned to open the fridge", "active"),
            (3, 2, "Fridge", "active"),
            (4, 2, "Fridge", "archived"),
        ]

    def test_history_of_missing_is_not_found(self, services):
        with pytest.raises(NotFound):
            events.history(services, SPACE, "ev_nope")

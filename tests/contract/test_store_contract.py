"""Store contract: every Store adapter must behave exactly like this."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.domain.models import Event, Message, MessageIn, Source, When
from chalicelib.domain.records import JournalBatch, LLMUsageRecord, MemoryUse, MergeState, Person
from chalicelib.ports import ConflictError, Store

T0 = datetime(2026, 6, 14, 9, 0, tzinfo=UTC)


def msg(seq: int, content: str = "hello", at: datetime = T0, session: str = "s1",
        space: str = "sp") -> Message:
    return Message.from_input(space, session, MessageIn(seq=seq, role="user", speaker="Ann",
                                                        content=content, at=at))


def event(eid: str, day: int = 0, space: str = "sp", seq: int = 1, status: str = "active") -> Event:
    start = T0.replace(hour=0) + timedelta(days=day)
    return Event(id=eid, space=space, title=f"t{eid}", summary=f"summary {eid}",
                 when=When(start=start, end=start + timedelta(days=1)),
                 sources=[Source(session="s1", seq_start=seq, seq_end=seq)], status=status,
                 created_at=T0, updated_at=T0)


def test_is_a_store(store):
    assert isinstance(store, Store)


def test_upsert_counts_accepted_unchanged_changed(store):
    out = store.upsert_messages("sp", "s1", [msg(1), msg(2)], T0)
    assert (sorted(out.accepted), out.unchanged, out.changed) == ([1, 2], [], [])
    out = store.upsert_messages("sp", "s1", [msg(1), msg(2, "edited"), msg(3)], T0)
    assert (out.accepted, out.unchanged, out.changed) == ([3], [1], [2])
    assert store.get_message("sp", "s1", 2).content == "edited"


def test_messages_are_scoped_by_space_and_session(store):
    store.upsert_messages("sp", "s1", [msg(1, "a")], T0)
    store.upsert_messages("sp", "s2", [msg(1, "b", session="s2")], T0)
    store.upsert_messages("other", "s1", [msg(1, "c", space="other")], T0)
    assert [m.content for m in store.get_messages("sp", "s1")] == ["a"]
    assert [m.content for m in store.get_messages("sp", "s2")] == ["b"]
    assert store.get_message("other", "s1", 1).content == "c"


def test_get_messages_range_is_ordered_by_seq(store):
    store.upsert_messages("sp", "s1", [msg(i, f"m{i}") for i in (5, 1, 3, 2, 4)], T0)
    assert [m.seq for m in store.get_messages("sp", "s1", 2, 4)] == [2, 3, 4]
    assert [m.seq for m in store.get_messages("sp", "s1", seq_from=4)] == [4, 5]


def test_message_roundtrip_keeps_time_and_hash(store):
    at = datetime.fromisoformat("2026-10-20T20:14:00+08:00")
    original = msg(7, "我说想去海边看日出，风很大", at=at)
    store.upsert_messages("sp", "s1", [original], T0)
    got = store.get_message("sp", "s1", 7)
    assert got == original
    assert got.at.utcoffset() == timedelta(hours=8)


def test_session_state_tracks_pending_and_dirty(store):
    store.upsert_messages("sp", "s1", [msg(1, at=T0), msg(2, at=T0 + timedelta(minutes=5))], T0)
    state = store.get_session("sp", "s1")
    assert state.extracted_upto == -1 and state.message_count == 2
    assert state.pending_since == T0
    assert state.last_message_at == T0 + timedelta(minutes=5)
    store.mark_extracted("sp", "s1", 2)
    state = store.get_session("sp", "s1")
    assert state.extracted_upto == 2 and state.pending_since is None and state.dirty_from is None
    store.upsert_messages("sp", "s1", [msg(2, "changed")], T0)
    assert store.get_session("sp", "s1").dirty_from == 2
    store.delete_message("sp", "s1", 1, T0)
    assert store.get_session("sp", "s1").dirty_from == 1
    assert [s.session for s in store.list_sessions("sp")] == ["s1"]


def test_a_change_after_the_extracted_range_is_not_dirty(store):
    store.upsert_messages("sp", "s1", [msg(1), msg(2)], T0)
    store.mark_extracted("sp", "s1", 1)
    store.upsert_messages("sp", "s1", [msg(2, "new text")], T0)
    assert store.get_session("sp", "s1").dirty_from is None


def test_delete_message_returns_it_once(store):
    store.upsert_messages("sp", "s1", [msg(1)], T0)
    assert store.delete_message("sp", "s1", 1, T0).seq == 1
    assert store.delete_message("sp", "s1", 1, T0) is None
    assert store.get_message("sp", "s1", 1) is None


def test_event_versions_and_optimistic_concurrency(store):
    store.create_event(event("e1"))
    v2 = store.update_event(event("e1").model_copy(update={"title": "new"}), 1)
    assert v2.version == 2 and store.get_event("sp", "e1").title == "new"
    with pytest.raises(ConflictError):
        store.update_event(event("e1").model_copy(update={"title": "stale"}), 1)
    history = store.event_history("sp", "e1")
    assert [(e.version, e.title) for e in history] == [(1, "te1"), (2, "new")]
    assert store.get_event("sp", "missing") is None
    assert store.get_event("other-space", "e1") is None


def test_list_events_oldest_first_with_cursor_pagination(store):
    for i, day in enumerate([3, 1, 2, 0, 4]):
        store.create_event(event(f"e{i}", day=day))
    page = store.list_events("sp", limit=2)
    seen = [e.id for e in page.events]
    while page.next_cursor:
        page = store.list_events("sp", limit=2, cursor=page.next_cursor)
        seen += [e.id for e in page.events]
    assert seen == ["e3", "e1", "e2", "e0", "e4"]


def test_list_events_filters_time_overlap_and_status(store):
    store.create_event(event("a", day=0))
    store.create_event(event("b", day=2))
    store.create_event(event("c", day=2, status="archived"))
    start = T0.replace(hour=0) + timedelta(days=1, hours=12)
    page = store.list_events("sp", start=start, end=start + timedelta(days=2))
    assert [e.id for e in page.events] == ["b"]
    page = store.list_events("sp", statuses=("archived",))
    assert [e.id for e in page.events] == ["c"]


def test_bad_cursor_is_a_value_error(store):
    with pytest.raises(ValueError):
        store.list_events("sp", cursor="not-a-cursor")


def test_deliveries_and_recall_counter(store):
    assert store.bump_recall_count("sp", "w1") == 1
    assert store.bump_recall_count("sp", "w1") == 2
    assert store.bump_recall_count("sp", "w2") == 1
    store.add_deliveries("sp", "w1", ["event:e1", "event:e1", "message:s1:2"], T0)
    got = store.recent_deliveries("sp", "w1", T0 - timedelta(minutes=1))
    assert sorted(d.ref for d in got) == ["event:e1", "message:s1:2"]
    assert all(d.recall_count == 2 for d in got)
    assert store.recent_deliveries("sp", "w1", T0 + timedelta(minutes=1)) == []
    assert store.recent_deliveries("sp", "w2", T0 - timedelta(minutes=1)) == []


def test_typed_records_roundtrip_by_kind_scope_and_key(store):
    assert store.get_record(MergeState, "sp") is None
    state = MergeState(scope="sp", marker=T0, pending=3, fingerprint="名字")
    store.put_record(state)
    assert store.get_record(MergeState, "sp") == state
    store.put_record(state.model_copy(update={"pending": 4}))
    assert store.get_record(MergeState, "sp").pending == 4  # put replaces
    assert store.get_record(MergeState, "other") is None


def test_records_are_listed_per_kind_and_scope_ordered_by_key(store):
    for name in ("Mel", "Ann", "小明"):
        store.put_record(Person(scope="sp", key=name))
    store.put_record(Person(scope="other", key="Zed"))
    store.put_record(MemoryUse(scope="sp", key="event:e1", count=2, last=T0))
    assert [p.key for p in store.list_records(Person, "sp")] == ["Ann", "Mel", "小明"]
    assert [u.key for u in store.list_records(MemoryUse, "sp")] == ["event:e1"]
    assert store.list_records(MemoryUse, "other") == []
    # keys and scopes may hold the separators the adapters use themselves
    store.put_record(JournalBatch(scope="sp/s#1", key="2026#a/b", at=T0, created=["e1"],
                                  revived=[("e2", 3)]))
    got = store.list_records(JournalBatch, "sp/s#1")
    assert got == [JournalBatch(scope="sp/s#1", key="2026#a/b", at=T0, created=["e1"],
                                revived=[("e2", 3)])]


def test_delete_records_removes_only_the_named_keys(store):
    for key in ("a", "b", "c"):
        store.put_record(Person(scope="sp", key=key))
    assert store.delete_records(Person, "sp", ["a", "c", "missing"]) == 2
    assert [p.key for p in store.list_records(Person, "sp")] == ["b"]


def test_many_records_in_one_scope_are_all_listed(store):
    for i in range(120):
        store.put_record(LLMUsageRecord(scope="sp", key=f"task{i:03d}", calls=i))
    got = store.list_records(LLMUsageRecord, "sp")
    assert [r.calls for r in got] == list(range(120))


def test_load_messages_and_events_read_many_at_once(store):
    store.upsert_messages("sp", "s1", [msg(i, f"m{i}") for i in range(1, 6)], T0)
    store.upsert_messages("sp", "s:2", [msg(1, "other session", session="s:2")], T0)
    got = store.load_messages("sp", [("s1", 2), ("s1", 4), ("s:2", 1), ("s1", 99), ("s1", 2)])
    assert sorted((m.session, m.seq, m.content) for m in got) == [
        ("s1", 2, "m2"), ("s1", 4, "m4"), ("s:2", 1, "other session")]
    assert store.load_messages("other", [("s1", 2)]) == []
    assert store.load_messages("sp", []) == []
    for i in range(3):
        store.create_event(event(f"e{i}", day=i))
    got = store.load_events("sp", ["e2", "e0", "ghost", "e0"])
    assert sorted(e.id for e in got) == ["e0", "e2"]
    assert store.load_events("other", ["e0"]) == [] and store.load_events("sp", []) == []


def test_load_reads_beyond_one_batch(store):
    store.upsert_messages("sp", "s1", [msg(i, f"m{i}") for i in range(250)], T0)
    got = store.load_messages("sp", [("s1", i) for i in range(250)])
    assert len(got) == 250


def test_concurrent_upserts_are_all_counted_once(store):
    def put(i: int):
        return store.upsert_messages("sp", "s1", [msg(i, f"m{i}")], T0)

    with ThreadPoolExecutor(8) as pool:
        outs = list(pool.map(put, range(40)))
    assert sum(len(o.accepted) for o in outs) == 40
    assert len(store.get_messages("sp", "s1")) == 40


def test_create_event_with_an_existing_id_conflicts(store):
    store.create_event(event("dup"))
    with pytest.raises(ConflictError):
        store.create_event(event("dup", day=3))
    assert store.get_event("sp", "dup").when.start.day == event("dup").when.start.day
    assert [v.version for v in store.event_history("sp", "dup")] == [1]


def test_update_of_a_missing_event_conflicts_and_history_is_empty(store):
    with pytest.raises(ConflictError):
        store.update_event(event("ghost"), 1)
    assert store.event_history("sp", "ghost") == []
    assert store.get_event("sp", "ghost") is None


def test_long_event_starting_before_the_window_is_listed(store):
    long = event("long", day=0).model_copy(update={"when": When(
        start=T0.replace(hour=0), end=T0.replace(hour=0) + timedelta(days=40))})
    store.create_event(long)
    store.create_event(event("late", day=30))
    start = T0.replace(hour=0) + timedelta(days=29)
    page = store.list_events("sp", start=start, end=start + timedelta(days=2))
    assert [e.id for e in page.events] == ["long", "late"]


def test_pagination_with_filters_and_equal_starts(store):
    for i in range(7):
        store.create_event(event(f"e{i}", day=i % 2, status="archived" if i == 3 else "active"))
    seen, cursor = [], None
    while True:
        page = store.list_events("sp", limit=2, cursor=cursor)
        assert len(page.events) == 2 or page.next_cursor is None
        seen += [e.id for e in page.events]
        cursor = page.next_cursor
        if not cursor:
            break
    assert seen == ["e0", "e2", "e4", "e6", "e1", "e5"]  # by start, then id; e3 is archived


def test_list_events_filters_by_kind_before_the_page_is_cut(store):
    """Summaries thick between events (as a session summary sits at its session's start)
    must not leave a page of events short, nor end the listing early."""
    kinds = ["summary", "event", "summary", "note", "summary", "summary", "event", "event",
             "summary", "note"]
    for i, kind in enumerate(kinds):
        store.create_event(event(f"e{i}", day=i).model_copy(update={"kind": kind}))
    store.create_event(event("gone", day=3, status="archived").model_copy(
        update={"kind": "note"}))

    def walk(limit: int, **filters) -> list[str]:
        seen, cursor = [], None
        while True:
            page = store.list_events("sp", limit=limit, cursor=cursor, **filters)
            assert len(page.events) == limit or page.next_cursor is None
            seen += [e.id for e in page.events]
            cursor = page.next_cursor
            if not cursor:
                return seen

    def ids(*wanted: str) -> list[str]:
        return [f"e{i}" for i, kind in enumerate(kinds) if kind in wanted]

    assert walk(2, kinds=("event", "note")) == ids("event", "note")
    assert walk(1, kinds=("summary",)) == ids("summary")
    assert walk(3, kinds=("note", "event", "summary")) == walk(3) == ids(*set(kinds))
    assert walk(2, kinds=("note",), statuses=("active", "archived")) == [
        "e3", "gone", "e9"]
    start = T0.replace(hour=0) + timedelta(days=2)
    page = store.list_events("sp", start=start, end=start + timedelta(days=4),
                             kinds=("event",))
    assert [e.id for e in page.events] == []  # e2..e5: summaries and a note only
    assert store.list_events("sp", kinds=()).events == []


def test_sessions_listed_across_spaces_and_count_follows_deletes(store):
    store.upsert_messages("sp", "s1", [msg(1), msg(2)], T0)
    store.upsert_messages("other", "s9", [msg(1, space="other", session="s9")], T0)
    assert {(s.space, s.session) for s in store.list_sessions()} == {("sp", "s1"), ("other", "s9")}
    store.delete_message("sp", "s1", 2, T0)
    assert store.get_session("sp", "s1").message_count == 1


def test_purge_deliveries_never_removes_recent_ones(store):
    store.add_deliveries("sp", "w", ["event:old"], T0)
    store.add_deliveries("sp", "w", ["event:new"], T0 + timedelta(days=2))
    purged = store.purge_deliveries(T0 + timedelta(days=1))
    assert purged in (0, 1)  # 0 where the database's TTL does the purging
    refs = [d.ref for d in store.recent_deliveries("sp", "w", T0 + timedelta(days=1))]
    assert refs == ["event:new"]

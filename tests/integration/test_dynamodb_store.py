"""DynamoDB-specific behaviour of DynamoDBStore (on moto): what the contract suite cannot see
— table settings, retries of unprocessed batch items, read-time TTL, paging under filters,
races between writers, and agreement with the SQLite reference on the same operations."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import pytest
from pydantic import Field

from chalicelib.adapters.dynamodb import Backoff, DynamoDBStore, UnprocessedItemsError
from chalicelib.adapters.dynamodb import create_table as create_table_fn
from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.store import SQLiteStore
from chalicelib.domain.models import Event, Message, MessageIn, Source, When
from chalicelib.domain.records import Person, Record
from chalicelib.ports import ConflictError
from tests.contract.adapters_dynamodb import TABLE, SerializedClient, mocked_dynamodb

T0 = datetime(2026, 6, 14, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)


class Clock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Hooked:
    """Client proxy: run `hooks[name]()` once just before the next call of that method, and
    count calls. Used to interleave a second writer at an exact point."""

    def __init__(self, client: Any):
        self._client = client
        self.hooks: dict[str, Callable[[], None]] = {}
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            hook = self.hooks.pop(name, None)
            if hook:
                hook()
            return attr(*args, **kwargs)

        return call


@pytest.fixture
def raw() -> Iterator[Any]:
    with mocked_dynamodb() as client:
        yield client


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def store(raw, clock) -> DynamoDBStore:
    return DynamoDBStore(TABLE, client=SerializedClient(raw), clock=clock)


def msg(seq: int, content: str = "hello", at: datetime = T0, session: str = "s1") -> Message:
    return Message.from_input("sp", session, MessageIn(seq=seq, role="user", speaker="Ann",
                                                       content=content, at=at))


def event(eid: str, start: datetime, length: timedelta = DAY, status: str = "active") -> Event:
    return Event(id=eid, space="sp", title=f"t{eid}", summary=f"summary {eid}",
                 when=When(start=start, end=start + length),
                 sources=[Source(session="s1", seq_start=1, seq_end=1)], status=status,
                 created_at=T0, updated_at=T0)


def no_sleep(_: float) -> None:
    pass


# ------------------------------------------------------------------ table
def test_table_has_stream_ttl_on_demand_and_both_indexes(raw):
    table = raw.describe_table(TableName=TABLE)["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert table["StreamSpecification"] == {"StreamEnabled": True,
                                            "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert {k["AttributeName"] for k in table["KeySchema"]} == {"pk", "sk"}
    assert sorted(i["IndexName"] for i in table["GlobalSecondaryIndexes"]) == ["gsi1", "gsi2"]
    ttl = raw.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    again = create_table_fn(raw, TABLE)  # re-running keeps the table
    assert again["TableName"] == TABLE


def test_client_is_created_lazily_from_region(raw):
    lazy = DynamoDBStore(TABLE, region_name="us-east-1")
    assert lazy._client is None
    lazy.put_record(Person(scope="sp", key="Ann"))
    assert lazy.get_record(Person, "sp", "Ann") == Person(scope="sp", key="Ann")


# ------------------------------------------------------------------ batch retries
def test_unprocessed_items_are_retried_with_backoff(raw, clock):
    class FlakyBatch(Hooked):
        first = True

        def batch_write_item(self, RequestItems):
            if self.first:  # write nothing, hand everything back unprocessed
                self.first = False
                return {"UnprocessedItems": RequestItems}
            return self._client.batch_write_item(RequestItems=RequestItems)

    pauses: list[float] = []
    store = DynamoDBStore(TABLE, client=FlakyBatch(raw), clock=clock,
                          batch_backoff=Backoff(attempts=4, base=0.1, sleep=pauses.append))
    refs = [f"event:e{i}" for i in range(30)]  # two BatchWriteItem chunks (25 + 5)
    store.add_deliveries("sp", "w1", refs, T0)
    assert len(pauses) == 1 and 0 <= pauses[0] <= 0.1
    got = store.recent_deliveries("sp", "w1", T0 - DAY)
    assert sorted(d.ref for d in got) == sorted(refs)


def test_unprocessed_items_give_up_after_bounded_attempts(raw, clock):
    class NeverProcessed(Hooked):
        def batch_write_item(self, RequestItems):
            self.calls["batch_write_item"] = self.calls.get("batch_write_item", 0) + 1
            return {"UnprocessedItems": RequestItems}

    client = NeverProcessed(raw)
    pauses: list[float] = []
    store = DynamoDBStore(TABLE, client=client, clock=clock,
                          batch_backoff=Backoff(attempts=5, base=0.01, cap=1,
                                                sleep=pauses.append))
    with pytest.raises(UnprocessedItemsError):
        store.add_deliveries("sp", "w1", ["event:a", "event:b"], T0)
    assert client.calls["batch_write_item"] == 5
    assert len(pauses) == 4  # no pointless sleep after the last attempt
    assert all(p <= 0.01 * 2**i for i, p in enumerate(pauses))


def test_batch_reads_retry_unprocessed_keys_across_chunks(raw, store, clock):
    class HalfProcessed(Hooked):
        def batch_get_item(self, RequestItems):
            self.calls["batch_get_item"] = self.calls.get("batch_get_item", 0) + 1
            (table, request), = RequestItems.items()
            ask, later = request["Keys"][:40], request["Keys"][40:]
            resp = self._client.batch_get_item(RequestItems={table: {**request, "Keys": ask}})
            if later:  # as DynamoDB does past 16 MB or when throttled
                resp["UnprocessedKeys"] = {table: {**request, "Keys": later}}
            return resp

    store.upsert_messages("sp", "s1", [msg(i, f"m{i}") for i in range(150)], T0)
    client = HalfProcessed(raw)
    pauses: list[float] = []
    reader = DynamoDBStore(TABLE, client=client, clock=clock,
                           batch_backoff=Backoff(attempts=4, sleep=pauses.append))
    wanted = [("s1", i) for i in range(150)] * 2 + [("s1", 999), ("s1", -1)]
    got = reader.load_messages("sp", wanted)
    assert sorted(m.seq for m in got) == list(range(150))  # each once, missing ones skipped
    # chunks of 100 + 50 keys; 40 answered per call: 100 → 3 calls, 50 → 2 calls
    assert client.calls["batch_get_item"] == 5 and len(pauses) == 3


# ------------------------------------------------------------------ records
def test_record_items_escape_the_partition_and_keep_the_key_order(raw, store):
    for key in ("a$", "a#b", "a%", "a", ""):
        store.put_record(Person(scope="sp/s#1", key=key))
    item = raw.get_item(TableName=TABLE, Key={"pk": {"S": "REC#person#sp/s%231"},
                                               "sk": {"S": "K#a#b"}})["Item"]
    assert item["entity"] == {"S": "record"} and item["key"] == {"S": "a#b"}
    assert [p.key for p in store.list_records(Person, "sp/s#1")] == ["", "a", "a#b", "a$", "a%"]
    assert store.list_records(Person, "sp/s") == [] and store.list_records(Person, "sp") == []
    assert store.delete_records(Person, "sp/s#1", ["a#b", "a#b", "", "nope"]) == 2
    assert [p.key for p in store.list_records(Person, "sp/s#1")] == ["a", "a$", "a%"]


def test_list_records_follows_every_query_page(raw):
    class SmallPages(Hooked):
        def query(self, **request):  # as if each page hit DynamoDB's 1 MB limit
            self.calls["query"] = self.calls.get("query", 0) + 1
            return self._client.query(**request, Limit=7)

    client = SmallPages(raw)
    store = DynamoDBStore(TABLE, client=client)
    for i in range(30):
        store.put_record(Person(scope="sp", key=f"p{i:02d}"))
    assert [p.key for p in store.list_records(Person, "sp")] == [f"p{i:02d}" for i in range(30)]
    assert client.calls["query"] == 5


# ------------------------------------------------------------------ TTL
def test_expired_deliveries_are_hidden_before_ttl_deletes_them(raw, store, clock):
    store.delivery_ttl = timedelta(hours=1)
    store.add_deliveries("sp", "w1", ["event:a"], T0)
    item = raw.scan(TableName=TABLE, FilterExpression="entity = :d",
                    ExpressionAttributeValues={":d": {"S": "delivery"}})["Items"][0]
    assert int(item["expires_at"]["N"]) == int((T0 + timedelta(hours=1)).timestamp())
    assert [d.ref for d in store.recent_deliveries("sp", "w1", T0 - DAY)] == ["event:a"]
    clock.now = T0 + timedelta(hours=1)  # expires_at <= now: gone for readers …
    assert store.recent_deliveries("sp", "w1", T0 - DAY) == []
    assert raw.scan(TableName=TABLE)["Count"] > 0  # … though TTL has not deleted it yet


def test_backdated_delivery_lives_ttl_from_when_it_was_written(store, clock):
    clock.now = T0 + timedelta(days=30)
    store.add_deliveries("sp", "w1", ["event:old"], T0)  # an import of old deliveries
    assert [d.ref for d in store.recent_deliveries("sp", "w1", T0)] == ["event:old"]


def test_a_stale_item_written_by_anyone_is_filtered(raw, store):
    store.add_deliveries("sp", "w1", ["event:a"], T0)
    item = raw.scan(TableName=TABLE, FilterExpression="entity = :d",
                    ExpressionAttributeValues={":d": {"S": "delivery"}})["Items"][0]
    item["expires_at"] = {"N": str(int(T0.timestamp()) - 1)}
    raw.put_item(TableName=TABLE, Item=item)
    assert store.recent_deliveries("sp", "w1", T0 - DAY) == []


# ------------------------------------------------------------------ pagination
def _seed_events(stores, n: int = 45) -> None:
    rng = random.Random(7)
    for i in range(n):
        start = T0 + timedelta(hours=rng.randrange(0, 24 * 40))
        length = rng.choice([timedelta(hours=1), DAY, 3 * DAY])
        status = "archived" if i % 3 == 0 else "active"
        for s in stores:
            s.create_event(event(f"e{i:03d}", start, length, status))
    start = T0 - timedelta(days=200)  # one long event, begun long before any query window
    for s in stores:
        s.create_event(event("long", start, timedelta(days=365)))
        s.create_event(event("tie-b", T0 + 5 * DAY))
        s.create_event(event("tie-a", T0 + 5 * DAY))


def _pages(store, **kw) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        page = store.list_events("sp", cursor=cursor, **kw)
        pages.append([e.id for e in page.events])
        if not page.next_cursor:
            return pages
        cursor = page.next_cursor


PAGE_QUERIES = [
    {"limit": 4},
    {"limit": 3, "statuses": ("archived",)},
    {"limit": 5, "start": T0 + 10 * DAY, "end": T0 + 20 * DAY},
    {"limit": 2, "start": T0 + 10 * DAY, "end": T0 + 14 * DAY, "statuses": ("archived",)},
    {"limit": 7, "start": T0 + 30 * DAY},
    {"limit": 6, "end": T0 + 3 * DAY, "statuses": ()},
    {"limit": 1, "start": T0 + 5 * DAY, "end": T0 + 5 * DAY + timedelta(minutes=1)},
    {"limit": 500, "statuses": ("active", "archived", "superseded")},
]


def test_pages_match_sqlite_and_are_never_short(raw, store, tmp_path):
    # one seeding for every query: moto copies the whole table on each transaction
    sqlite = SQLiteStore(SQLiteDB(tmp_path / "ref.db"))
    _seed_events([store, sqlite])
    for kw in PAGE_QUERIES:
        mine, ref = _pages(store, **kw), _pages(sqlite, **kw)
        assert mine == ref, kw
        assert all(len(p) == kw["limit"] for p in mine[:-1]), kw  # only the last may be short
        assert mine[-1] or len(mine) == 1, kw  # and there is no trailing empty page
        if "start" in kw and "archived" not in kw.get("statuses", ()):
            assert any("long" in p for p in mine), kw  # the 365-day event overlaps every window


def test_sparse_matches_are_found_across_many_query_pages(raw, store):
    class Counting(Hooked):
        pass

    client = Counting(raw)
    store = DynamoDBStore(TABLE, client=client)
    for i in range(36):
        store.create_event(event(f"e{i:02d}", T0 + i * timedelta(hours=1),
                                 status="active" if i in (5, 21, 35) else "archived"))
    page = store.list_events("sp", limit=2)
    assert [e.id for e in page.events] == ["e05", "e21"] and page.next_cursor
    assert client.calls["query"] > 1  # Limit applies before the filter: several pages read
    page = store.list_events("sp", limit=2, cursor=page.next_cursor)
    assert [e.id for e in page.events] == ["e35"] and page.next_cursor is None


def test_cursor_outside_the_new_range_is_handled_like_sqlite(store):
    for i in range(6):
        store.create_event(event(f"e{i}", T0 + i * DAY))
    cursor = store.list_events("sp", limit=1).next_cursor  # after e0
    page = store.list_events("sp", start=T0 + 3 * DAY + timedelta(hours=1), limit=10,
                             cursor=cursor)
    assert [e.id for e in page.events] == ["e3", "e4", "e5"]
    late = store.list_events("sp", limit=5).next_cursor  # after e4
    assert store.list_events("sp", end=T0 + 2 * DAY, cursor=late).events == []
    with pytest.raises(ValueError):
        store.list_events("sp", cursor="eyJnc2kxc2siOiAxfQ==")  # {"gsi1sk": 1}


def test_cursor_stays_short_for_long_ids(store):
    space = "s" * 128
    for i in range(3):
        store.create_event(event("x" * 100 + str(i), T0).model_copy(update={"space": space}))
    page = store.list_events(space, limit=1)
    assert len(page.next_cursor) <= 512  # the API's cap on `cursor`


# ------------------------------------------------------------------ races
def test_interleaved_writers_of_the_same_new_seq(raw, clock):
    a_client = Hooked(SerializedClient(raw))
    a = DynamoDBStore(TABLE, client=a_client, clock=clock)
    b = DynamoDBStore(TABLE, client=SerializedClient(raw), clock=clock)
    outcome_b = []
    # A has read (nothing stored) and decided "accepted"; B writes the same seq first.
    a_client.hooks["transact_write_items"] = lambda: outcome_b.append(
        b.upsert_messages("sp", "s1", [msg(1, "from b"), msg(2, "same")], T0))
    out_a = a.upsert_messages("sp", "s1", [msg(1, "from a"), msg(2, "same")], T0)
    assert (outcome_b[0].accepted, outcome_b[0].changed) == ([1, 2], [])
    # A lost the race, re-read and now sees B's rows: seq 1 differs, seq 2 is identical
    assert (out_a.accepted, out_a.unchanged, out_a.changed) == ([], [2], [1])
    assert a_client.calls["transact_write_items"] == 2
    assert a.get_message("sp", "s1", 1).content == "from a"
    assert a.get_session("sp", "s1").message_count == 2


def test_two_threads_ingesting_overlapping_batches(store):
    def writer(name: str):
        rng = random.Random(name)
        seqs = list(range(30))
        rng.shuffle(seqs)
        out = []
        for i in range(0, 30, 6):
            out.append(store.upsert_messages(
                "sp", "s1", [msg(s, f"m{s}" if s % 2 else f"{name}{s}") for s in seqs[i:i + 6]],
                T0))
        return out

    with ThreadPoolExecutor(2) as pool:
        results = [o for outs in pool.map(writer, ["a", "b"]) for o in outs]
    accepted = sorted(s for o in results for s in o.accepted)
    assert accepted == list(range(30))  # every seq accepted exactly once
    assert sum(len(o.unchanged) + len(o.changed) for o in results) == 30
    assert all(seq % 2 for o in results for seq in o.unchanged)  # identical copies only
    assert store.get_session("sp", "s1").message_count == 30
    assert len(store.get_messages("sp", "s1")) == 30


def test_stale_version_is_a_conflict_and_writes_nothing(raw, store):
    other = DynamoDBStore(TABLE, client=SerializedClient(raw))
    store.create_event(event("e1", T0))
    read_by_a = store.get_event("sp", "e1")
    read_by_b = other.get_event("sp", "e1")
    store.update_event(read_by_a.model_copy(update={"title": "by a"}), read_by_a.version)
    with pytest.raises(ConflictError):
        other.update_event(read_by_b.model_copy(update={"title": "by b"}), read_by_b.version)
    assert store.get_event("sp", "e1").title == "by a"
    assert [(e.version, e.title) for e in store.event_history("sp", "e1")] == [
        (1, "te1"), (2, "by a")]
    with pytest.raises(ConflictError):  # creating an existing id
        store.create_event(event("e1", T0))
    with pytest.raises(ConflictError):  # updating a missing one
        store.update_event(event("nope", T0), 1)


def test_concurrent_updates_of_one_version_let_exactly_one_win(store):
    store.create_event(event("e1", T0))

    def edit(i: int):
        try:
            return store.update_event(event("e1", T0).model_copy(update={"title": f"v{i}"}), 1)
        except ConflictError:
            return None

    with ThreadPoolExecutor(6) as pool:
        winners = [r for r in pool.map(edit, range(6)) if r is not None]
    assert len(winners) == 1
    assert [e.version for e in store.event_history("sp", "e1")] == [1, 2]


# ------------------------------------------------------------------ agreement with SQLite
def test_random_message_history_matches_sqlite(store, tmp_path):
    sqlite = SQLiteStore(SQLiteDB(tmp_path / "ref.db"))
    rng = random.Random(11)
    for step in range(70):
        session = rng.choice(["s1", "s2"])
        op = rng.random()
        if op < 0.55:
            batch = [msg(rng.randrange(12), rng.choice("abc"),
                         T0 + timedelta(minutes=rng.randrange(-30, 30)), session)
                     for _ in range(rng.randrange(1, 4))]
            for s in (store, sqlite):
                out = s.upsert_messages("sp", session, batch, T0)
                result = (out.accepted, out.unchanged, out.changed)
                if s is store:
                    mine = result
            assert mine == result, step
        elif op < 0.75:
            seq = rng.randrange(12)
            assert store.delete_message("sp", session, seq, T0) == sqlite.delete_message(
                "sp", session, seq, T0), step
        else:
            upto = rng.randrange(-1, 12)
            store.mark_extracted("sp", session, upto)
            sqlite.mark_extracted("sp", session, upto)
        assert store.list_sessions("sp") == sqlite.list_sessions("sp"), step
        assert store.get_messages("sp", session) == sqlite.get_messages("sp", session), step
    assert store.list_sessions() == sqlite.list_sessions()


def test_time_aggregates_follow_edits_and_deletes_of_the_extreme_message(store, tmp_path):
    sqlite = SQLiteStore(SQLiteDB(tmp_path / "ref.db"))
    t = [T0 + timedelta(minutes=m) for m in range(6)]
    steps = [
        lambda s: s.upsert_messages("sp", "s1", [msg(i, "x", t[i]) for i in range(5)], T0),
        lambda s: s.delete_message("sp", "s1", 4, T0),  # the latest message goes
        lambda s: s.upsert_messages("sp", "s1", [msg(3, "y", t[0])], T0),  # latest moves back
        lambda s: s.mark_extracted("sp", "s1", 1),
        lambda s: s.upsert_messages("sp", "s1", [msg(2, "z", t[5])], T0),  # oldest pending later
        lambda s: s.delete_message("sp", "s1", 3, T0),  # the oldest pending goes
        lambda s: s.delete_message("sp", "s1", 2, T0),  # the last pending (and latest) goes
        lambda s: s.mark_extracted("sp", "s1", 0),
    ]
    for i, step in enumerate(steps):
        step(store)
        step(sqlite)
        assert store.get_session("sp", "s1") == sqlite.get_session("sp", "s1"), i


def test_a_batch_larger_than_one_transaction(store):
    out = store.upsert_messages("sp", "s1", [msg(i, f"m{i}") for i in range(120)], T0)
    assert out.accepted == list(range(120))  # 99 + 21: two transactions
    out = store.upsert_messages("sp", "s1", [msg(i, f"m{i}" if i % 50 else "x")
                                             for i in range(120)], T0)
    assert out.changed == [0, 50, 100] and len(out.unchanged) == 117
    assert store.get_session("sp", "s1").message_count == 120


# ------------------------------------------------------------------ numbers
class Gauge(Record):
    """A record with floats and free-form JSON, to see how numbers are stored."""

    KIND: ClassVar[str] = "test-gauge"
    ratio: float = 0.0
    extra: dict = Field(default_factory=dict)


def test_record_floats_become_exact_decimals(raw, store):
    extra = {"tiny": 1e-7, "big": 2**53, "nested": [{"x": 1.5}, None, True], "名字": "值"}
    gauge = Gauge(scope="sp", ratio=0.1, extra=extra)
    store.put_record(gauge)
    assert store.get_record(Gauge, "sp") == gauge
    item = raw.get_item(TableName=TABLE, Key={"pk": {"S": "REC#test-gauge#sp"},
                                               "sk": {"S": "K#"}})["Item"]
    assert item["body"]["M"]["ratio"] == {"N": "0.1"}
    with pytest.raises(ValueError):
        store.put_record(Gauge(scope="sp", ratio=float("nan")))
    with pytest.raises(ValueError):
        store.put_record(Gauge(scope="sp", extra={"x": 1e300}))
    assert store.get_record(Gauge, "sp") == gauge  # nothing was written

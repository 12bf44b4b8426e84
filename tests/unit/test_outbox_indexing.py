"""The local outbox: a PUT only queues indexing; keyword and vector lanes drain it; a recall
catches up its own space's keywords within a budget and never waits for embeddings."""

from __future__ import annotations

import time

import pytest

from chalicelib.domain.models import RecallRequest
from chalicelib.usecases.indexing import OutboxIndexWriter
from chalicelib.usecases.recall import recall
from chalicelib.wiring import build_services
from tests.conftest import FixedClock, make_services
from tests.unit.conftest import SPACE, T0

CONVO = [
    (0, "user", "小明", "我家的猫奶糖被确诊了肾病，医生说要每天吃药。"),
    (1, "assistant", "Aki", "听到这个消息很难过，奶糖会好起来的。"),
    (2, "user", "小明", "谢谢"),
]


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, index="background")
    svc.clock = FixedClock(T0)
    assert isinstance(svc.index, OutboxIndexWriter)
    return svc


def keyword_ids(services, query, space=SPACE):
    return [h.id for h in services.keywords.keyword_search(space, query, 10)]


def pending(services, space=SPACE):
    fresh = services.index.outbox.pending(space)
    return fresh.keyword_pending, fresh.vector_pending


def test_a_put_only_queues_both_lanes(services, put):
    put("c1", CONVO)
    assert pending(services) == (3, 3)
    assert keyword_ids(services, "肾病") == []  # nothing indexed inside the PUT


def test_lanes_drain_independently_and_entries_leave_when_both_are_done(services, put):
    put("c1", CONVO)
    assert services.index.drain("keyword") == 3
    assert pending(services) == (0, 3)
    assert keyword_ids(services, "肾病") == ["message:c1:0"]
    assert services.index.drain("vector") == 3
    assert pending(services) == (0, 0)
    con = services.store.db.connect()
    for table in ("keyword_queue", "vector_queue"):
        assert con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0


def test_an_unchanged_put_queues_nothing_and_a_change_queues_again(services, put):
    put("c1", CONVO)
    services.index.drain_all("keyword")
    services.index.drain_all("vector")
    put("c1", CONVO)
    assert pending(services) == (0, 0)
    put("c1", [(0, "user", "小明", "我家的猫奶糖被确诊了胃炎。")])
    assert pending(services) == (1, 1)
    services.index.drain_all("keyword")
    assert keyword_ids(services, "肾病") == [] and keyword_ids(services, "胃炎") == ["message:c1:0"]


def test_recall_finds_a_new_message_by_keyword_without_waiting_for_embeddings(services, put):
    put("c1", CONVO)
    out = recall(services, SPACE, RecallRequest(query="肾病", recipe="bm25"))
    assert out.cards and out.cards[0].ref == "message:c1:0"
    assert pending(services) == (0, 3)  # keywords caught up, embeddings still queued
    assert any("3 条消息尚未向量化" in line for line in out.trace)


def test_recall_catches_up_only_its_own_space(services, put):
    put("c1", CONVO)
    put("c1", CONVO, space="other")
    recall(services, SPACE, RecallRequest(query="肾病"))
    assert pending(services) == (0, 3)
    assert pending(services, "other") == (3, 3)


def test_recall_spends_at_most_its_budget_and_says_what_is_left(services, put, monkeypatch):
    put("c1", CONVO)
    monkeypatch.setattr(services.settings, "freshness_budget_ms", 0.0)
    out = recall(services, SPACE, RecallRequest(query="肾病"))
    assert out.cards == []
    assert any("3 条新消息未建索引" in line for line in out.trace)
    assert pending(services) == (3, 3)


def test_an_embedder_failure_keeps_the_entries_queued(services, put, monkeypatch):
    put("c1", CONVO)
    real = services.embedder.embed_passages
    monkeypatch.setattr(services.embedder, "embed_passages",
                        lambda texts: (_ for _ in ()).throw(RuntimeError("model crashed")))
    with pytest.raises(RuntimeError):
        services.index.drain("vector")
    assert pending(services) == (3, 3)
    monkeypatch.setattr(services.embedder, "embed_passages", real)
    assert services.index.drain_all("vector") == 3
    assert pending(services) == (3, 0)


def test_a_deleted_message_is_skipped_by_the_lanes(services, put):
    from chalicelib.usecases import ingest

    put("c1", CONVO)
    ingest.delete_message(services, SPACE, "c1", 0)
    services.index.drain_all("keyword")
    services.index.drain_all("vector")
    assert keyword_ids(services, "肾病") == []
    assert pending(services) == (0, 0)


def test_the_outbox_is_shared_across_processes(services, put):
    """A second process on the same data dir (the CLI beside a server) sees the queue."""
    put("c1", CONVO)
    other = build_services(services.settings, index="background", embedder=services.embedder)
    assert other.index.drain_all("keyword") == 3
    assert other.index.drain_all("vector") == 3
    assert pending(services) == (0, 0)
    assert keyword_ids(services, "肾病")[0] == "message:c1:0"


def test_the_background_lanes_drain_the_outbox(services, put):
    from chalicelib.local.indexer import BackgroundIndexer

    lanes = BackgroundIndexer(services.index, poll_seconds=0.05)
    lanes.start()
    try:
        put("c1", CONVO)
        deadline = time.monotonic() + 5
        while pending(services) != (0, 0) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert pending(services) == (0, 0)
        assert keyword_ids(services, "肾病")[0] == "message:c1:0"
    finally:
        lanes.stop()


def test_switching_to_inline_drains_and_removes_the_outbox(services, put):
    put("c1", CONVO)  # background: queued, not indexed yet
    inline = build_services(services.settings, index="inline", embedder=services.embedder)
    assert keyword_ids(inline, "肾病")[0] == "message:c1:0"  # drained on the switch
    con = inline.store.db.connect()
    assert not con.execute("SELECT 1 FROM sqlite_master WHERE name LIKE '%_queue'").fetchone()
    back = build_services(services.settings, index="background", embedder=services.embedder)
    assert back.index.outbox.pending(SPACE).keyword_pending == 0  # the queue is back, empty


def test_writers_index_keywords_themselves_when_the_lane_falls_behind(services, put):
    services.index.keyword_backlog = 4
    put("c1", CONVO)  # 3 queued: under the limit, nothing indexed in the PUT
    assert pending(services)[0] == 3
    put("c2", CONVO)  # 6 queued now
    put("c3", CONVO)  # before writing, the writer brings the lane back under the limit
    assert pending(services)[0] <= 4 + 3
    assert keyword_ids(services, "肾病")[:1] == ["message:c1:0"]


def test_a_data_dir_from_before_the_lanes_keeps_its_queue(tmp_path):
    """outbox-001 databases held one queue; its entries go to both lanes on upgrade."""
    from chalicelib.adapters.sqlite.db import SQLiteDB
    from chalicelib.adapters.sqlite.outbox import OUTBOX_MIGRATIONS, SqliteOutbox
    from chalicelib.adapters.sqlite.store import SQLiteStore

    db = SQLiteDB(tmp_path / "old.db")
    SQLiteStore(db)
    db.migrate(OUTBOX_MIGRATIONS[:1])
    with db.tx() as con:
        con.execute("INSERT INTO index_outbox (space, session, seq) VALUES ('sp', 'c1', 0)")
    outbox = SqliteOutbox(db)
    assert outbox.pending("sp") == outbox.pending() and outbox.pending().keyword_pending == 1
    assert outbox.pending().vector_pending == 1

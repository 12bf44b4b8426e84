"""The local outbox: a PUT stores and queues in one transaction, indexes its space's keywords
before it answers, and leaves embeddings to the vector lane; a recall never waits for them.
Entries another process left (the CLI, a crash) are picked up by the lanes and, within its
budget, by a recall."""

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


def queue_only(services, space, session, items):
    """What another process (the CLI) or a crash between commit and indexing leaves behind:
    rows stored and queued, nothing indexed."""
    from chalicelib.domain.models import Message, MessageIn

    msgs = [Message.from_input(space, session, MessageIn(
        seq=seq, role=role, speaker=who, content=text, at=T0)) for seq, role, who, text in items]
    services.store.upsert_messages(space, session, msgs, T0)


def test_a_put_indexes_keywords_before_answering_and_queues_embeddings(services, put):
    put("c1", CONVO)
    assert pending(services) == (0, 3)
    assert keyword_ids(services, "肾病") == ["message:c1:0"]


def test_lanes_drain_independently_and_entries_leave_when_both_are_done(services):
    queue_only(services, SPACE, "c1", CONVO)
    assert pending(services) == (3, 3)
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
    services.index.drain_all("vector")
    put("c1", CONVO)
    assert pending(services) == (0, 0)
    put("c1", [(0, "user", "小明", "我家的猫奶糖被确诊了胃炎。")])
    assert pending(services) == (0, 1)
    assert keyword_ids(services, "肾病") == [] and keyword_ids(services, "胃炎") == ["message:c1:0"]


def test_recall_finds_a_new_message_by_keyword_without_waiting_for_embeddings(services, put):
    put("c1", CONVO)
    out = recall(services, SPACE, RecallRequest(query="肾病", recipe="bm25"))
    assert out.cards and out.cards[0].ref == "message:c1:0"
    assert pending(services) == (0, 3)  # embeddings still queued
    assert any("3 条消息尚未向量化" in line for line in out.trace)


def test_recall_catches_up_what_another_process_queued_in_its_own_space(services):
    queue_only(services, SPACE, "c1", CONVO)
    queue_only(services, "other", "c1", CONVO)
    out = recall(services, SPACE, RecallRequest(query="肾病", recipe="bm25"))
    assert out.cards and out.cards[0].ref == "message:c1:0"
    assert pending(services) == (0, 3)
    assert pending(services, "other") == (3, 3)


def test_recall_spends_at_most_its_budget_and_says_what_is_left(services, monkeypatch):
    queue_only(services, SPACE, "c1", CONVO)
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
    assert pending(services) == (0, 3)
    monkeypatch.setattr(services.embedder, "embed_passages", real)
    assert services.index.drain_all("vector") == 3
    assert pending(services) == (0, 0)


def test_a_deleted_message_is_skipped_by_the_lanes(services):
    from chalicelib.usecases import ingest

    queue_only(services, SPACE, "c1", CONVO)
    ingest.delete_message(services, SPACE, "c1", 0)
    services.index.drain_all("keyword")
    services.index.drain_all("vector")
    assert keyword_ids(services, "肾病") == []
    assert pending(services) == (0, 0)


def test_the_outbox_is_shared_across_processes(services, put):
    """A second process on the same data dir (the CLI beside a server) sees the queue."""
    put("c1", CONVO)
    other = build_services(services.settings, index="background", embedder=services.embedder)
    assert other.index.drain_all("keyword") == 0  # the PUT indexed its keywords
    assert other.index.drain_all("vector") == 3
    assert pending(services) == (0, 0)
    assert keyword_ids(services, "肾病")[0] == "message:c1:0"


def test_the_background_lanes_drain_the_outbox(services):
    from chalicelib.local.indexer import BackgroundIndexer

    lanes = BackgroundIndexer(services.index, poll_seconds=0.05)
    lanes.start()
    try:
        queue_only(services, SPACE, "c1", CONVO)
        deadline = time.monotonic() + 5
        while pending(services) != (0, 0) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert pending(services) == (0, 0)
        assert keyword_ids(services, "肾病")[0] == "message:c1:0"
    finally:
        lanes.stop()


def test_switching_to_inline_drains_and_removes_the_outbox(services):
    queue_only(services, SPACE, "c1", CONVO)  # queued, not indexed yet
    inline = build_services(services.settings, index="inline", embedder=services.embedder)
    assert keyword_ids(inline, "肾病")[0] == "message:c1:0"  # drained on the switch
    con = inline.store.db.connect()
    assert not con.execute("SELECT 1 FROM sqlite_master WHERE name LIKE '%_queue'").fetchone()
    back = build_services(services.settings, index="background", embedder=services.embedder)
    assert back.index.outbox.pending(SPACE).keyword_pending == 0  # the queue is back, empty


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


def test_an_entry_id_is_never_reused_so_a_slow_drainer_cannot_take_a_newer_entry(services):
    """A recall's freshen and a writer may take the same entries; if the writer empties the
    queue and new messages arrive, the slow one's `done` must not remove the new entries."""
    queue_only(services, SPACE, "c1", CONVO)
    outbox = services.index.outbox
    slow = outbox.take("keyword", 32, SPACE)  # a recall took these …
    services.index.drain_all("keyword")  # … a writer indexed them, the queue is empty …
    queue_only(services, SPACE, "c2", CONVO)  # … and new messages were queued
    outbox.done("keyword", [e.id for e in slow])  # the recall finishes
    assert pending(services)[0] == 3
    services.index.drain_all("keyword")
    assert "message:c2:0" in keyword_ids(services, "肾病")


def test_the_data_dir_and_its_files_are_the_owners_only(services):
    import stat

    data = services.settings.data_dir
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    services.store.db.connect().execute("SELECT 1")
    for f in data.iterdir():
        if f.name.startswith("annals.db"):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_a_message_that_always_fails_to_index_is_quarantined_not_retried_forever(
        services, monkeypatch):
    from chalicelib.domain.records import JobFailure
    from chalicelib.usecases.stats import space_stats

    queue_only(services, SPACE, "c1", CONVO)
    real = services.embedder.embed_passages

    def fragile(texts):
        if any("肾病" in t for t in texts):
            raise RuntimeError("cannot embed this one")
        return real(texts)

    monkeypatch.setattr(services.embedder, "embed_passages", fragile)
    with pytest.raises(RuntimeError):
        services.index.drain("vector")
    for _ in range(3):
        services.index.isolate("vector", T0)
    assert pending(services)[1] == 0  # the good one indexed, the bad ones taken out
    # c1:1's embedding reads c1:0 (the turn it answers), so it fails too
    failures = services.store.list_records(JobFailure, "index")
    assert [f.key for f in failures] == [f"{SPACE}/vector/message:c1:0",
                                         f"{SPACE}/vector/message:c1:1"]
    assert all(f.quarantined for f in failures)
    assert space_stats(services, SPACE)["failures"][0]["job"] == "index"


# ------------------------------------------------------------------ one transaction, grouped


def _stored(services, space=SPACE):
    con = services.store.db.connect()
    return (con.execute("SELECT COUNT(*) FROM messages WHERE space=?", (space,)).fetchone()[0],
            con.execute("SELECT COUNT(*) FROM kw_docs WHERE space=?", (space,)).fetchone()[0])


def test_a_put_whose_keyword_write_fails_stores_nothing(services, put, monkeypatch):
    """Messages and keyword rows are one transaction: a failure in the second leaves no
    message stored, queued or half-indexed, and the same PUT succeeds once it is retried."""
    keywords = services.index.ingest.keywords

    def broken(con, rows):
        raise OSError("disk full (injected)")

    monkeypatch.setattr(keywords, "write_rows", broken)
    with pytest.raises(OSError):
        put("c1", CONVO)
    assert _stored(services) == (0, 0)
    assert pending(services) == (0, 0)
    monkeypatch.undo()
    put("c1", CONVO)
    assert _stored(services) == (3, 3) and pending(services) == (0, 3)
    assert keyword_ids(services, "肾病") == ["message:c1:0"]


def test_concurrent_puts_commit_together_and_each_gets_its_own_outcome(services, monkeypatch):
    """PUTs arriving while one commits are written by one transaction (group commit); every
    PUT answers with its own seqs, everything is findable by keyword, nothing stays queued
    for the keyword lane."""
    import threading

    from chalicelib.domain.models import Message, MessageIn
    from chalicelib.usecases.indexing import message_doc

    ingest = services.index.ingest
    groups: list[int] = []
    real_write = ingest._write

    def slow_write(group):  # hold the writer lock long enough for the others to queue up
        groups.append(len(group))
        time.sleep(0.05)
        return real_write(group)

    monkeypatch.setattr(ingest, "_write", slow_write)
    outcomes: dict[int, object] = {}

    def one(i: int) -> None:
        msgs = [Message.from_input(SPACE, f"s{i}", MessageIn(
            seq=k, role="user", speaker="Ann", content=f"word{i}x{k} and more", at=T0))
            for k in range(3)]
        outcomes[i] = ingest.put(SPACE, f"s{i}", msgs,
                                 [message_doc(m, services.clean) for m in msgs])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(groups) == 8 and len(groups) < 8  # some PUTs shared a commit
    assert all(outcomes[i].accepted == [0, 1, 2] for i in range(8))
    assert _stored(services) == (24, 24)
    assert pending(services) == (0, 24)
    for i in range(8):
        assert keyword_ids(services, f"word{i}x2") == [f"message:s{i}:2"]


def test_a_failing_put_in_a_group_fails_alone(services, monkeypatch):
    """A group whose transaction fails is retried batch by batch: the others are stored."""
    from chalicelib.adapters.sqlite.ingest import _Batch
    from chalicelib.domain.models import Message, MessageIn
    from chalicelib.usecases.indexing import message_doc

    ingest = services.index.ingest
    real = type(services.store).write_messages

    def picky(con, space, session, messages):
        if session == "bad":
            raise ValueError("this batch cannot be written (injected)")
        return real(con, space, session, messages)

    monkeypatch.setattr(type(services.store), "write_messages", staticmethod(picky))

    def batch(session: str) -> _Batch:
        msgs = [Message.from_input(SPACE, session, MessageIn(
            seq=0, role="user", speaker="Ann", content=f"only in {session}", at=T0))]
        return _Batch(SPACE, session, msgs, {m.ref: message_doc(m, services.clean)
                                             for m in msgs})

    group = [batch("good1"), batch("bad"), batch("good2")]
    ingest._commit(group)
    assert [b.done for b in group] == [True, True, True]
    assert group[0].outcome.accepted == [0] and group[2].outcome.accepted == [0]
    assert isinstance(group[1].error, ValueError) and group[1].outcome is None
    assert _stored(services) == (2, 2)
    assert keyword_ids(services, "good2") == ["message:good2:0"]


def test_the_keyword_copy_is_caught_up_in_batches_and_searches_see_every_put(services, put):
    """A PUT leaves the in-memory keyword copy behind until CATCH_UP_ROWS rows have piled
    up; a search in between brings it up to date itself, so nothing acknowledged is missed."""
    from chalicelib.adapters.sqlite.index import CATCH_UP_ROWS

    keywords = services.index.ingest.keywords
    put("c0", CONVO)
    assert keyword_ids(services, "肾病") == ["message:c0:0"]  # loads the copy
    memory = keywords._memory
    seen = memory.rev
    put("c1", [(0, "user", "小明", "奶糖今天学会了握手 handshakeword")])
    assert memory.rev == seen  # not caught up by the PUT
    assert keyword_ids(services, "handshakeword") == ["message:c1:0"]  # the search did
    seen = memory.rev
    for i in range(CATCH_UP_ROWS // 20 + 1):
        put(f"b{i}", [(k, "user", "小明", f"batch{i} word{k}") for k in range(20)])
    assert memory.rev > seen  # a writer caught it up once enough rows had piled up


def test_a_put_tokenizes_only_what_the_store_does_not_hold(services, put, monkeypatch):
    """Hosts often PUT a window of messages they sent before: the unchanged ones are not
    tokenized again; a changed one is, and its old words leave the index."""
    keywords = services.index.ingest.keywords
    put("c1", CONVO)
    prepared: list[str] = []
    real = keywords.prepare

    def spy(docs):
        prepared.extend(d.id for d in docs)
        return real(docs)

    monkeypatch.setattr(keywords, "prepare", spy)
    put("c1", [*CONVO, (3, "user", "小明", "明天带奶糖复查")])
    assert prepared == ["message:c1:3"]
    prepared.clear()
    put("c1", [(0, "user", "小明", "奶糖的肾病已经好转了")])
    assert prepared == ["message:c1:0"]
    assert keyword_ids(services, "好转") == ["message:c1:0"]
    assert keyword_ids(services, "确诊") == []
    assert pending(services) == (0, 5)

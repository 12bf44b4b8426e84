"""chalicelib.usecases.ingest: idempotent upsert of messages by seq, content hashes, delete, and the
history-safety marks that a change leaves on an extracted session."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from chalicelib.domain.errors import NotFound
from chalicelib.domain.models import MessageIn, PutMessagesRequest, content_hash
from chalicelib.ports import SearchFilter
from chalicelib.usecases import ingest
from chalicelib.usecases.extract import extract_session
from tests.unit.conftest import SPACE, T0

CONVO = [
    (0, "user", "小明", "我家的猫奶糖被确诊了肾病，医生说要每天吃药。"),
    (1, "assistant", "Aki", "听到这个消息很难过，奶糖会好起来的。"),
    (2, "user", "小明", "谢谢"),
]


def keyword_ids(services, query, space=SPACE):
    return [h.id for h in services.keywords.keyword_search(space, query, 10)]


class TestUpsert:
    def test_first_put_accepts_everything(self, services, put):
        out = put("c1", CONVO)
        assert (out.accepted, out.unchanged, out.changed) == (3, 0, 0)
        assert out.seqs == {"accepted": [0, 1, 2], "unchanged": [], "changed": []}
        stored = services.store.get_messages(SPACE, "c1")
        assert [(m.seq, m.role, m.speaker, m.content) for m in stored] == CONVO
        assert stored[0].at == T0

    def test_same_batch_again_is_unchanged(self, put):
        put("c1", CONVO)
        out = put("c1", CONVO)
        assert (out.accepted, out.unchanged, out.changed) == (0, 3, 0)

    def test_mixed_batch_counts_each_outcome(self, services, put):
        put("c1", CONVO[:2])
        edited = (1, "assistant", "Aki", "听到这个消息很难过，奶糖一定会好起来的。")
        out = put("c1", [CONVO[0], edited, CONVO[2]])
        assert out.seqs == {"accepted": [2], "unchanged": [0], "changed": [1]}
        assert services.store.get_message(SPACE, "c1", 1).content == edited[3]

    def test_content_hash_covers_role_speaker_content_and_time(self, services, put):
        put("c1", CONVO[:1])
        stored = services.store.get_message(SPACE, "c1", 0)
        assert stored.content_hash == content_hash("user", "小明", CONVO[0][3], T0)
        assert len(stored.content_hash) == 32
        # a different speaker, role or time is different evidence
        for variant in [(0, "user", "小红", CONVO[0][3]), (0, "assistant", "小明", CONVO[0][3])]:
            assert put("c1", [variant]).changed == 1
        later = ingest.put_messages(services, SPACE, "c1", PutMessagesRequest(messages=[
            MessageIn(seq=0, role="assistant", speaker="小明", content=CONVO[0][3],
                      at=T0 + timedelta(seconds=1))]))
        assert later.changed == 1

    def test_missing_speaker_defaults_to_role_and_hashes_the_same(self, services, put):
        put("c1", [(0, "user", None, "I adopted a puppy named Luna.")])
        assert services.store.get_message(SPACE, "c1", 0).speaker == "user"
        assert put("c1", [(0, "user", "user", "I adopted a puppy named Luna.")]).unchanged == 1

    def test_content_is_stored_verbatim(self, services, put):
        raw = "  line one\n\tline two  🐱  "
        put("c1", [(0, "user", "Mel", raw)])
        assert services.store.get_message(SPACE, "c1", 0).content == raw

    def test_sessions_and_spaces_are_separate(self, services, put):
        put("c1", CONVO[:1])
        assert put("c2", CONVO[:1]).accepted == 1
        assert put("c1", CONVO[:1], space="other").accepted == 1
        assert services.store.get_message("other", "c2", 0) is None

    def test_session_state_tracks_count_and_last_time(self, services, put):
        put("c1", CONVO)
        state = services.store.get_session(SPACE, "c1")
        assert state.message_count == 3
        assert state.last_message_at == T0 + timedelta(minutes=2)
        assert state.pending_since == T0
        assert state.extracted_upto == -1 and state.dirty_from is None


@pytest.fixture(params=["inline", "background"])
def iput(request, services, put):
    """put(), then the index is up to date: inline mode indexes inside the call; background
    mode (the local default) queues in the outbox, drained here as the background lanes do."""
    if request.param == "background":
        from chalicelib.wiring import outbox_index_writer

        services.index = outbox_index_writer(services, services.store.db)

    def run(*args, **kwargs):
        out = put(*args, **kwargs)
        if request.param == "background":
            services.index.drain_all("keyword")
            services.index.drain_all("vector")
        return out

    return run


class TestIndexing:
    @pytest.fixture
    def services(self, sqlite_services):  # the outbox lives in the SQLite file
        return sqlite_services

    def test_messages_are_searchable_by_keyword_and_vector(self, services, iput):
        iput("c1", CONVO)
        assert keyword_ids(services, "肾病")[0] == "message:c1:0"
        vec = services.embedder.embed_query("小明: 我家的猫奶糖被确诊了肾病，医生说要每天吃药。")
        assert services.vectors.vector_search(SPACE, vec, 1)[0].id == "message:c1:0"

    def test_a_changed_message_is_reindexed(self, services, iput):
        iput("c1", CONVO[:1])
        iput("c1", [(0, "user", "小明", "我家的猫奶糖被确诊了胃炎。")])
        assert keyword_ids(services, "肾病") == []
        assert keyword_ids(services, "胃炎") == ["message:c1:0"]

    def test_unchanged_messages_are_not_reembedded(self, services, iput, monkeypatch):
        iput("c1", CONVO)
        seen: list[str] = []
        real = services.embedder.embed_passages

        def spy(texts):
            seen.extend(texts)
            return real(texts)

        monkeypatch.setattr(services.embedder, "embed_passages", spy)
        iput("c1", [*CONVO, (3, "user", "小明", "奶糖今天胃口很好。")])
        # Only the new message is embedded (with the other party's turn before it, if any).
        assert len(seen) == 1 and seen[0].endswith("小明: 奶糖今天胃口很好。")

    def test_inline_embedder_failure_writes_nothing(self, services, put, monkeypatch):
        def broken(texts):
            raise RuntimeError("model crashed")

        monkeypatch.setattr(services.embedder, "embed_passages", broken)
        with pytest.raises(RuntimeError):
            put("c1", CONVO)
        assert services.store.get_messages(SPACE, "c1") == []
        assert services.store.get_session(SPACE, "c1") is None
        assert services.keywords.count(SPACE, SearchFilter()) == 0
        vec = np.ones(services.embedder.dim, np.float32)
        assert services.vectors.vector_search(SPACE, vec, 5) == []


class TestDelete:
    def test_delete_returns_the_message_and_removes_it_everywhere(self, services, put):
        put("c1", CONVO)
        deleted = ingest.delete_message(services, SPACE, "c1", 0)
        assert (deleted.seq, deleted.content) == (0, CONVO[0][3])
        assert services.store.get_message(SPACE, "c1", 0) is None
        assert [m.seq for m in services.store.get_messages(SPACE, "c1")] == [1, 2]
        assert keyword_ids(services, "肾病") == []
        vec = services.embedder.embed_query("小明: " + CONVO[0][3])
        assert "message:c1:0" not in [h.id for h in services.vectors.vector_search(SPACE, vec, 10)]

    def test_delete_missing_is_not_found(self, services, put):
        put("c1", CONVO[:1])
        ingest.delete_message(services, SPACE, "c1", 0)
        with pytest.raises(NotFound) as err:
            ingest.delete_message(services, SPACE, "c1", 0)
        assert err.value.status == 404
        with pytest.raises(NotFound):
            ingest.delete_message(services, SPACE, "nope", 7)

    def test_reput_after_delete_is_accepted_again(self, put, services):
        put("c1", CONVO[:1])
        ingest.delete_message(services, SPACE, "c1", 0)
        assert put("c1", CONVO[:1]).accepted == 1


class TestHistorySafety:
    def test_change_before_extraction_does_not_mark_dirty(self, services, put):
        put("c1", CONVO)
        put("c1", [(0, "user", "小明", "我家的猫奶糖被确诊了胃炎。")])
        assert services.store.get_session(SPACE, "c1").dirty_from is None

    def test_change_after_extraction_marks_dirty_and_reextraction_supersedes(
            self, services, put, clock):
        put("c1", CONVO)
        first = extract_session(services, SPACE, "c1")
        old = next(e for e in first if e.sources[0].seq_start == 0)
        put("c1", [(0, "user", "小明", "我家的猫奶糖被确诊了胃炎，医生说要每天吃药。")])
        assert services.store.get_session(SPACE, "c1").dirty_from == 0

        second = extract_session(services, SPACE, "c1")
        assert services.store.get_session(SPACE, "c1").dirty_from is None
        rolled_back = services.store.get_event(SPACE, old.id)
        assert rolled_back.status == "superseded"
        assert [v.status for v in services.store.event_history(SPACE, old.id)] == [
            "active", "superseded"]
        assert any("胃炎" in e.summary for e in second)
        assert keyword_ids(services, "肾病") == []  # neither the event nor the message

    def test_delete_after_extraction_supersedes_the_events_citing_it(self, services, put, clock):
        put("c1", CONVO)
        [event] = [e for e in extract_session(services, SPACE, "c1")
                   if e.sources[0].seq_start == 0]
        ingest.delete_message(services, SPACE, "c1", 0)
        assert services.store.get_session(SPACE, "c1").dirty_from == 0
        extract_session(services, SPACE, "c1")
        assert services.store.get_event(SPACE, event.id).status == "superseded"

    def test_reverting_an_edit_revives_the_original_event(self, services, put, clock):
        put("c1", CONVO)
        [original] = [e for e in extract_session(services, SPACE, "c1")
                      if e.sources[0].seq_start == 0]
        put("c1", [(0, "user", "小明", "我家的猫奶糖被确诊了胃炎，医生说要每天吃药。")])
        extract_session(services, SPACE, "c1")
        put("c1", CONVO[:1])  # the edit is undone: the same evidence as the first time
        extract_session(services, SPACE, "c1")
        revived = services.store.get_event(SPACE, original.id)
        assert (revived.status, revived.version, revived.summary) == (
            "active", 3, original.summary)
        assert [v.status for v in services.store.event_history(SPACE, original.id)] == [
            "active", "superseded", "active"]
        assert keyword_ids(services, "肾病")[0] in (original.ref, "message:c1:0")

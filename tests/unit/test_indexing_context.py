"""Message embeddings lean towards the other party's previous turn; keywords never do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.domain.models import Message, MessageIn
from chalicelib.usecases.indexing import Indexer

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def msg(seq, speaker, text):
    return Message.from_input("sp", "s1", MessageIn(seq=seq, role="user", speaker=speaker,
                                                    content=text, at=T0 + timedelta(minutes=seq)))


def test_reply_is_embedded_with_the_question_it_answers(services):
    docs = Indexer(services).message_docs([msg(1, "Mel", "Any plans for the summer?"),
                                   msg(2, "Caroline", "Researching adoption agencies."),
                                   msg(3, "Caroline", "Also painting a lot.")])
    assert docs[0].context_text is None  # nothing before it
    assert docs[1].context_text == "Mel: Any plans for the summer?"
    assert docs[1].text == "Caroline: Researching adoption agencies."  # keywords: own words
    assert docs[2].context_text is None  # the same speaker's previous turn is not context
    assert "context_text" not in docs[1].model_dump()


def test_previous_turn_is_read_from_the_store_across_batches(services, put):
    put("s1", [(1, "user", "Mel", "Did you go to the parade?")])
    [doc] = Indexer(services).message_docs([msg(2, "Caroline", "Yes, it was wonderful.")])
    assert doc.context_text == "Mel: Did you go to the parade?"


def test_event_embedding_reads_the_turn_its_message_answered(services, put):
    from chalicelib.domain.models import Event, Source, When

    put("s1", [(1, "user", "Mel", "Any plans for the summer?"),
               (2, "assistant", "Caroline", "Researching adoption agencies.")])
    start = T0.replace(hour=0)
    ev = Event(id="e1", space="sp", title="t", summary="Caroline is researching adoption agencies",
               when=When(start=start, end=start + timedelta(days=1)),
               sources=[Source(session="s1", seq_start=2, seq_end=2)], created_at=T0,
               updated_at=T0)
    manual = ev.model_copy(update={"id": "e2", "sources": []})
    docs = Indexer(services).event_docs([ev, manual])
    assert docs[0].context_text == "Mel: Any plans for the summer?"
    assert docs[1].context_text is None


def test_an_english_reply_is_read_with_its_question_a_chinese_one_mixed(services):
    import numpy as np

    ix = Indexer(services)
    en = ix.embed(ix.message_docs([msg(1, "Mel", "Any plans for the summer?"),
                                   msg(2, "Caroline", "Researching adoption agencies.")]))
    [as_one] = services.embedder.embed_passages(
        ["Mel: Any plans for the summer?\nCaroline: Researching adoption agencies."])
    assert np.allclose(en[1].vector, as_one, atol=1e-5)
    assert np.allclose(en[0].vector, services.embedder.embed_passages(
        ["Mel: Any plans for the summer?"])[0], atol=1e-5)  # no context: its own text
    zh = ix.embed(ix.message_docs([msg(1, "阿狸", "周末去哪玩了？"), msg(2, "小雨", "去了苏州，逛了拙政园")]))
    own, question = services.embedder.embed_passages(["小雨: 去了苏州，逛了拙政园", "阿狸: 周末去哪玩了？"])
    reply = np.asarray(zh[1].vector)
    assert abs(float(np.linalg.norm(reply)) - 1.0) < 1e-5
    expected = own + 0.4 * question
    assert np.allclose(reply, expected / np.linalg.norm(expected), atol=1e-5)


def test_a_turn_days_after_the_last_one_answers_nothing(services):
    late = Message.from_input("sp", "s1", MessageIn(seq=2, role="user", speaker="Caroline",
                                                    content="I started painting.",
                                                    at=T0 + timedelta(days=3)))
    docs = Indexer(services).message_docs([msg(1, "Mel", "Any plans for the summer?"), late])
    assert docs[1].context_text is None

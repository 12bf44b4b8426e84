"""A long query (a pasted page as the message) is embedded once, as its first window, and
its terms are read once per recall (chalicelib.adapters.e5 QUERY_TOKENS,
chalicelib.domain.textproc.query_terms, recipes' split_max_chars)."""

from __future__ import annotations

import numpy as np
import pytest

from chalicelib.adapters.e5 import QUERY_TOKENS
from chalicelib.domain import textproc
from chalicelib.domain.models import RecallRequest
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.recall import recall
from chalicelib.usecases.recall.query import split_intents
from chalicelib.usecases.recall.recipes import HYBRID
from tests.unit.conftest import SPACE

QUESTIONS = "奶糖体检结果怎么样？还有小明的吉他课上得如何？"
PAGE = (QUESTIONS + "我们上次聊到奶糖在海边玩耍的那天，风很大，后来又去了市中心吃饭。" * 120)[:4000]


@pytest.mark.e5
def test_a_long_query_is_embedded_as_its_first_window(e5_embedder):
    model = e5_embedder._get()
    cut = e5_embedder.cut_query(PAGE)
    assert model.token_count(cut, True) <= QUERY_TOKENS
    assert model.token_count(PAGE[:len(cut) + 4], True) > QUERY_TOKENS  # the longest such
    assert np.allclose(e5_embedder.embed_query(PAGE), e5_embedder.embed_query(cut), atol=1e-5)
    assert model.token_count(QUESTIONS, True) < QUERY_TOKENS  # a chat turn is never cut
    assert e5_embedder.cut_query(QUESTIONS) == QUESTIONS


def test_a_pasted_page_is_one_intent_a_short_message_still_splits():
    assert len(split_intents(QUESTIONS, HYBRID)) == 2
    assert split_intents(PAGE, HYBRID) == [PAGE]


def test_a_long_recall_embeds_once_and_reads_its_terms_once(services, put, monkeypatch):
    put("c1", [(0, "user", "小明", "奶糖昨天做了体检，医生说她有点瘦"),
               (1, "user", "小明", "我报名了周六的吉他课，老师在市中心")])
    extract_session(services, SPACE, "c1")
    embedded: list[str] = []
    original = services.embedder.embed_query
    monkeypatch.setattr(services.embedder, "embed_query",
                        lambda text: embedded.append(text) or original(text))
    textproc._query_terms.cache_clear()
    out = recall(services, SPACE, RecallRequest(query=PAGE, min_relevance=0, max_cards=2))
    assert out.cards  # it still finds something
    assert len(embedded) == 1 and len(embedded[0]) > 3000  # once, the page (names stripped);
    # the embedder cuts it to its first window
    assert textproc._query_terms.cache_info().hits > 0  # later readers took the first reading
    assert textproc.query_terms(PAGE) == textproc.query_terms(PAGE)
    terms = textproc.query_terms(PAGE)
    terms.append("x")  # a caller's list is its own
    assert "x" not in textproc.query_terms(PAGE)

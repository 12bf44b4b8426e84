"""Recall across languages (recall/languages.py): the shipped language means are what the
bundled model gives, a moved hit is placed by its own language, and an English question finds
the Chinese memory that answers it among Chinese ones and English look-alikes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chalicelib.adapters.e5 import load_means
from chalicelib.adapters.e5_languages import embed_means
from chalicelib.adapters.hash_embedder import HashEmbedder
from chalicelib.ports import Hit
from chalicelib.usecases.recall.languages import (
    Across,
    across,
    holds_other_language,
    merge_across,
)
from chalicelib.usecases.recall.recipes import DENSE_ONLY


@pytest.mark.e5
def test_the_shipped_means_are_the_models(e5_embedder):
    """e5_languages.json must be rebuilt when PARALLEL or the model changes. The engine's
    float sums differ a little between CPUs (1.6e-4 per coordinate seen), so the test asks
    for the same direction and length, not the same bits."""
    shipped, fresh = load_means(), embed_means(e5_embedder)
    for lang in ("en", "zh"):
        for mine, theirs in ((shipped.query[lang], fresh.query[lang]),
                             (shipped.passage[lang], fresh.passage[lang])):
            cosine = float(np.dot(mine, theirs) / np.linalg.norm(mine) / np.linalg.norm(theirs))
            assert cosine > 0.99995
            assert np.linalg.norm(mine) == pytest.approx(np.linalg.norm(theirs), rel=1e-3)


def test_an_embedder_without_means_searches_one_language():
    embedder = HashEmbedder()
    assert across(embedder, "Am I still tutoring?", embedder.embed_query("tutoring")) is None


def test_a_moved_hit_takes_the_score_of_its_own_language():
    # along(own, moved) = moved * 1.0 - own; other language past 0.05
    shift = Across(vector=np.zeros(3, np.float32), norm=1.0, offset=0.04, parting=0.05)
    own = [Hit("en1", 0.82), Hit("zh1", 0.80), Hit("en2", 0.79)]
    moved = [Hit("zh1", 0.88), Hit("zh2", 0.87), Hit("en1", 0.80)]
    merged = {h.id: h.score for h in merge_across(own, moved, shift, k=3)}
    assert merged["zh1"] == pytest.approx(0.88 - 0.04)  # 0.08 along: Chinese
    assert merged["en1"] == pytest.approx(0.82)  # moved lower: its own cosine stays
    # zh2 is in the moved list only: its own cosine is at most 0.79, so ≥ 0.08 along
    assert merged["zh2"] == pytest.approx(0.87 - 0.04)
    assert "en2" not in merged  # k = 3: the Chinese hits, now on the English scale, beat it


def test_a_moved_hit_that_cannot_be_placed_is_left_out():
    shift = Across(vector=np.zeros(3, np.float32), norm=1.0, offset=0.0, parting=0.05)
    own = [Hit("a", 0.85), Hit("b", 0.84)]
    moved = [Hit("c", 0.86)]  # own cosine ≤ 0.84: along ≥ 0.02 only, not past the parting
    assert [h.id for h in merge_across(own, moved, shift, k=2)] == ["a", "b"]


def test_a_space_in_one_language_needs_no_search_in_the_others_words():
    """Only a moved hit past the parting is a memory in the other language: then the
    question's words are searched as that language's (recall.search_lists)."""
    shift = Across(vector=np.zeros(3, np.float32), norm=1.0, offset=0.04, parting=0.05)
    own = [Hit("en1", 0.82), Hit("en2", 0.80), Hit("en3", 0.79)]
    english = [Hit("en1", 0.84), Hit("en2", 0.83)]  # 0.02, 0.03 along: English still
    assert not holds_other_language(own, english, shift, k=3)
    assert holds_other_language(own, [*english, Hit("zh1", 0.86)], shift, k=3)  # ≥ 0.07


@pytest.mark.e5
def test_an_english_question_finds_the_chinese_memory(e5_services, put):
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall
    from chalicelib.usecases.recall.recipes import RECIPES
    from tests.unit.conftest import SPACE

    put("c1", [(1, "user", "小雨", "今天早上跑了五公里，腿好酸。"),
               (2, "user", "小雨", "我的猫最近掉毛很厉害。"),
               (3, "user", "小雨", "周末和闺蜜去吃了火锅，辣得不行。"),
               (4, "user", "小雨", "上个月把旧沙发卖掉了，换了个新的。")])
    # another session: a turn's vector is mixed with the one before it (ingest)
    put("c2", [(1, "user", "Mia", "My legs look great in these jeans."),
               (2, "user", "Mia", "On Saturdays I usually sleep in.")])
    found = {}
    for name, moved in (("dense_across", True), ("dense_one", False)):
        RECIPES[name] = replace(DENSE_ONLY, name=name, across_languages=moved)
        try:
            found[name] = recall(e5_services, SPACE, RecallRequest(
                query="Why are my legs sore?", recipe=name, max_cards=5, limit=5)).cards
        finally:
            del RECIPES[name]
    # The English look-alike ("legs") stays first; the Chinese answer joins it only when the
    # question is searched in Chinese too.
    assert any("五公里" in c.text for c in found["dense_across"][:2])
    assert not any("五公里" in c.text for c in found["dense_one"][:2])

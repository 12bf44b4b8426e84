"""The time path judges a memory in another language than the question by its lift above
that language's small talk, not by a cosine only same-language lines reach
(chalicelib.usecases.recall.timewindow.is_hit, recall.language_shift)."""

from __future__ import annotations

from datetime import UTC

import numpy as np
import pytest

from chalicelib.domain.models import Card
from chalicelib.usecases.recall import language_shift
from chalicelib.usecases.recall.fusion import Candidate
from chalicelib.usecases.recall.recipes import RecallRecipe
from chalicelib.usecases.recall.timewindow import is_hit, topic_terms


def card(text: str) -> Card:
    return Card(ref="event:e1", kind="event", title="", text=text, score=1.0)


def test_a_foreign_card_is_judged_by_the_lift_of_its_language():
    recipe = RecallRecipe(name="hybrid")
    english = card("We drove to Portland for the long weekend.")
    near = Candidate("event:e1", parts={"vector": recipe.time_min_similarity - 0.05})
    terms = ["长周末", "哪里"]
    assert not is_hit(english, near, terms, recipe)  # the query's own floor: too far
    # English sits 0.08 lower for this Chinese query than Chinese does: 0.05 below is a hit
    assert is_hit(english, near, terms, recipe, {"en": -0.08, "zh": 0.0})
    # …and the shift never lowers the floor for a card in the query's own language
    chinese = card("我们开车去了波特兰过长周末")
    assert not is_hit(chinese, near, terms, recipe, {"en": -0.08, "zh": 0.0})


class _Embedder:
    """Small talk in English points one way, Chinese the other; a query between them."""

    def embed_passages(self, texts):
        zh = any("\u4e00" <= ch <= "\u9fff" for t in texts for ch in t)
        return [np.array([0.0, 1.0]) if zh else np.array([1.0, 0.0]) for _ in texts]


class _Services:
    embedder = _Embedder()


def test_the_shift_is_the_other_languages_small_talk_cosine_minus_the_querys_own():
    # cross_lift 1: a foreign card needs the whole lift, the shift is the small talk's alone
    shift = language_shift(_Services(), "七月四号那个长周末我去了哪里？", np.array([0.6, 0.8]),
                           RecallRecipe(name="x", cross_lift=1.0))
    assert shift["zh"] == 0.0
    assert abs(shift["en"] - (0.6 - 0.8)) < 1e-6


def test_a_foreign_card_needs_only_a_share_of_the_lift_a_card_in_the_querys_language_needs():
    # own small talk 0.8, the floor 0.88: a Chinese card needs a lift of 0.08 above Chinese
    # small talk; an English one cross_lift × 0.08 above English small talk (0.6)
    recipe = RecallRecipe(name="hybrid", time_min_similarity=0.88, cross_lift=0.25)
    shift = language_shift(_Services(), "七月四号那个长周末我去了哪里？", np.array([0.6, 0.8]), recipe)
    assert shift["zh"] == 0.0
    assert abs(shift["en"] - ((0.6 - 0.8) - 0.75 * 0.08)) < 1e-6
    floor_en = recipe.time_min_similarity + shift["en"]
    assert abs(floor_en - (0.6 + 0.25 * 0.08)) < 1e-6
    english = card("We drove to Portland for the long weekend.")
    terms = ["长周末", "哪里"]
    assert is_hit(english, Candidate("event:e1", parts={"vector": floor_en + 0.001}), terms,
                  recipe, shift)
    assert not is_hit(english, Candidate("event:e1", parts={"vector": floor_en - 0.01}), terms,
                      recipe, shift)


def test_a_verb_that_only_frames_a_time_question_is_no_keyword():
    # "spend" names nothing a memory of that day says ("回重庆娘家了"); as 过 in
    # "过年的时候我在哪过的", it leaves the time path with no words: the whole window answers
    from datetime import datetime

    from chalicelib.usecases.recall.timewindow import find_anchor

    now = datetime(2026, 11, 14, tzinfo=UTC)
    anchor, _ = find_anchor("Where did I spend the Spring Festival?", None, now, None)
    assert anchor is not None and anchor.terms == ()
    went, _ = find_anchor("Where did we go over the May Day holiday?", None, now, None)
    assert went is not None and went.terms == ()
    talked, _ = find_anchor("What did we talk about on Friday?", None, now, None)
    assert talked is not None and talked.terms == ()  # as 聊了什么 (textproc's frames)
    # content beside the frame stays: "what happened at the dentist last Tuesday"
    dentist, _ = find_anchor("What happened at the dentist last Tuesday?", None, now, None)
    assert dentist is not None and dentist.terms == ("dentist",)


@pytest.mark.parametrize("topic, kept", [
    ("那会儿我在哪？", ()),  # 暑假那会儿: only the time again
    ("那段时间我们住在哪", ("住在",)),
    ("去成都的时候住在哪一带？", ("去成", "成都", "住在", "一带")),
    ("期间我去哪旅游了？", ("旅游",)),
    ("how did you spend it", ()),
])
def test_phrases_that_point_back_at_the_time_are_no_keywords(topic, kept):
    assert topic_terms(topic) == kept


def test_a_memory_that_does_not_name_the_other_person_asked_about_is_no_hit_by_meaning():
    """Issue 36: "What did Vivi give Kevin for Christmas?" (never said) was answered with
    Vivi's Christmas alone ("Christmas 一个人过的 吃了个 KFC"), admitted by its meaning; a
    memory naming Kevin, or holding the question's words, still is one."""
    from chalicelib.usecases.recall.timewindow import named_terms

    recipe = RecallRecipe(name="hybrid")
    terms = ["give", "kevin"]  # Vivi, a speaker, is out of a hook-sized recall's terms
    names = named_terms("What did Vivi give Kevin for Christmas?", terms)
    assert names == {"kevin"}
    near = Candidate("event:e1", parts={"vector": recipe.time_min_similarity + 0.01})
    alone = card("Christmas 一个人过的 吃了个 KFC 全家桶 很 sad 但很爽")
    assert is_hit(alone, near, terms, recipe)  # by meaning, with no name to look for
    assert not is_hit(alone, near, terms, recipe, names=names)
    assert is_hit(card("Kevin 的圣诞礼物是一块表"), near, terms, recipe, names=names)
    assert named_terms("圣诞节我送了凯文什么？", ["送", "凯文"]) == frozenset()  # no capitals

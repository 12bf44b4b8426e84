"""Recall across languages by the question's words (recall/languages.py in_other_words, the
`keyword_across` list of recall.search_lists): a Chinese question about memories told in
English is searched by keyword with its words as English terms, an English question's
terms as Chinese words; the gate reads a Chinese question's words, not its bigrams."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import pytest

from chalicelib.domain.models import RecallRequest
from chalicelib.usecases.recall import recall, recipes
from chalicelib.usecases.recall.gate import Gate
from chalicelib.usecases.recall.languages import chinese_words, in_other_words
from chalicelib.usecases.recall.recipes import HYBRID
from tests.unit.conftest import SPACE, T0
from tests.unit.test_recall_gate import card

# Keyword search only, the gate off: what comes back is what the words find.
WORDS = replace(HYBRID, name="test_across_words", vector_k=0, graph_seeds=0, graph_turns=0,
                min_relevance=0.0, min_relevance_wide=0.0, time_layers=False, answers=0.0,
                facts_weight=0.0, across_languages=True)
NO_ACROSS = replace(WORDS, name="test_across_words_off", across_languages=False)


class Dictionary:
    """A few CC-CEDICT entries, in the glossary's form (English as tokenize's stems)."""

    name = "stub"
    _en: ClassVar[dict[str, set[str]]] = {
        "博物馆": {"museum"}, "博物": {"natur"}, "陶艺": {"potteri"}, "什么": {"someth"},
        "时候": {"time"}, "女儿": {"daughter"}, "闺女": {"daughter"}, "学校": {"school"},
        "纹身": {"tattoo"}, "露营": {"camp"}}

    def in_english(self, word: str) -> frozenset[str]:
        return frozenset(self._en.get(word, ()))

    def in_chinese(self, term: str) -> frozenset[str]:
        return frozenset(w for w, terms in self._en.items() if term in terms)


@pytest.fixture(autouse=True)
def test_recipes(monkeypatch):
    for recipe in (WORDS, NO_ACROSS):
        monkeypatch.setitem(recipes.RECIPES, recipe.name, recipe)


def test_a_chinese_question_is_read_in_dictionary_words_not_bigrams():
    words = chinese_words("Melanie 什么时候去的博物馆？", Dictionary())
    assert words == ["博物馆"]  # the longest word, and no question word (什么, 时候)
    assert in_other_words("Melanie 什么时候去的博物馆？", Dictionary()) == "museum"


def test_a_verb_parted_from_its_object_is_one_word():
    assert chinese_words("Gina 什么时候纹的身？", Dictionary()) == ["纹身"]
    assert chinese_words("她在哪些地方露过营", Dictionary()) == ["露营"]
    assert chinese_words("我去了学校", Dictionary()) == ["学校"]  # 去学 is no word


def test_an_english_question_is_read_as_chinese_words():
    assert in_other_words("What is the name of her daughter?", Dictionary()) == "女儿 闺女"
    assert in_other_words("What did she do?", Dictionary()) == ""  # nothing the glossary knows


def test_a_pasted_page_gives_at_most_the_limit_of_words():
    page = " ".join(["daughter school"] * 500)
    assert in_other_words(page, Dictionary(), limit=2) == "女儿 闺女"
    assert len(in_other_words("博物馆" * 2000, Dictionary()).split()) == 1


def ask(services, query: str, recipe) -> list[str]:
    res = recall(services, SPACE, RecallRequest(query=query, now=T0, recipe=recipe.name,
                                                max_cards=10))
    return [c.ref for c in res.cards]


def test_a_chinese_question_finds_the_english_memory_by_its_words(services, put):
    services.glossary = Dictionary()
    put("1", [(1, "user", "Mel", "We took the kids to the museum on Saturday"),
              (2, "user", "Mel", "The kids loved the dinosaurs at the park")])
    assert ask(services, "Mel 什么时候去的博物馆？", NO_ACROSS) == []
    assert ask(services, "Mel 什么时候去的博物馆？", WORDS) == ["message:1:1"]


def test_an_english_question_finds_the_chinese_memory_by_its_words(services, put):
    services.glossary = Dictionary()
    put("1", [(1, "user", "林悦", "女儿今天在学校画了一只猫"),
              (2, "user", "林悦", "今天加班到九点")])
    assert ask(services, "What did my daughter draw?", NO_ACROSS) == []
    assert ask(services, "What did my daughter draw?", WORDS) == ["message:1:1"]


def test_the_gate_reads_an_english_card_through_the_questions_words():
    """博物馆 is one word: its bigrams 博物 / 物馆 are not (博物 glosses as "natural
    science"), so read by bigrams the card held none of the question."""
    gate = Gate(threshold=0.06, term_weight=0.08, terms=["博物", "物馆"],
                baselines={"zh": 0.80, "en": 0.80}, bound=None, lang="zh",
                glossary=Dictionary(), text="什么时候去的博物馆")
    assert gate.judge(card("we went to the museum", vector=0.83)).coverage == 1.0
    by_bigrams = replace(gate, text="")
    assert by_bigrams.judge(card("we went to the museum", vector=0.83)).coverage == 0.0

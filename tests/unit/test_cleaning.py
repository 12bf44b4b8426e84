"""Cleaning: reasoning and status machinery leave what is extracted, indexed and searched;
the stored message keeps every byte."""

from __future__ import annotations

import pytest

from chalicelib.config import Settings
from chalicelib.domain.cleaning import DEFAULT_PATTERNS, clean, cleaner
from chalicelib.domain.models import RecallRequest
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.recall import recall
from tests.unit.conftest import SPACE

ROLEPLAY = ("<think>用户想确认猫的名字，我应该回忆一下……</think>\n"
            "好呀，奶糖今天打完疫苗了，很乖！\n"
            "<StatusBlock>时间：傍晚 | 地点：宠物医院 | 好感度：+5</StatusBlock>\n"
            "<UpdateVariable>\n_.set('好感度', 80, 85);\n</UpdateVariable>\n"
            "<choice>1. 摸摸奶糖 2. 回家</choice>")


@pytest.mark.parametrize("text, expected", [
    ("<think>private</think>Hello", "Hello"),
    ("<THINKING>x</THINKING> <analysis a='1'>y</analysis>ok", "ok"),
    ("answer first <think>then a reasoning that was cut off", "answer first"),
    ("<!-- hidden -->visible", "visible"),
    ("no machinery at all", "no machinery at all"),
    ("I think <thinking> is a nice word? <think>no</think>", "I think"),
    (ROLEPLAY, "好呀，奶糖今天打完疫苗了，很乖！"),
])
def test_clean_removes_machinery_and_keeps_words(text, expected):
    assert clean(text) == expected


def test_patterns_are_configurable_and_defaults_can_go():
    only_mine = cleaner([r"\[OOC:.*?\]"], defaults=False)
    assert only_mine("[OOC: brb] <think>kept</think>hi") == "<think>kept</think>hi"
    both = cleaner([r"\[OOC:.*?\]"])
    assert both("[OOC: brb] <think>x</think>hi") == "hi"
    with pytest.raises(ValueError, match="ANNALS_CLEAN_PATTERNS"):
        Settings(_env_file=None, clean_patterns=["(unclosed"])
    assert len(DEFAULT_PATTERNS) > 10


def test_machinery_is_neither_extracted_nor_indexed_nor_searched(services, put):
    put("c1", [(0, "user", "小明", "奶糖今天怎么样？"), (1, "assistant", "Aki", ROLEPLAY)])
    stored = services.store.get_message(SPACE, "c1", 1)
    assert stored.content == ROLEPLAY  # the evidence keeps every byte
    events = extract_session(services, SPACE, "c1")
    text = " ".join(e.summary + e.title for e in events)
    assert "疫苗" in text
    assert not any(word in text for word in ("好感度", "StatusBlock", "回忆一下", "摸摸"))
    assert [h.id for h in services.keywords.keyword_search(SPACE, "好感度", 5)] == []
    assert services.keywords.keyword_search(SPACE, "疫苗", 5)
    out = recall(services, SPACE, RecallRequest(
        query="<think>user asks about the vaccine</think>奶糖打疫苗了吗", recipe="bm25"))
    assert out.trace[0].endswith("奶糖打疫苗了吗")
    assert out.cards

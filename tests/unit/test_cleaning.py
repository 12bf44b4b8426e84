"""Cleaning: reasoning and status machinery leave what is extracted, indexed and searched;
the stored message keeps every byte."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    assert both("[OOC: brb] no tag at all") == "no tag at all"  # extras run without a "<"
    with pytest.raises(ValueError, match="ANNALS_CLEAN_PATTERNS"):
        Settings(_env_file=None, clean_patterns=["(unclosed"])
    assert len(DEFAULT_PATTERNS) > 10


def test_machinery_is_neither_extracted_nor_indexed_nor_searched(services, put):
    # the machinery in the teller's turn (an assistant turn is no event of its own; a
    # front-end that wraps the user's turns in a status panel does the same to them)
    put("c1", [(0, "assistant", "Aki", "奶糖今天怎么样？"), (1, "user", "小明", ROLEPLAY)])
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


def _clean_every_pattern(text: str) -> str:
    """clean() as it was before the DEFAULT_NEEDS shortcut: every pattern, every time."""
    import re

    for pattern in DEFAULT_PATTERNS:
        text = re.compile(pattern, re.MULTILINE).sub("", text)
    return re.sub(r"\n\s*\n\s*\n+", "\n\n", text).strip()


_PIECES = ["<think>", "</think>", "<!--", "-->", "_.set('x', 1);", "_.SET(", "\n", "\n\n\n",
           "  ", "hello", "奶糖", "<b>", "<statusblock a=1>", "</StatusBlock>", "<", ">", "_."]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=8), max_size=12))
def test_the_shortcut_never_changes_what_clean_returns(parts):
    """Skipping the default patterns when the text holds none of DEFAULT_NEEDS is only a
    shortcut: clean() answers exactly what running every pattern answers."""
    text = "".join(parts)
    assert clean(text) == _clean_every_pattern(text)

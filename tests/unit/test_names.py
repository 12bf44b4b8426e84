"""chalicelib.domain.names: which known people a query names, the query without them, and
which speakers are no one's name (role words, placeholders, generic nouns)."""

from __future__ import annotations

import pytest

from chalicelib.domain.names import (
    is_placeholder,
    named_people,
    own_name,
    real_names,
    strip_names,
    without_own_name,
)

PEOPLE = ["Caroline", "Melanie", "Ann", "小明", "Aki"]


@pytest.mark.parametrize(("query", "named"), [
    ("What did Caroline research?", {"Caroline"}),
    ("What are Melanie's pets' names?", {"Melanie"}),
    ("Did caroline and MELANIE meet?", {"Caroline", "Melanie"}),
    ("Anna came by", set()),  # a name inside a longer word is not the name
    ("小明都去过哪些地方？", {"小明"}),  # Chinese has no word boundaries
    ("小明和Aki聊了什么？", {"小明", "Aki"}),  # a Latin name between Chinese characters
    ("和Caroline聊了什么", {"Caroline"}),
    ("奶糖去过几次医院？", set()),
])
def test_named_people(query, named):
    assert named_people(query, PEOPLE) == named


@pytest.mark.parametrize(("query", "people", "stripped"), [
    ("What did Caroline's sister say?", ["Caroline"], "What did sister say?"),
    ("What is Mel’s dog called?", ["Mel"], "What is dog called?"),
    ("What did Annabel say?", ["Ann"], "What did Annabel say?"),
    ("小明都去过哪些地方？", ["小明"], "都去过哪些地方？"),
    ("小明和Aki聊了什么？", ["小明", "Aki"], "和 聊了什么？"),
])
def test_strip_names(query, people, stripped):
    assert strip_names(query, people) == stripped


@pytest.mark.parametrize("name", [
    "user", "User", "USER", "assistant", "Assistant", "system", "AI", "ai", "bot", "Bot",
    "model", "char", "{{user}}", "{{char}}", "<USER>", "<BOT>", "[Assistant]", "User 2",
    "assistant_1", "用户", "助手", "系统", "机器人", "AI助手", "用户1", "someone", "Someone",
    "friend", "朋友", "大家", "", "  ", "narrator", "Human",
])
def test_role_words_placeholders_and_generic_nouns_are_not_names(name):
    assert is_placeholder(name)


@pytest.mark.parametrize("name", [
    "Mel", "Sam", "Caroline", "小明", "Aki", "Aiden", "Userman", "Botticelli", "Modelo",
    "Charlotte", "Melanie Chen", "R2D2", "阿明",
])
def test_people_s_names_are_names(name):
    assert not is_placeholder(name)


def test_real_names_keeps_people_in_order_once():
    assert real_names(["user", "Mel", "AI", "小明", "Mel", "{{char}}", "用户"]) == ["Mel", "小明"]


def test_an_extractor_s_draft_never_has_a_placeholder_participant():
    from datetime import timedelta

    from chalicelib.domain.models import EventDraft, When
    from tests.unit.conftest import T0

    draft = EventDraft(title="t", summary="s", when=When(start=T0, end=T0 + timedelta(days=1)),
                       participants=["user", "Mel", "Assistant", "用户"])
    assert draft.participants == ["Mel"]


@pytest.mark.parametrize(("text", "name"), [
    ("我叫阿梅，刚搬到成都。", "阿梅"),
    ("我的名字是王小明。", "王小明"),
    ("你可以叫我小鱼就好", "小鱼"),
    ("叫我小鱼吧", "小鱼"),
    ("Hi! My name is Amy Chen.", "Amy Chen"),
    ("call me Sam, everyone does", "Sam"),
    ("I go by Jo.", "Jo"),
    # 叫 orders, calls and asks; someone else's name; a job; a denial
    ("我叫了外卖", None), ("我叫车去机场。", None), ("我叫他阿梅。", None),
    ("妈妈叫我回家", None), ("我叫什么名字？", None), ("我朋友叫阿梅。", None),
    ("我是程序员。", None), ("my name is not Amy", None), ("Don't call me Sam.", None),
    ("My name is User.", None),  # a placeholder is nobody's name
])
def test_own_name(text, name):
    assert own_name(text) == name


def test_without_own_name_keeps_what_else_is_told():
    assert without_own_name("我叫阿梅，刚搬到成都。") == "我刚搬到成都。"
    assert without_own_name("我叫阿梅，我在书店上班") == "我在书店上班"
    assert without_own_name("Hi, my name is Amy and I moved to Leeds.") == "Hi, I moved to Leeds."
    assert without_own_name("我叫阿梅。") == "我叫阿梅。"  # nothing else: it stays

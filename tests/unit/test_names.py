"""chalicelib.domain.names: which known people a query names, the query without them, and
which speakers are no one's name (role words, placeholders, generic nouns)."""

from __future__ import annotations

import pytest

from chalicelib.domain.names import is_placeholder, named_people, real_names, strip_names

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

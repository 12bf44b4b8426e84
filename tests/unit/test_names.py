"""chalicelib.domain.names: which known people a query names, and the query without them."""

from __future__ import annotations

import pytest

from chalicelib.domain.names import named_people, strip_names

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

"""Recall steps that must hold in Chinese and across languages (issue 22): question words are
no content, a wide recall of a named time fills by meaning, a question hit yields to its
answer, a memory told in another language passes the gate, Chinese advice is no event."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from chalicelib.domain.models import RecallRequest
from chalicelib.domain.salience import praises_or_preaches
from chalicelib.domain.textproc import query_terms
from chalicelib.ports import Hit
from chalicelib.usecases.recall import recall
from chalicelib.usecases.recall.answers import inherit
from chalicelib.usecases.recall.recipes import HYBRID, RECIPES
from tests.unit.conftest import SPACE, T0


@pytest.mark.parametrize("query, frame", [
    ("五一的时候我去哪玩了？", {"去哪", "哪玩"}),
    ("端午节我干嘛去了？", {"干嘛", "嘛去"}),
    ("上上周日我们全家吃的啥？", {"吃的", "的啥"}),
    ("我和谁一起去的苏州？", {"和谁", "谁一"}),
])
def test_question_words_are_no_keyword(query, frame):
    terms = set(query_terms(query))
    assert not terms & frame
    assert not any("哪" in t for t in query_terms("我今年都去哪些地方玩过？"))
    assert "哪吒" in query_terms("哪吒好看吗")  # a name that holds a question character


def test_a_question_hit_yields_to_its_answer():
    hits = [Hit("message:c1:1", 10.0), Hit("message:c1:5", 6.0), Hit("message:c1:9", 2.0)]
    answers = {"message:c1:1": "message:c1:2"}
    keep = {h.id for h in hits}
    plain = inherit(hits, keep, answers, 0.3)
    assert next(h.id for h in plain) == "message:c1:1"  # question_keeps 1.0: as before
    yielded = {h.id: h.score for h in inherit(hits, keep, answers, 0.3, question_keeps=0.5)}
    assert yielded["message:c1:1"] == pytest.approx(2.0 + 0.5 * 8.0)
    assert yielded["message:c1:5"] == 6.0 and yielded["message:c1:2"] == pytest.approx(4.4)


@pytest.mark.parametrize("text", ["多穿点，别感冒了", "先在心里规划一下路线吧", "出去散散步消消食吧",
                                  "偶尔这样很正常", "每个人节奏不一样，不用跟别人比", "注意保暖哦"])
def test_chinese_advice_and_sayings_are_small_talk(text):
    assert praises_or_preaches(text)


@pytest.mark.parametrize("text", ["先去医院复查了", "明天记得带伞", "我先去吃饭了", "多亏了阿杰帮忙搬家",
                                  "少吃了一顿", "别人都很努力", "记得我芒果过敏"])
def test_chinese_reports_and_plans_are_not_advice(text):
    assert not praises_or_preaches(text)


@pytest.mark.e5
def test_a_memory_told_in_english_passes_the_floor_of_a_chinese_question(e5_services, put):
    """Judged against Chinese small talk, every English card sank below the wide floor of a
    Chinese question (verdict none); against English small talk the flight is found, and an
    unrelated question still gets nothing at a hook's threshold."""
    put("c1", [(1, "user", "Sam", "I booked my flight to Lisbon for the conference in May."),
               (2, "assistant", "Kai", "Nice, Lisbon is lovely in spring."),
               (3, "user", "Sam", "My sister is coming to visit next week.")])
    now = T0 + timedelta(days=3)
    asked = recall(e5_services, SPACE, RecallRequest(query="我订了去哪里的机票？", now=now,
                                                     max_cards=5))
    assert asked.verdict == "hit"
    assert "Lisbon" in asked.cards[0].text
    unrelated = recall(e5_services, SPACE, RecallRequest(query="我的吉他课怎么样了？", now=now))
    assert unrelated.verdict == "none" and unrelated.cards == []


@pytest.mark.e5
def test_a_wide_recall_of_a_named_time_fills_by_meaning(e5_services, put):
    """The trip is told after the holiday, so the holiday's day holds only the plan; a wide
    recall shows the plan first, then the report found by meaning and keywords; a hook-sized
    one only what the named time holds."""
    may1 = T0.replace(month=5, day=1, hour=9)
    put("c1", [(1, "user", "小雨", "五一打算和阿杰去杭州玩两三天")], base=may1)
    put("c2", [(1, "user", "小雨", "五一去杭州玩得很开心，第二天去了灵隐寺"),
               (2, "user", "小雨", "周末加班写周报，好累")], base=may1 + timedelta(days=6))
    now = T0.replace(month=11, day=20)
    wide = recall(e5_services, SPACE, RecallRequest(query="五一的时候我去哪玩了？", now=now,
                                                    max_cards=5))
    texts = [c.text for c in wide.cards]
    assert wide.verdict == "hit" and "打算" in texts[0]
    assert any("灵隐寺" in t for t in texts[1:])
    assert any("按内容补足" in line for line in wide.trace)
    hook = recall(e5_services, SPACE, RecallRequest(query="五一的时候我去哪玩了？", now=now,
                                                    max_cards=2))
    assert all("灵隐寺" not in c.text for c in hook.cards)
    RECIPES["no_fill"] = replace(HYBRID, name="no_fill", time_fill=False)
    try:
        unfilled = recall(e5_services, SPACE, RecallRequest(
            query="五一的时候我去哪玩了？", now=now, max_cards=5, recipe="no_fill"))
    finally:
        del RECIPES["no_fill"]
    assert all("灵隐寺" not in c.text for c in unfilled.cards)


def test_the_user_is_whom_i_means(services, put):
    from chalicelib.usecases.people import space_people
    from chalicelib.usecases.recall import asked_about

    put("c1", [(1, "user", "小雨", "今天去了灵隐寺"), (2, "assistant", "阿狸", "都去了哪些地方？")])
    people, users = space_people(services, SPACE)
    assert people == {"小雨", "阿狸"} and users == {"小雨"}
    put("c2", [(1, "assistant", "小雨", "我是小雨")])  # a later batch never unmarks
    assert space_people(services, SPACE)[1] == {"小雨"}
    assert asked_about("我今年都去哪些地方玩过？", people, users) == {"小雨"}
    assert asked_about("What did I buy?", people, users) == {"小雨"}
    assert asked_about("阿狸说了什么？", people, users) == {"阿狸"}  # a name wins
    assert asked_about("灵隐寺在哪", people, users) == set()  # nobody's own
    assert asked_about("我今年去了哪", people, {"小雨", "阿狸"}) == set()  # two users: unknown


@pytest.mark.e5
def test_a_first_person_question_lifts_the_users_own_turns(e5_services, put):
    put("c1", [(1, "user", "小雨", "周末我去苏州玩了，逛了拙政园"),
               (2, "assistant", "阿狸", "苏州好玩吗？你都去了哪些地方玩？"),
               (3, "user", "小雨", "还吃了松鼠桂鱼")])
    out = recall(e5_services, SPACE, RecallRequest(query="我在苏州都去哪些地方玩了？",
                                                   now=T0 + timedelta(days=2), max_cards=3))
    assert out.cards and out.cards[0].speaker == "小雨"


def test_chinese_keywords_weigh_less_than_english_ones(services, put):
    from chalicelib.ports import SearchFilter
    from chalicelib.usecases.recall import search_lists

    put("c1", [(1, "user", "小雨", "今天去看了牙医"), (2, "user", "Sam", "I saw the dentist today")])
    qvec = services.embedder.embed_query("x")
    zh = search_lists(services, SPACE, "我看了几次牙医？", qvec, HYBRID, SearchFilter())
    en = search_lists(services, SPACE, "How often did I see the dentist?", qvec, HYBRID,
                      SearchFilter())
    assert zh["keyword"][1] == HYBRID.keyword_weight_cjk == 0.5
    assert en["keyword"][1] == HYBRID.keyword_weight == 1.0
    assert zh["vector"][1] == en["vector"][1] == 1.0


@pytest.mark.e5
def test_a_named_time_reranks_its_hits_like_a_plain_recall(e5_services, put):
    """"昨天我都去哪些地方玩了？": within yesterday the user's own turn comes before the
    companion's question that echoes the words (recipe.time_rerank), as in a plain recall."""
    day = T0 - timedelta(days=1)
    put("c1", [(1, "assistant", "阿狸", "周末愉快！今天你都去哪些地方玩了？"),
               (2, "user", "小雨", "去了苏州，逛了拙政园和平江路"),
               (3, "assistant", "阿狸", "哇，拙政园好看吗？"),
               (4, "user", "小雨", "人超多，不过荷花开得很好"),
               (5, "assistant", "阿狸", "晚上吃了什么？"),
               (6, "user", "小雨", "吃了松鼠桂鱼，有点甜"),
               (7, "assistant", "阿狸", "听起来很满足呀，早点休息"),
               (8, "user", "小雨", "好的晚安")], base=day)
    asked = RecallRequest(query="昨天我都去哪些地方玩了？", now=T0, max_cards=1)
    out = recall(e5_services, SPACE, asked)
    assert out.verdict == "hit" and out.cards[0].speaker == "小雨"
    RECIPES["no_rerank"] = replace(HYBRID, name="no_rerank", time_rerank=False)
    try:
        plain = recall(e5_services, SPACE, asked.model_copy(update={"recipe": "no_rerank"}))
    finally:
        del RECIPES["no_rerank"]
    assert plain.cards[0].speaker == "阿狸"  # what the time path showed first before


def test_a_hook_sized_time_recall_does_not_hit_by_a_name_alone(services, put):
    """Every memory of Mel's Saturday holds "Mel" (events are retold with names): in a
    hook-sized recall the name says whose day it was, so a question about a thing that day
    never held finds nothing; a wide recall keeps the name as a word and shows her day."""
    saturday = T0 - timedelta(days=2)  # T0 is a Monday
    put("c1", [(1, "user", "Mel", "Mel took the kids to the beach and built a sandcastle"),
               (2, "assistant", "Caroline", "Sounds lovely, Mel!")], base=saturday)
    asked = "What concert did Mel see on Saturday?"
    hook = recall(services, SPACE, RecallRequest(query=asked, now=T0, max_cards=2))
    assert hook.cards == []
    assert any("keywords concert" in line for line in hook.trace)
    wide = recall(services, SPACE, RecallRequest(query=asked, now=T0, max_cards=10))
    assert any("sandcastle" in c.text for c in wide.cards)
    # a word of the question that day did hold still finds it at hook size
    found = recall(services, SPACE, RecallRequest(query="Who did Mel take to the beach on Saturday?",
                                                  now=T0, max_cards=2))
    assert any("sandcastle" in c.text for c in found.cards)

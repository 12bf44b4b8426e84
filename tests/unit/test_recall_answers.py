"""Answers inherit their question's match (recall/answers.py, recipe field `answers`): a hit
that asks something passes a share of its score to the next turn, somebody else's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chalicelib.domain.models import RecallRequest
from chalicelib.ports import Hit
from chalicelib.usecases.recall import recall, recipes
from chalicelib.usecases.recall.answers import asks, inherit
from chalicelib.usecases.recall.recipes import HYBRID
from tests.unit.conftest import SPACE, T0

pytestmark = pytest.mark.usefixtures("timeparse_or_stub")

# Keyword search alone, without links: a reply's embedding already reads the turn before it
# (indexing.with_context), and following the turns around the best candidates (graph_turns)
# also reaches it; the keyword index cannot, and there the answer must come by inheritance.
ON = replace(HYBRID, name="test_answers_on", answers=0.3, min_relevance=0.0, graph_seeds=0,
             vector_k=0)
OFF = replace(ON, name="test_answers_off", answers=0.0)


@pytest.fixture(autouse=True)
def test_recipes(monkeypatch):
    for recipe in (ON, OFF):
        monkeypatch.setitem(recipes.RECIPES, recipe.name, recipe)


@pytest.mark.parametrize(("text", "expected"), [
    ("Wow, sounds wonderful! What concert was it? The event was a cool experience.", True),
    ("What's the band?", True),
    ("那场演唱会是谁唱的？我好奇", True),
    ("你吃饭了吗", True),
    ("It was Matt Patterson, he is so talented!", False),
    ("是周杰伦！太好听了。", False),
])
def test_a_turn_asks_when_any_of_its_sentences_asks(text, expected):
    assert asks(text) is expected


HITS = [Hit("q", 10.0), Hit("own", 8.0), Hit("other", 6.0), Hit("low", 2.0)]


def test_an_answer_gets_its_share_of_the_distance_from_the_lowest_hit():
    out = inherit(HITS, {"own", "low"}, {"q": "a"}, 0.3)
    assert [h.id for h in out] == ["own", "a", "low"]  # q and other are not kept
    assert dict((h.id, h.score) for h in out)["a"] == pytest.approx(2.0 + 0.3 * 8.0)


def test_an_answer_found_on_its_own_keeps_its_better_score():
    high = inherit(HITS, {"own", "low"}, {"q": "own"}, 0.3)
    assert dict((h.id, h.score) for h in high)["own"] == 8.0
    low = inherit(HITS, {"own", "low"}, {"q": "low"}, 0.3)
    assert dict((h.id, h.score) for h in low)["low"] == pytest.approx(4.4)
    assert [h.id for h in low] == ["own", "low"]


def test_weight_zero_or_no_answers_only_filters():
    kept = [h.id for h in inherit(HITS, {"own", "low"}, {"q": "a"}, 0.0)]
    assert kept == [h.id for h in inherit(HITS, {"own", "low"}, {}, 0.3)] == ["own", "low"]


MUSIC = ["I practised the piano for an hour", "the kids sang in the school choir",
         "I bought new strings for my guitar", "we listened to old jazz records at home",
         "I am learning a song on the clarinet", "my son wants drum lessons",
         "we sang along to the radio in the car", "I found my old violin in the attic",
         "the band teacher praised my daughter", "I made a playlist for our road trip"]
# Caroline asks, and Mel's answer holds none of the question's words; then forty turns about
# music that are no answer.
CHAT = [(0, "assistant", "Caroline", "Your daughter's birthday sounds wonderful! What concert "
                                     "was it?"),
        (1, "user", "Mel", "Oh, that was Matt Patterson with his brother."),
        *((2 + i, ("user", "assistant")[i % 2], ("Mel", "Caroline")[i % 2],
           f"{MUSIC[i % 10].capitalize()} on day {i}.") for i in range(40))]

ZH_MUSIC = ["我在学弹钢琴", "孩子们在合唱团唱歌", "我买了一把新吉他", "我们在家听爵士唱片",
            "我在练一首单簧管的曲子", "儿子想学打鼓", "我们在车上跟着收音机唱歌",
            "我在阁楼找到了旧小提琴", "音乐老师表扬了我女儿", "我给旅行做了一个歌单"]
ZH_CHAT = [(0, "assistant", "小红", "你上周末去听的演唱会是谁唱的？"),
           (1, "user", "小明", "是老周，我们一直待到最后。"),
           *((2 + i, ("user", "assistant")[i % 2], ("小明", "小红")[i % 2],
              f"第{i}天：{ZH_MUSIC[i % 10]}。") for i in range(40))]


def ask(services, query: str, recipe, cards: int) -> list[str]:
    out = recall(services, SPACE, RecallRequest(query=query, now=T0, recipe=recipe.name,
                                                max_cards=cards))
    return [c.ref for c in out.cards]


@pytest.mark.parametrize(("chat", "query", "answer"), [
    (CHAT, "What concerts has Mel been to?", "message:s:1"),  # a list question, Mel's own
    (CHAT, "Which concert did they go to?", "message:s:1"),  # the plain path
    (ZH_CHAT, "小明听的演唱会是谁唱的？", "message:s:1"),
])
def test_the_answer_to_a_question_found_joins_the_cards(services, put, clock, chat, query,
                                                        answer):
    put("s", chat)
    assert answer not in ask(services, query, OFF, 10)
    assert answer in ask(services, query, ON, 2)


def test_a_turn_that_only_asks_is_no_card_but_its_answer_is(services, put):
    """Issue 36: the companion's question holds the topic's words and none of its
    information; the user's answer is the memory (and inherits the question's match)."""
    put("1", [(1, "user", "小林", "收到杭州那边的offer了"),
              (2, "assistant", "Mika", "那新工作什么时候开始？"),
              (3, "user", "小林", "下个月三号入职"),
              (4, "user", "小林", "新工作什么时候开始来着？")])
    res = recall(services, SPACE, RecallRequest(query="新工作什么时候开始", limit=10,
                                                max_cards=10))
    refs = [c.ref for c in res.cards]
    assert "message:1:2" not in refs and "message:1:4" not in refs
    assert "message:1:3" in refs


def test_a_card_is_read_with_the_questions_its_turns_answer(services, put):
    """The companion asks ("孩子多大啦？", "And the cat — what's its name?") and the user's
    answer holds none of the question's words ("女儿，叫朵朵，五岁"): the gate reads the
    answer with its question (answers.questions_answered). Only the character's turn right
    before a cited turn, and only when it asks; never one of the card's own turns."""
    from chalicelib.domain.models import Card, Source
    from chalicelib.usecases.recall.answers import questions_answered

    put("1", [(1, "user", "林悦", "终于把孩子哄睡了，累死。"),
              (2, "assistant", "温言", "辛苦啦，哄睡真的是体力活。孩子多大啦？"),
              (3, "user", "林悦", "女儿，叫朵朵，五岁，上中班。"),
              (4, "user", "林悦", "你说她会不会太黏人？"),
              (5, "user", "林悦", "算了不管了"),
              (6, "assistant", "温言", "早点休息。"),
              (7, "user", "林悦", "晚安"),
              (8, "user", "阿May", "你女儿上几年级了？"),  # a person asks: a memory itself
              (9, "user", "林悦", "中班")])

    def card(ref, *seqs):
        return Card(ref=ref, kind="event", title="t", text="x", score=1.0,
                    sources=[Source(session="1", seq_start=s, seq_end=s) for s in seqs])

    asked = questions_answered(services, SPACE, [
        card("answer", 3), card("own", 4, 5), card("told", 1), card("after", 7),
        card("both", 2, 3), card("person", 9)])
    assert asked == {"answer": "孩子多大啦？"}  # the sentence that asks, not the rest
    # "own": its question (4) is its own speaker's; "told": nothing before it; "after": the
    # turn before says, it does not ask; "both": the question is one of its own turns;
    # "person": another person asked — a turn recall finds itself, not the character's
    assert questions_answered(services, SPACE, []) == {}

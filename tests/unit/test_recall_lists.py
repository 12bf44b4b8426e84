"""Questions asking for a list ("What books has Mel read?", "小明都去过哪些地方？"): detected by
query.asks_for_list and answered from whole turns, the named person's own
(recall.search_list, recipe field `list_pool`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chalicelib.domain.models import RecallRequest
from chalicelib.ports import Hit
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.recall import recall, recipes, search_list
from chalicelib.usecases.recall.fusion import score_fusion
from chalicelib.usecases.recall.query import asks_for_list, intents
from chalicelib.usecases.recall.recipes import HYBRID
from tests.unit.conftest import SPACE, T0

pytestmark = pytest.mark.usefixtures("timeparse_or_stub")

LISTS = replace(HYBRID, name="test_lists", list_pool=40)
NO_LISTS = replace(HYBRID, name="test_no_lists", list_pool=0)


@pytest.fixture(autouse=True)
def test_recipes(monkeypatch):
    for recipe in (LISTS, NO_LISTS):
        monkeypatch.setitem(recipes.RECIPES, recipe.name, recipe)


@pytest.mark.parametrize("question", [
    "What books has Melanie read?",
    "Which cities has Jon visited?",
    "What LGBTQ+ events has Caroline participated in?",
    "What types of pottery have Mel and her kids made?",
    "Where has Melanie camped?",
    "What has Melanie painted?",
    "How many times has she gone to the beach?",
    "Did Jon and Gina both dance?",
    "What are Melanie's pets' names?",
    "小明都去过哪些地方？",
    "奶糖去过几次医院？",
    "小明都学过什么乐器？",
    "How many dogs has Maria adopted from the shelter?",  # a count gathered over time
    "How many races have I run this year?",
    "我今年去了几趟华西医院？",
    "今年我跟团旅游去过哪几个地方？",
])
def test_questions_asking_for_every_item_of_a_kind(question):
    assert asks_for_list(question)


@pytest.mark.parametrize("question", [
    "What did Caroline research?",
    "What does Melanie think about the decision?",
    "What is Caroline's relationship status?",
    "What was the poetry reading about?",
    "What fields would Caroline be likely to pursue?",
    "What are the new shoes used for?",
    "When did Melanie go on a hike?",
    "How long has Melanie been creating art?",
    "奶糖的体检结果怎么样？",
    "小明的吉他课在哪里上？",
    "How many kids does Melanie have?",  # a count said once
    "How many years has she been married?",
    "绍兴带回来几个粽子啊",
])
def test_questions_asking_for_one_fact(question):
    assert not asks_for_list(question)


SESSIONS = {
    "s1": [(0, "user", "Mel", "I read Charlotte's Web again this weekend, such a lovely book."),
           (1, "assistant", "Caroline", "I read a book about adoption, it changed my view."),
           (2, "user", "Mel", "The kids and I went camping by the lake.")],
    "s2": [(0, "assistant", "Caroline", "Have you read any good books lately?"),
           (1, "user", "Mel", "Yes, I finished Nothing is Impossible, a book about dreams."),
           (2, "assistant", "Caroline", "My book club is reading a novel about friendship.")],
}


@pytest.fixture
def chat(services, put, clock):
    for session, items in SESSIONS.items():
        put(session, items)
        extract_session(services, SPACE, session)


def ask(services, query: str, recipe) -> object:
    return recall(services, SPACE, RecallRequest(query=query, now=T0, recipe=recipe.name,
                                                 max_cards=10))


@pytest.mark.usefixtures("chat")
def test_a_list_question_about_one_person_gets_their_own_turns(services):
    out = ask(services, "What books has Mel read?", LISTS)
    assert out.cards
    assert {c.kind for c in out.cards} == {"message"}
    assert {c.speaker for c in out.cards} == {"Mel"}
    assert {c.sources[0].session for c in out.cards[:2]} == {"s1", "s2"}
    assert any("asks for a list" in line and "Mel's own" in line for line in out.trace)


@pytest.mark.usefixtures("chat")
def test_without_list_pool_or_without_a_list_nothing_changes(services):
    off = ask(services, "What books has Mel read?", NO_LISTS)
    assert "Caroline" in {c.speaker for c in off.cards}
    assert not any("asks for a list" in line for line in off.trace)
    one = ask(services, "What did Mel read this weekend?", LISTS)
    assert "event" in {c.kind for c in one.cards}
    assert not any("asks for a list" in line for line in one.trace)


@pytest.mark.usefixtures("chat")
def test_a_list_question_naming_no_one_keeps_every_speaker(services):
    out = ask(services, "What books have been read?", LISTS)
    assert {c.kind for c in out.cards} == {"message"}
    assert {"Mel", "Caroline"} <= {c.speaker for c in out.cards}
    assert any("asks for a list" in line and "own" not in line for line in out.trace)


def test_a_floor_keeps_the_last_hit_of_a_short_list():
    """Min-max scales a list from its lowest hit; a keyword list that ran out of matches has
    a lower floor, 0 (no match), so its last hit still counts."""
    keyword = ([Hit("message:1:1", 4.7), Hit("message:2:5", 4.6)], 1.0)
    vector = ([Hit("message:3:2", 0.84), Hit("message:2:5", 0.81), Hit("message:1:1", 0.80)],
              1.0)
    plain = {c.ref: c.score for c in score_fusion({"keyword": keyword, "vector": vector})}
    assert plain["message:2:5"] == pytest.approx(0.25)  # the keyword match counts for nothing
    floored = {c.ref: c.score for c in score_fusion({"keyword": keyword, "vector": vector},
                                                    {"keyword": 0.0})}
    assert floored["message:2:5"] == pytest.approx(4.6 / 4.7 + 0.25)
    assert floored["message:1:1"] == pytest.approx(1.0)
    assert floored["message:3:2"] == pytest.approx(1.0)
    # a floor above the lowest hit changes nothing
    same = {c.ref: c.score for c in score_fusion({"keyword": keyword, "vector": vector},
                                                 {"keyword": 5.0})}
    assert same == plain


@pytest.mark.usefixtures("chat")
def test_a_list_search_keeps_the_named_persons_turns_and_floors_short_lists(services):
    """Mel's two turns naming a book are the keyword index's only own matches: the list ran
    out, so its floor is 0 and the second is not scaled to nothing."""
    named = {"Mel"}
    intent = intents(services, RecallRequest(query="What books has Mel read?"), LISTS, named)[0]
    lists, floors = search_list(services, SPACE, intent, LISTS, named)
    keyword = [h.id for h in lists["keyword"][0]]
    assert sorted(keyword) == ["message:s1:0", "message:s2:1"]
    assert all(h.id.startswith("message:") for h in lists["vector"][0])
    assert {h.id for h in lists["vector"][0]} == {"message:s1:0", "message:s1:2", "message:s2:1"}
    assert floors["keyword"] == 0.0
    fused = {c.ref: c for c in score_fusion(lists, floors)}
    assert all(fused[ref].score >= lists["keyword"][0][-1].score / lists["keyword"][0][0].score
               for ref in keyword)


ZH = [(0, "user", "小明", "上个月我去了京都旅行，看了很多寺庙。"),
      (1, "assistant", "Aki", "我也去过京都，还去过大阪。"),
      (2, "user", "小明", "去年夏天我还去了杭州，西湖很美。"),
      (3, "assistant", "Aki", "杭州的龙井茶很好喝。")]


def test_a_chinese_list_question_gets_the_named_persons_own_turns(services, put, clock):
    put("zh", ZH)
    extract_session(services, SPACE, "zh")
    out = ask(services, "小明都去过哪些地方？", LISTS)
    assert out.cards and {c.speaker for c in out.cards} == {"小明"}
    assert {c.kind for c in out.cards} == {"message"}
    assert any("问的是一串" in line and "只看小明自己说的" in line for line in out.trace)


@pytest.mark.usefixtures("chat")
def test_a_time_that_holds_all_the_memory_selects_nothing(services):
    """"this year", every memory told this year: recalled like a question naming no time (a
    list question: Mel's own turns), not by the time path's hit rule; a narrower time that
    holds only part of the memory still goes the time path."""
    out = ask(services, "What books has Mel read this year?", LISTS)
    assert any("holds nearly all the memory" in line for line in out.trace)
    assert any("asks for a list" in line and "Mel's own" in line for line in out.trace)
    assert out.cards and {c.speaker for c in out.cards} == {"Mel"}
    assert out.layers == []
    narrow = ask(services, "What books has Mel read in March?", LISTS)
    assert not any("holds nearly all the memory" in line for line in narrow.trace)


def test_a_time_still_to_come_recalls_what_was_said_of_it(services, put):
    """"What are my plans for Thanksgiving?" a week before it: no memory is dated then, the
    plan was told before; recalled by its words, not "forgot". A past time that holds
    nothing is still forgotten."""
    said = T0.replace(month=11, day=15)
    put("p1", [(1, "user", "Maya", "Thanksgiving at my parents' place in Spokane this year"),
               (2, "assistant", "Juno", "Are you driving over?")], base=said)
    now = said.replace(day=20)
    ahead = recall(services, SPACE, RecallRequest(query="What are my plans for Thanksgiving?",
                                                  now=now, max_cards=3))
    assert ahead.verdict == "hit", ahead.trace
    assert any("Spokane" in c.text for c in ahead.cards)
    assert any("still to come" in line for line in ahead.trace)
    past = recall(services, SPACE, RecallRequest(query="What did I do at Easter?", now=now,
                                                 max_cards=3))
    assert past.verdict == "forgot" and not past.cards


def test_a_later_day_asked_about_as_past_is_not_a_plan(services, put):
    said = T0.replace(month=11, day=15)
    put("p2", [(1, "user", "Maya", "Thanksgiving at my parents' place in Spokane this year")],
        base=said)
    out = recall(services, SPACE, RecallRequest(query="What did I do on 28 November?",
                                                now=said.replace(day=20), max_cards=3))
    assert out.verdict == "forgot" and not out.cards

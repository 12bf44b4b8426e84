"""Query context: a follow-up is read with the turns before it; a message that asks two things
is searched per intent."""

from __future__ import annotations

from chalicelib.domain.models import RecallRequest, RecentTurn
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.recall import interleave, recall
from chalicelib.usecases.recall.query import split_intents
from chalicelib.usecases.recall.recipes import HYBRID, HYBRID_PLAIN_QUERY
from tests.unit.conftest import SPACE


def test_a_message_is_split_into_the_things_it_asks():
    assert split_intents("奶糖体检结果怎么样？还有小明的吉他课上得如何？", HYBRID) == [
        "奶糖体检结果怎么样？", "小明的吉他课上得如何？"]
    assert split_intents("What did Sam book for the wedding? Also, how is the cello going?",
                         HYBRID) == ["What did Sam book for the wedding?",
                                     "how is the cello going?"]
    assert split_intents("What did Sam book for the wedding?", HYBRID) == [
        "What did Sam book for the wedding?"]
    # a courtesy is not a second question; the plain recipe never splits
    assert len(split_intents("Thanks! Also, what did Sam book?", HYBRID)) == 1
    assert len(split_intents("奶糖体检怎么样？还有吉他课呢？", HYBRID_PLAIN_QUERY)) == 1


def test_each_intent_gets_its_best_card_before_anyone_gets_a_second():
    from chalicelib.domain.models import Card

    def card(ref):
        return Card(ref=ref, kind="message", title=ref, text=ref, score=1.0)

    out = interleave([[card("a1"), card("a2")], [card("b1")]])
    assert [c.ref for c in out] == ["a1", "b1", "a2"]


MEMORIES = [(0, "user", "小明", "奶糖昨天做了体检，医生说她有点瘦"),
            (1, "assistant", "Aki", "多喂点高蛋白猫粮吧"),
            (2, "user", "小明", "我报名了周六的吉他课，老师在市中心"),
            (3, "assistant", "Aki", "加油，吉他很有意思")]


def test_a_follow_up_is_read_with_the_turn_before_it(services, put):
    put("c1", MEMORIES)
    extract_session(services, SPACE, "c1")
    follow = RecallRequest(query="那后来呢？", min_relevance=0, max_cards=1,
                           recent=[RecentTurn(role="user", content="吉他课怎么样了")])
    out = recall(services, SPACE, follow)
    assert out.cards and "吉他" in out.cards[0].text
    assert any("前 1 轮" in line for line in out.trace)


def test_two_questions_in_one_message_each_get_an_answer(services, put):
    put("c1", MEMORIES)
    extract_session(services, SPACE, "c1")
    both = recall(services, SPACE, RecallRequest(
        query="奶糖体检结果怎么样？还有吉他课在哪里上？", max_cards=2, min_relevance=0))
    texts = " ".join(c.text for c in both.cards)
    assert "体检" in texts and "吉他" in texts
    assert any("拆成 2 个问题" in line for line in both.trace)


def test_a_follow_up_that_names_nothing_passes_the_gate_on_what_it_points_at(services, put):
    """"Can you tell me more about that?" alone means nothing to the gate; read with the
    question before it, the answer to that question is admitted at the default threshold."""
    put("c1", MEMORIES)
    extract_session(services, SPACE, "c1")
    recent = [RecentTurn(role="user", content="吉他课在哪里上？")]
    out = recall(services, SPACE, RecallRequest(query="能再多说说吗？", recent=recent))
    assert out.verdict == "hit" and "吉他" in out.cards[0].text
    alone = recall(services, SPACE, RecallRequest(query="能再多说说吗？"))
    assert alone.verdict == "none" and not alone.cards
    plain = recall(services, SPACE, RecallRequest(query="能再多说说吗？", recent=recent,
                                                  recipe=HYBRID_PLAIN_QUERY.name))
    assert not any("吉他" in c.text for c in plain.cards)

"""The LLM extractor reads lasting facts too (issue 24, "the LLM extractor when configured"):
its facts are kept only for the batch's user messages, known attributes and values the
message says; beneath them, on the turns it read, the rules' floor: what the rules read of an
attribute the model said nothing (valid) of (issue 37, `facts.under_model`); a batch that fell
back to the offline extractor is the rules' alone."""

from __future__ import annotations

import pytest

from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.facts import profile, profiles
from tests.integration.test_llm_flow import SESSION, ev, put_batch
from tests.unit.conftest import SPACE

ITEMS = [(0, "user", "小明", "我上个月搬到杭州了，对了我对花生过敏。"),
         (1, "assistant", "Aki", "我也喜欢杭州！"),
         (2, "user", "小明", "我家猫奶糖最近胖了。")]


def facts_of(services) -> dict[str, list[tuple[str, bool]]]:
    out: dict[str, list[tuple[str, bool]]] = {}
    for f in profile(services, SPACE, "小明").facts:
        out.setdefault(f.attribute, []).append((f.value, f.current))
    return out


def test_the_models_facts_are_checked_before_they_are_kept(llm_services, double):
    double.reply_json({"events": [ev("搬家", "小明搬到了杭州", "2026-05-20", [0])], "facts": [
        {"seq": 0, "attribute": "lives_in", "value": "杭州"},
        {"seq": 0, "attribute": "allergic_to", "value": "芒果"},  # not what the message says
        {"seq": 1, "attribute": "likes", "value": "杭州"},  # the assistant's
        {"seq": 2, "attribute": "pet", "value": "奶糖", "kind": "猫"},
        {"seq": 2, "attribute": "salary", "value": "奶糖"},  # no such attribute
        {"seq": 9, "attribute": "pet", "value": "奶糖"}]})  # not in the batch
    now = put_batch(llm_services, 1, ITEMS)
    extract_session(llm_services, SPACE, SESSION, now)
    assert "facts" in double.requests[0]["messages"][0]["content"]  # asked for
    # its allergy was not in the turn (芒果: refused); the rules' floor reads the one that is
    assert facts_of(llm_services) == {"lives_in": [("杭州", True)], "pet": [("奶糖", True)],
                                      "allergic_to": [("花生", True)]}
    assert not any(v == "芒果" for vals in facts_of(llm_services).values() for v, _ in vals)


def test_a_pet_no_turn_speaks_of_as_one_is_not_kept(llm_services, double):
    """A pet's name in a turn with no word of an animal ("我家奶糖最近胖了": a cat, a child,
    a sweet?) is the model's guess: not kept (domain.facts.spoken_of)."""
    items = [(0, "user", "小明", "我家奶糖最近胖了。"), (1, "assistant", "Aki", "哈哈")]
    double.reply_json({"events": [], "facts": [
        {"seq": 0, "attribute": "pet", "value": "奶糖", "kind": "猫"}]})
    now = put_batch(llm_services, 1, items)
    extract_session(llm_services, SPACE, SESSION, now)
    assert "pet" not in facts_of(llm_services)


def test_a_batch_that_fell_back_is_read_by_the_rules(llm_services, double):
    double.reply_text("not json").reply_text("still not json")
    now = put_batch(llm_services, 1, ITEMS)
    extract_session(llm_services, SPACE, SESSION, now)
    found = facts_of(llm_services)
    assert found["lives_in"] == [("杭州", True)] and found["allergic_to"] == [("花生", True)]


@pytest.mark.parametrize("reply", [{"events": []}, {"events": [], "facts": "none"}])
def test_no_facts_in_the_reply_leaves_the_rules_floor(llm_services, double, reply):
    """A model that reads nothing in plain statements adds nothing of its own; what the user
    plainly said is still the rules' (the floor), and the assistant's turn is nobody's."""
    double.reply_json(reply)
    now = put_batch(llm_services, 1, ITEMS)
    extract_session(llm_services, SPACE, SESSION, now)
    found = facts_of(llm_services)
    assert found["lives_in"] == [("杭州", True)] and found["allergic_to"] == [("花生", True)]
    assert "likes" not in found  # "我也喜欢杭州" is Aki's
    assert [p.name for p in profiles(llm_services, SPACE).profiles if p.facts] == ["小明"]

"""The LLM extractor reads lasting facts too (issue 24, "the LLM extractor when configured"):
its facts are kept only for the batch's user messages, known attributes and values the
message says; the turns it read are not read again by the rules, those of a batch that fell
back to the offline extractor are."""

from __future__ import annotations

import pytest

from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.facts import profile, profiles
from tests.integration.test_llm_flow import SESSION, ev, put_batch
from tests.unit.conftest import SPACE

ITEMS = [(0, "user", "小明", "我上个月搬到杭州了，对了我对花生过敏。"),
         (1, "assistant", "Aki", "我也喜欢杭州！"),
         (2, "user", "小明", "我家奶糖最近胖了。")]


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
    # the model read seq 0: its missed allergy is not made up by the rules either
    assert facts_of(llm_services) == {"lives_in": [("杭州", True)], "pet": [("奶糖", True)]}


def test_a_batch_that_fell_back_is_read_by_the_rules(llm_services, double):
    double.reply_text("not json").reply_text("still not json")
    now = put_batch(llm_services, 1, ITEMS)
    extract_session(llm_services, SPACE, SESSION, now)
    found = facts_of(llm_services)
    assert found["lives_in"] == [("杭州", True)] and found["allergic_to"] == [("花生", True)]


@pytest.mark.parametrize("reply", [{"events": []}, {"events": [], "facts": "none"}])
def test_no_facts_in_the_reply_is_no_facts(llm_services, double, reply):
    double.reply_json(reply)
    now = put_batch(llm_services, 1, ITEMS)
    extract_session(llm_services, SPACE, SESSION, now)
    assert all(not p.facts for p in profiles(llm_services, SPACE).profiles)

"""A plan corrected or moved in a later turn updates the event it corrects (issue 36, item 4):
an `updates` relation with its evidence, and recall shows the corrected plan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.config import Settings
from chalicelib.domain.models import MessageIn, PutMessagesRequest, RecallRequest
from chalicelib.domain.records import Relation
from chalicelib.usecases.extract import run_extraction
from chalicelib.usecases.ingest import put_messages
from chalicelib.usecases.recall import recall
from chalicelib.wiring import build_services

AT = datetime(2026, 12, 1, 12, tzinfo=UTC)


@pytest.fixture()
def services(tmp_path):
    return build_services(Settings(data_dir=tmp_path, embedder="hash", schedule="off",
                                   salience="rules", _env_file=None), index="inline")


def chat(services, turns):
    put_messages(services, "s", "1", PutMessagesRequest(messages=[
        MessageIn(seq=i, role=role, speaker=who, content=text, at=AT + timedelta(minutes=i))
        for i, (role, who, text) in enumerate(turns)]))
    run_extraction(services, "s", "1")
    events = {e.id: e for e in services.store.list_events("s", limit=100).events}
    updates = [r for r in services.store.list_records(Relation, "s") if r.kind == "updates"]
    return events, updates


def test_a_repair_in_the_next_turn_updates_the_plan(services):
    events, updates = chat(services, [
        ("user", "小林", "计划元旦去京都玩，跟我姐一起，机票都订好了。"),
        ("assistant", "Mika", "好期待！"),
        ("user", "小林", "哦不对，是1月2号出发，元旦那天我姐要加班。")])
    [rel] = updates
    new, old = events[rel.src], events[rel.dst]
    assert "1月2号" in new.summary and "元旦" in old.summary
    assert new.when.start.date().isoformat() == "2027-01-02"
    out = recall(services, "s", RecallRequest(query="去京都是哪天出发来着", now=AT,
                                              max_cards=5, limit=5))
    assert out.cards and out.cards[0].ref == f"event:{rel.src}"
    assert f"event:{rel.dst}" not in [c.ref for c in out.cards]


def test_a_moved_plan_updates_the_plan_sharing_its_words(services):
    _, updates = chat(services, [
        ("user", "林悦", "搬家定在11月1号，周日，搬家公司都约好了。"),
        ("assistant", "温言", "好的，记住啦。"),
        ("user", "林悦", "周五是我最后一天上班。"),
        ("assistant", "温言", "辛苦啦。"),
        ("user", "林悦", "对了，搬家提前了，改成31号周六，说周日要下大雨。")])
    assert len(updates) == 1  # the move, not the last day at work


def test_a_repair_of_nothing_earlier_links_nothing(services):
    _, updates = chat(services, [("user", "Sam", "Wait no, I meant the blue one.")])
    assert updates == []


def test_a_repair_led_by_the_plan_it_names_updates_that_plan(services):
    """"对了国庆那个 哦不对 …": the topic before the repair names the plan corrected, told
    turns before (other events of the teller between), on the same holiday; a recall by that
    time shows the plan and then its correction."""
    events, updates = chat(services, [
        ("user", "小满", "不是 乐山的 国庆回去 30号下班直接走 票还没抢"),
        ("assistant", "阿澈", "记得提前抢票哦"),
        ("user", "小满", "健身房有个男生叫阿凯 今天加我微信了"),
        ("assistant", "阿澈", "哦～有情况！"),
        ("user", "小满", "对了国庆那个 哦不对 30号我要值班 1号早上在走 高铁票抢到了 7点40的")])
    [rel] = updates
    assert "值班" in events[rel.src].summary and "下班直接走" in events[rel.dst].summary
    out = recall(services, "s", RecallRequest(query="国庆回乐山 我最后定的是哪天走", now=AT,
                                              max_cards=2))
    assert [c.ref for c in out.cards] == [f"event:{rel.dst}", f"event:{rel.src}"]
    assert any("updated later by" in line or "后来被" in line for line in out.trace)


def test_a_lead_that_says_something_is_corrected_within_its_turn(services):
    _, updates = chat(services, [
        ("user", "苏禾", "三日后的傍晚，我去陆家退了婚。"),
        ("assistant", "沈砚", "退得好。"),
        ("user", "苏禾", "认真想了想 三日后是谷雨…不对，五日后才是谷雨。那天一早我们上后山。")])
    assert updates == []

"""A reader's corrections (issue 37, scope item 1): the model says which turn corrects which
event already in the chronicle, naming it by the label the prompt showed; the batch's event
that cites the correcting turn then `updates` the old one, with the turn as its evidence, and
recall shows the corrected plan. What cannot be checked links nothing: a label of no event,
a turn outside the batch, a turn that made no event."""

from __future__ import annotations

import re

from chalicelib.domain.models import RecallRequest
from chalicelib.domain.records import Relation
from chalicelib.ports import Correction
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.extract.llm import ExtractionOut, to_corrections
from chalicelib.usecases.recall import recall
from tests.integration.test_llm_flow import SESSION, ev, put_batch
from tests.llm_double import Reply
from tests.unit.conftest import SPACE

PLAN = [(0, "user", "小明", "我和姐姐计划27号去京都玩，机票订好了。"),
        (1, "assistant", "Aki", "好棒！京都冬天很美。")]
FIX = [(2, "user", "小明", "哦不对，是28号出发，27号那天姐姐要值班。"),
       (3, "assistant", "Aki", "好的，记住啦。")]


def label_of(request: dict, text: str) -> str:
    """The label the reading prompt gave the existing event whose line holds `text`."""
    prompt = request["messages"][-1]["content"]
    (line,) = [ln for ln in prompt.splitlines() if text in ln]
    return re.search(r"\[([0-9a-f]{6})\]", line).group(1)


def updates(services) -> list[Relation]:
    return [r for r in services.store.list_records(Relation, SPACE) if r.kind == "updates"]


def test_a_correction_the_model_names_updates_the_event_it_corrects(llm_services, double):
    double.reply_json({"events": [ev("京都之行", "小明计划和姐姐27号去京都", "2026-06-27", [0],
                                     7, plan=True)]})
    extract_session(llm_services, SPACE, SESSION, put_batch(llm_services, 1, PLAN))
    (old,) = llm_services.store.list_events(SPACE).events

    def answer(request: dict) -> Reply:
        label = label_of(request, "小明计划和姐姐27号去京都")
        assert old.id.endswith(label)  # the prompt names the event by its id's tail
        return Reply(content=ExtractionOut.model_validate({
            "events": [ev("京都之行改期", "小明和姐姐28号出发去京都", "2026-06-28", [2], 7,
                          plan=True)],
            "corrections": [{"seq": 2, "event": label, "words": "是28号出发"},
                            {"seq": 9, "event": label},  # not a turn of this batch
                            {"seq": 2, "event": "000000"}]}).model_dump_json())

    double.reply(answer)
    extract_session(llm_services, SPACE, SESSION, put_batch(llm_services, 2, FIX))
    new = next(e for e in llm_services.store.list_events(SPACE).events if e.id != old.id
               and e.kind != "summary")
    (link,) = updates(llm_services)
    assert (link.src, link.dst) == (new.id, old.id)
    assert "是28号出发" in link.note and f"message:{SESSION}:2" in link.note
    # recall shows the corrected plan first
    cards = recall(llm_services, SPACE, RecallRequest(query="我们哪天去京都", max_cards=3)).cards
    events = [c.ref for c in cards if c.kind == "event"]
    assert events and events[0] == new.ref


def test_a_correction_whose_turn_made_no_event_links_nothing(llm_services, double):
    double.reply_json({"events": [ev("京都之行", "小明计划和姐姐27号去京都", "2026-06-27", [0],
                                     7, plan=True)]})
    extract_session(llm_services, SPACE, SESSION, put_batch(llm_services, 1, PLAN))
    double.reply(lambda request: Reply(content=ExtractionOut.model_validate({
        "events": [], "corrections": [{"seq": 2, "event": label_of(
            request, "小明计划和姐姐27号去京都")}]}).model_dump_json()))
    extract_session(llm_services, SPACE, SESSION, put_batch(llm_services, 2, FIX))
    assert [r for r in updates(llm_services) if "corrected" in r.note] == []


def test_what_a_correction_must_be_to_be_kept():
    from chalicelib.domain.models import Message
    from tests.unit.conftest import T0

    batch = [Message(space="s", session="c", seq=5, role="user", speaker="Ann",
                     content="actually it's Friday, not Thursday", at=T0, content_hash="h")]
    out = ExtractionOut.model_validate({"events": [], "corrections": [
        {"seq": 5, "event": "[3fa9c1]", "words": "it's Friday"},
        {"seq": 5, "event": "ev_00112233445566778899", "words": "Saturday"},  # words unsaid
        {"seq": 6, "event": "3fa9c1"},  # not in the batch
        {"seq": 5, "event": "the trip"},  # no label
        {"seq": 5, "event": None, "words": None}]})
    assert to_corrections(out, batch) == [Correction(5, "3fa9c1", "it's Friday"),
                                          Correction(5, "778899", "")]
    assert ExtractionOut.model_validate({"events": [], "corrections": "none"}).corrections == []

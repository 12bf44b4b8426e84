"""Updates supersede in recall (issue 22): the words that say a fact changed
(chalicelib.domain.changes), the `updates` relation written at link time
(usecases.graph.updates), the query that asks about the past (recall.query) and the recall
step that shows the new fact (recall.updates)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.domain.changes import (
    category,
    change_of,
    old_turns,
    says_only_the_old_fact,
    update_note,
)
from chalicelib.domain.models import (
    Card,
    CardThread,
    PutMessagesRequest,
    RecallRequest,
    ThreadMaterial,
)
from chalicelib.domain.records import Relation
from chalicelib.usecases import ingest
from chalicelib.usecases.extract import run_extraction, supersede_from
from chalicelib.usecases.recall import recall
from chalicelib.usecases.recall.query import asks_about_past
from chalicelib.usecases.recall.updates import Update, Updates
from tests.unit.conftest import T0


@pytest.mark.parametrize("text,old", [
    ("We now stay at the Ryokan Kiku instead of the Hotel Sakura.", ("the Hotel Sakura",)),
    ("Tom no longer works at Google.", ("works at Google",)),
    ("We cancelled the Hotel Okura and booked the Park Hyatt instead.", ("the Hotel Okura",)),
    ("We moved from Munich to Berlin.", ("Munich",)),
    ("We switched to the night train.", ()),
    ("我们把酒店换成了菊屋旅馆，不住樱花酒店了。", ("酒店", "樱花酒店")),
    ("他不再去健身房了。", ("去健身房了",)),
    ("我们搬到了杭州。", ()),
])
def test_the_words_that_say_a_fact_changed(text, old):
    change = change_of(text)
    assert change is not None and change.old == old


@pytest.mark.parametrize("text", [
    "We booked the Hotel Sakura for three nights.", "We work from 9 to 5.",
    "我们订了樱花酒店，住三晚。", "I can't wait any longer!",
])
def test_no_change_without_its_words(text):
    assert change_of(text) is None


def test_kinds_of_things_one_has_one_of():
    assert category("Ryokan Kiku") == category("Hotel Sakura") == category("菊屋旅馆") \
        == "lodging"
    assert category("Kyoto") is None and category("Acme Inc") == "employer"


def test_the_note_keeps_whole_refs_only():
    note = update_note("instead of", ["message:s3:1"], ["message:s2:1", "message:s2:2"])
    assert note.startswith("“instead of” · said in message:s3:1")
    assert old_turns(note) == {"message:s2:1", "message:s2:2"}
    long = [f"message:{'x' * 120}:{i}" for i in range(4)]
    cut = update_note("换成", long, long)
    assert len(cut) <= 300 and old_turns(cut) <= set(long)
    assert old_turns("replaced") == frozenset()


@pytest.mark.parametrize("query,past", [
    ("Which hotel did we book first?", True), ("Where did Tom use to work?", True),
    ("What was our original plan?", True), ("我们一开始订的是哪家酒店？", True),
    ("小明以前住在哪里？", True), ("Which hotel do we stay at?", False),
    ("How old is Tom?", False), ("What is his first name?", False), ("我们住哪家酒店？", False),
])
def test_a_query_asks_about_the_past(query, past):
    assert asks_about_past(query) is past


def tell(services, space: str, turns: list[list[str]]) -> list[list]:
    """One session a day per list of turns, extracted in turn; each session's events."""
    out = []
    for day, texts in enumerate(turns):
        at = T0 + timedelta(days=day)
        services.clock = lambda at=at: at + timedelta(hours=1)
        messages = [{"seq": i + 1, "role": "user", "speaker": "Ann", "content": t,
                     "at": at + timedelta(minutes=i)} for i, t in enumerate(texts)]
        ingest.put_messages(services, space, f"s{day + 1}",
                            PutMessagesRequest.model_validate({"messages": messages}))
        out.append([e for e in run_extraction(services, space, f"s{day + 1}")
                    if e.kind != "summary"])
    return out


def updates(services, space: str) -> list[Relation]:
    return [r for r in services.store.list_records(Relation, space) if r.kind == "updates"]


def ask(services, space: str, query: str, cards: int = 3):
    return recall(services, space, RecallRequest(query=query, max_cards=cards,
                                                 min_relevance=0))


def test_a_change_that_names_a_new_hotel_only_updates_the_earlier_hotel(services):
    """Rule 2: "we changed hotels" without naming the old one — both are lodgings."""
    [_plan], [booking], [change] = tell(services, "sp", [
        ["We are planning a trip to Kyoto."], ["We booked the Hotel Sakura for the trip."],
        ["We changed hotels: we now stay at the Ryokan Kiku."]])
    [rel] = updates(services, "sp")
    assert (rel.src, rel.dst) == (change.id, booking.id)
    assert "“now stay at”" in rel.note and "message:s3:1" in rel.note


def test_instead_of_without_a_named_thing_updates_nothing(services):
    tell(services, "sp", [["Tom goes to the gym on Mondays."],
                          ["Tom went hiking instead of going to the gym."]])
    assert updates(services, "sp") == []


def test_recall_shows_the_new_fact_and_says_what_it_left_out(services):
    [booking], [change] = tell(services, "sp", [
        ["We booked the Hotel Sakura in Kyoto for three nights."],
        ["We changed the hotel: we now stay at the Ryokan Kiku instead of the Hotel Sakura."]])
    result = ask(services, "sp", "the Hotel Sakura in Kyoto for three nights")
    refs = [c.ref for c in result.cards]
    assert booking.ref not in refs and "message:s1:1" not in refs
    assert change.ref in refs  # in the old fact's place
    assert any(f"left out {booking.ref} as superseded by {change.ref}" in line
               for line in result.trace)
    past = ask(services, "sp", "Which hotel did we book first in Kyoto?")
    assert booking.ref in [c.ref for c in past.cards]


def test_an_old_event_that_says_more_is_shown_after_the_new_one(services):
    """The booking's turn also says Tom bought a camera: the old event is not all old fact,
    so it stays findable (tagged "updated", after the change), and so does its turn."""
    [booking], [change] = tell(services, "sp", [
        ["We booked the Hotel Sakura in Kyoto. Tom bought a new camera for the trip."],
        ["We changed the hotel: we now stay at the Ryokan Kiku instead of the Hotel Sakura."]])
    [rel] = updates(services, "sp")
    assert not says_only_the_old_fact(rel.note) and old_turns(rel.note) == frozenset()
    result = ask(services, "sp", "Tom bought a new camera for the trip")
    refs = [c.ref for c in result.cards]
    assert change.ref in refs and booking.ref in refs
    assert refs.index(change.ref) < refs.index(booking.ref)
    assert "updated" in result.cards[refs.index(booking.ref)].tags
    assert any(f"{booking.ref} is updated by {change.ref}" in line for line in result.trace)


def test_a_rolled_back_change_updates_nothing_any_more(services):
    [booking], _ = tell(services, "sp", [
        ["We booked the Hotel Sakura in Kyoto for three nights."],
        ["We changed the hotel: we now stay at the Ryokan Kiku instead of the Hotel Sakura."]])
    supersede_from(services, "sp", "s2", 1, services.clock())
    result = ask(services, "sp", "the Hotel Sakura in Kyoto for three nights")
    assert booking.ref in [c.ref for c in result.cards]


def test_the_old_event_leaves_the_thread_materials_unless_the_past_is_asked(services):
    view = Updates(services, "sp", _loaded=True)
    view.by_old["event:old"] = Update(old="event:old", new="event:new", words="“换成”")
    card = Card(ref="event:new", kind="event", title="t", text="x", score=1.0,
                thread=CardThread(id="th", title="trip", materials=[
                    ThreadMaterial(ref="event:old", title="booked"),
                    ThreadMaterial(ref="event:plan", title="planned")]))
    [now] = view.strip_materials([card], past=False)
    assert [m.ref for m in now.thread.materials] == ["event:plan"]
    [then] = view.strip_materials([card], past=True)
    assert len(then.thread.materials) == 2


def test_a_chain_of_updates_shows_the_newest(services):
    view = Updates(services, "sp", _loaded=True)
    for old, new in (("a", "b"), ("b", "c")):
        view.by_old[f"event:{old}"] = Update(old=f"event:{old}", new=f"event:{new}", words="")
    assert view.newest(view.by_old["event:a"]) == "event:c"
    view.by_old["event:c"] = Update(old="event:c", new="event:a", words="")  # a cycle
    assert view.newest(view.by_old["event:a"]) in {"event:a", "event:b", "event:c"}

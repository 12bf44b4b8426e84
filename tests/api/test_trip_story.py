"""The scripted trip story of issue 22, in English and in Chinese (two spaces), through the HTTP
routes with the default offline extractor: a trip planned, a hotel booked, the hotel changed,
the trip taken and remembered, one session a day apart each.

- The person who opens the sentences ("Tom and I decided …", 小明和我决定…) is an entity.
- The change `updates` the booking at link time (a relation citing the change's message),
  and the booking stays active: it is the history.
- "Which hotel do we stay at?" (a hook-sized recall, the default cards) names the new hotel,
  and the old one only inside the change that replaced it: no card is the booking, neither
  its event nor its message.
- "Which hotel did we book first?" asks about the past: the booking is a card again.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import call


@dataclass(frozen=True)
class Story:
    speaker: str
    person: str  # who opens the sentences
    old: str  # the hotel booked first
    new: str  # the hotel it was changed for
    now: str  # the question about the hotel
    first: str  # the question about the first booking
    sessions: tuple[str, ...]  # one message each: plan, book, change, travel, remember


STORIES = {
    "trip-en": Story("Ann", "Tom", "Hotel Sakura", "Ryokan Kiku",
                     "Which hotel do we stay at in Kyoto?", "Which hotel did we book first?", (
                         "Tom and I decided to plan a trip to Kyoto.",
                         "We booked the Hotel Sakura for three nights.",
                         "We changed the hotel: we now stay at the Ryokan Kiku instead of the "
                         "Hotel Sakura.",
                         "Tom and I flew to Kyoto today and checked into the Ryokan Kiku.",
                         "I still remember our Kyoto trip with Tom, the Ryokan Kiku had a "
                         "lovely garden.")),
    "trip-zh": Story("小红", "小明", "樱花酒店", "菊屋旅馆",
                     "我们在京都住哪家酒店？", "我们一开始订的是哪家酒店？", (
                         "小明和我决定去京都旅行。",
                         "我们订了樱花酒店，住三晚。",
                         "我们把酒店换成了菊屋旅馆，不住樱花酒店了。",
                         "我和小明今天飞到京都，住进了菊屋旅馆。",
                         "我还记得和小明的京都旅行，菊屋旅馆的庭院很美。")),
}
DAYS = ("2026-03-01", "2026-03-10", "2026-04-02", "2026-05-03", "2026-06-01")


def tell(client, space: str) -> list[dict]:
    """Each session sent and extracted in turn, a day apart, as the quiet-window job would;
    the events of each session, in order."""
    story = STORIES[space]
    told = []
    for i, (day, text) in enumerate(zip(DAYS, story.sessions, strict=True)):
        session = f"s{i + 1}"
        message = {"seq": 1, "role": "user", "speaker": story.speaker, "content": text,
                   "at": f"{day}T20:00:00+08:00"}
        call(client, "put", f"/v1/spaces/{space}/sessions/{session}/messages",
             {"messages": [message]})
        events = call(client, "post", f"/v1/spaces/{space}/extract", {"session": session})
        told.append([e for e in events["events"] if e["kind"] != "summary"])
    return told


@pytest.fixture(params=sorted(STORIES))
def trip(request, client):
    space = request.param
    _plan, book, change, *_ = tell(client, space)
    [booking], [changed] = book, change
    return client, space, STORIES[space], booking, changed


def recall(client, space: str, query: str) -> dict:
    """A recall of the default size (no max_cards: ANNALS_MAX_CARDS, a hook's)."""
    return call(client, "post", f"/v1/spaces/{space}/recall", {"query": query})


def test_the_person_who_opens_the_sentences_is_an_entity(trip):
    client, space, story, _, _ = trip
    people = call(client, "get", f"/v1/spaces/{space}/entities?kind=person")["entities"]
    [person] = [p for p in people if p["name"] == story.person]
    assert person["event_count"] >= 3  # the plan, the flight, the memory


def test_the_change_updates_the_booking_with_its_evidence(trip):
    client, space, _, booking, changed = trip
    old = call(client, "get", f"/v1/spaces/{space}/events/{booking['id']}")
    assert old["status"] == "active"  # still the history
    [update] = [r for r in old["relations"] if r["kind"] == "updates"]
    assert (update["src"], update["dst"]) == (changed["id"], booking["id"])
    assert "message:s3:1" in update["note"]  # the change's own message says so


def test_the_hotel_question_names_only_the_new_hotel(trip):
    client, space, story, booking, changed = trip
    result = recall(client, space, story.now)
    assert result["verdict"] == "hit"
    assert any("hook-sized" in line or "小份召回" in line for line in result["trace"])
    cards = result["cards"]
    assert any(story.new in c["text"] for c in cards)
    refs = {c["ref"] for c in cards}
    assert not refs & {f"event:{booking['id']}", "message:s2:1"}  # not the booking
    for card in cards:  # the old hotel only as what the change replaced
        if story.old in card["title"] + card["text"]:
            assert card["ref"] in (f"event:{changed['id']}", "message:s3:1"), card
            assert story.new in card["text"]
        thread = card.get("thread") or {"materials": []}
        assert f"event:{booking['id']}" not in {m["ref"] for m in thread["materials"]}


def test_the_first_booking_is_found_when_the_question_asks_about_the_past(trip):
    client, space, story, booking, _ = trip
    cards = recall(client, space, story.first)["cards"]
    assert {f"event:{booking['id']}", "message:s2:1"} & {c["ref"] for c in cards}
    assert any(story.old in c["text"] for c in cards)


def test_the_hook_injects_the_new_hotel(trip):
    client, space, story, booking, _ = trip
    hook = call(client, "post", f"/v1/spaces/{space}/hook/recall", {"query": story.now})
    assert story.new in hook["additional_context"]
    assert f"event:{booking['id']}" not in hook["recalled_ids"]

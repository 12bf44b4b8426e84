"""The scripted story of issue 13: a trip planned, booked, changed, taken and remembered over
six sessions, in English and in Chinese (two spaces), through the HTTP routes. After
extraction one thread holds all of its events (and not the cat's checkup told in between);
the merge pass lets "we changed the hotel" replace the booking — an `updates` relation — and
the old booking leaves recall."""

from __future__ import annotations

import pytest

from chalicelib.domain.entities import normalise
from tests.conftest import call

STORIES = {
    "trip-en": ("Mel", "hotel", "Hotel Okura", [
        ("s1", "2026-03-01T20:00:00+08:00", [
            "Sam and I are planning a trip to Kyoto in May.",
            "My cat Luna had her vet checkup today."]),
        ("s2", "2026-03-10T20:00:00+08:00", [
            "I booked the Hotel Okura Kyoto for our Kyoto trip, from May 3 to May 6."]),
        ("s3", "2026-04-02T20:00:00+08:00", [
            "We changed the hotel for the Kyoto trip: we cancelled the Hotel Okura Kyoto and "
            "booked the Park Hyatt Kyoto instead."]),
        ("s4", "2026-05-03T21:00:00+08:00", [
            "We flew to Kyoto today and checked into the Park Hyatt Kyoto for the trip."]),
        ("s5", "2026-05-05T21:00:00+08:00", [
            "We hiked up to the Fushimi Inari shrine in Kyoto this morning.",
            "We were exhausted after the Fushimi Inari hike, so we went back to the Park "
            "Hyatt Kyoto early."]),
        ("s6", "2026-06-01T20:00:00+08:00", [
            "I still remember our Kyoto trip, the Park Hyatt Kyoto had an amazing view."]),
    ]),
    "trip-zh": ("小明", "酒店", "大仓酒店", [
        ("s1", "2026-03-01T20:00:00+08:00", [
            "我和小红打算五一去京都旅行。", "我的猫奶糖今天去体检了，一切正常。"]),
        ("s2", "2026-03-10T20:00:00+08:00", ["我为这次京都旅行订了大仓酒店，五月三号到六号。"]),
        ("s3", "2026-04-02T20:00:00+08:00", ["我们把酒店换成了京都柏悦酒店，取消了大仓酒店。"]),
        ("s4", "2026-05-03T21:00:00+08:00", ["我们今天飞到京都旅行，住进了京都柏悦酒店。"]),
        ("s5", "2026-05-05T21:00:00+08:00", [
            "今天在京都我们去了伏见稻荷大社，爬了一上午的山。",
            "因为爬伏见稻荷大社太累，所以我们早早回京都柏悦酒店休息了。"]),
        ("s6", "2026-06-01T20:00:00+08:00", ["我还记得我们的京都旅行，京都柏悦酒店的景色太美了。"]),
    ]),
}
PET = {"trip-en": "Luna", "trip-zh": "奶糖"}


def tell(client, space: str) -> list[dict]:
    """Each session sent and extracted in turn, as the quiet-window job would."""
    speaker, _, _, sessions = STORIES[space]
    events = []
    for session, at, texts in sessions:
        messages = [{"seq": i + 1, "role": "user", "speaker": speaker, "content": text,
                     "at": at.replace(":00:00", f":0{i}:00")} for i, text in enumerate(texts)]
        call(client, "put", f"/v1/spaces/{space}/sessions/{session}/messages",
             {"messages": messages})
        events += call(client, "post", f"/v1/spaces/{space}/extract",
                       {"session": session})["events"]
    return [e for e in events if e["kind"] != "summary"]


@pytest.mark.parametrize("space", sorted(STORIES))
def test_the_trip_is_one_thread_and_the_changed_hotel_updates_the_booking(client, space):
    _, query, old_hotel, _ = STORIES[space]
    sp = f"/v1/spaces/{space}"
    events = tell(client, space)
    story = [e for e in events if PET[space] not in e["summary"]]
    assert len(story) >= 6

    threads = call(client, "get", sp + "/threads")["threads"]
    [thread] = [t for t in threads if set(t["events"]) & {e["id"] for e in story}]
    assert set(thread["events"]) == {e["id"] for e in story}  # all of it, nothing else
    assert not [t for t in threads if t is not thread and
                set(t["events"]) & {e["id"] for e in events}]
    detail = call(client, "get", f"{sp}/threads/{thread['id']}")
    starts = [m["when"]["start"] for m in detail["materials"]]
    assert starts == sorted(starts)

    booking = next(e for e in story if old_hotel in e["summary"]
                   and "换" not in e["summary"] and "changed" not in e["summary"])
    change = next(e for e in story if "换" in e["summary"] or "changed" in e["summary"])
    merged = call(client, "post", sp + "/consolidate")
    assert merged["superseded"] >= 1

    old = call(client, "get", f"{sp}/events/{booking['id']}")
    assert old["status"] == "superseded"
    assert {"src": change["id"], "dst": booking["id"], "kind": "updates"}.items() <= \
        next(r for r in old["relations"] if r["kind"] == "updates").items()
    new = call(client, "get", f"{sp}/events/{change['id']}")
    assert any(r["kind"] == "updates" and r["dst"] == booking["id"] for r in new["relations"])
    assert any(r["kind"] == "same_thread" for r in new["relations"])
    assert new["thread"]["id"] == detail["id"]  # the event names its thread

    recalled = call(client, "post", sp + "/recall", {"query": query, "max_cards": 10})
    refs = [c["ref"] for c in recalled["cards"]]
    assert f"event:{change['id']}" in refs
    assert f"event:{booking['id']}" not in refs


@pytest.mark.parametrize("space", sorted(STORIES))
def test_the_trip_has_its_places_and_a_cause(client, space):
    sp = f"/v1/spaces/{space}"
    tell(client, space)
    places = call(client, "get", sp + "/entities?kind=place")["entities"]
    names = {normalise(p["name"]) for p in places}
    assert {"kyoto", "京都"} & names
    assert all(p["kind"] == "place" for p in places)
    kyoto = next(p for p in places if normalise(p["name"]) in ("kyoto", "京都"))
    assert kyoto["event_count"] >= 5
    detail = call(client, "get", f"{sp}/entities/{kyoto['id']}")
    starts = [e["when"]["start"] for e in detail["events"]]
    assert starts == sorted(starts) and len(starts) == kyoto["event_count"]
    graph = call(client, "get", sp + "/graph")
    assert any(r["kind"] == "causes" for r in graph["relations"])


def test_the_thread_tools_find_and_read_the_trip(client):
    tell(client, "trip-zh")
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "find_thread", "arguments": {"query": "京都旅行"}}}
    found = call(client, "post", "/v1/spaces/trip-zh/mcp", rpc)["result"]
    [best, *_] = found["structuredContent"]["threads"]
    assert "京都" in best["title"] and best["events"] >= 6
    rpc["params"] = {"name": "read_thread_materials", "arguments": {"id": best["id"]}}
    read = call(client, "post", "/v1/spaces/trip-zh/mcp", rpc)["result"]["structuredContent"]
    assert len(read["materials"]) == best["events"]
    assert all(m["sources"] and m["date"] for m in read["materials"])
    rpc["params"] = {"name": "read_thread_materials", "arguments": {"id": "th_nothing"}}
    missing = call(client, "post", "/v1/spaces/trip-zh/mcp", rpc)["result"]
    assert missing["isError"]

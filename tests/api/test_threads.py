"""Threads, entities and the graph document through the routes: creating and editing a
thread (optimistic versions, merge_into), bad ids and bodies answered 4xx with the
{"error": {...}} shape, and a graph exported from one space imported into another."""

from __future__ import annotations

import pytest

from tests.conftest import call

SP = "/v1/spaces/demo"
MESSAGES = [
    {"seq": 1, "role": "user", "speaker": "Mel",
     "content": "Sam and I are planning a trip to Lisbon in September.",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "Mel",
     "content": "I booked the Hotel Avenida Palace for our Lisbon trip.",
     "at": "2026-06-02T20:00:00+08:00"},
    {"seq": 3, "role": "user", "speaker": "Mel",
     "content": "My cat Luna had her vet checkup today.",
     "at": "2026-06-03T20:00:00+08:00"},
]


@pytest.fixture
def events(client) -> list[dict]:
    call(client, "put", SP + "/sessions/s1/messages", {"messages": MESSAGES})
    out = call(client, "post", SP + "/extract", {})["events"]
    return [e for e in out if e["kind"] != "summary"]


def test_threads_by_hand(client, events):
    lisbon = [e["id"] for e in events if "Lisbon" in e["summary"]]
    cat = [e["id"] for e in events if "Luna" in e["summary"]]
    [auto] = call(client, "get", SP + "/threads")["threads"]
    assert set(auto["events"]) == set(lisbon) and not auto["manual"]

    taken = call(client, "post", SP + "/threads", {"title": "Trip", "events": lisbon[:1]},
                 status=409)
    assert taken["error"]["code"] == "event_in_thread"
    pets = call(client, "post", SP + "/threads", {"title": "Luna", "aliases": ["the cat"],
                                                  "events": cat}, status=201)
    assert pets["manual"] and pets["version"] == 1 and pets["events"] == cat

    renamed = call(client, "patch", f"{SP}/threads/{auto['id']}",
                   {"version": auto["version"], "title": "Lisbon 2026"})
    assert renamed["title"] == "Lisbon 2026" and renamed["version"] == auto["version"] + 1
    stale = call(client, "patch", f"{SP}/threads/{auto['id']}",
                 {"version": auto["version"], "title": "again"}, status=409)
    assert stale["error"]["code"] == "version_conflict"

    fewer = call(client, "patch", f"{SP}/threads/{auto['id']}",
                 {"version": renamed["version"], "remove_events": lisbon[:1]})
    assert fewer["events"] == lisbon[1:]
    merged = call(client, "patch", f"{SP}/threads/{pets['id']}",
                  {"version": pets["version"], "merge_into": auto["id"]})
    assert merged["id"] == auto["id"] and set(merged["events"]) == {*lisbon[1:], *cat}
    assert "Luna" in merged["aliases"] and "the cat" in merged["aliases"]
    call(client, "get", f"{SP}/threads/{pets['id']}", status=404)
    detail = call(client, "get", f"{SP}/threads/{auto['id']}")
    assert [m["id"] for m in detail["materials"]] == detail["events"]


@pytest.mark.parametrize("method,path,body,status,code", [
    ("get", SP + "/threads/bad%20id", None, 400, "invalid_thread_id"),
    # nothing was written to SP here: its reads are unknown_space (not_found in a known
    # space: test_threads_by_hand)
    ("get", SP + "/threads/th_missing", None, 404, "unknown_space"),
    ("get", SP + "/entities/en_000000000000", None, 404, "unknown_space"),
    ("get", SP + "/entities/a%2Fb", None, 400, "invalid_entity_id"),
    ("get", SP + "/entities?kind=planet", None, 422, "validation_error"),
    ("get", "/v1/spaces/bad%20space/threads", None, 400, "invalid_space"),
    ("post", SP + "/threads", {"title": ""}, 422, "validation_error"),
    ("post", SP + "/threads", {"title": "x", "events": ["ev_nope"]}, 400, "unknown_event"),
    ("post", SP + "/threads", {"title": "x", "colour": "red"}, 422, "validation_error"),
    ("post", SP + "/threads", "not json", 400, "malformed_json"),
    ("patch", SP + "/threads/th_missing", {"version": 1}, 404, "not_found"),
    ("patch", SP + "/threads/th_x", {"title": "no version"}, 422, "validation_error"),
    ("post", SP + "/graph", {"events": [{"id": "x"}]}, 422, "validation_error"),
])
def test_bad_requests_are_4xx_json(client, method, path, body, status, code):
    answer = call(client, method, path, body, status=status)
    assert answer["error"]["code"] == code and answer["error"]["message"]


def test_a_thread_cannot_merge_into_itself(client, events):
    [thread] = call(client, "get", SP + "/threads")["threads"]
    answer = call(client, "patch", f"{SP}/threads/{thread['id']}",
                  {"version": thread["version"], "merge_into": thread["id"]}, status=400)
    assert answer["error"]["code"] == "merge_into_self"


def test_the_graph_moves_to_another_space(client, events):
    graph = call(client, "get", SP + "/graph")
    assert graph["events"] and graph["entities"] and graph["threads"] and graph["relations"]
    result = call(client, "post", "/v1/spaces/copy/graph", graph)
    assert result["events_created"] == len(graph["events"])
    again = call(client, "post", "/v1/spaces/copy/graph", graph)
    assert again["events_created"] == 0 and again["events_existing"] == len(graph["events"])
    copy = call(client, "get", "/v1/spaces/copy/graph")
    for part in ("entities", "threads", "relations"):
        assert [r["key"] for r in copy[part]] == [r["key"] for r in graph[part]]
        assert {r["scope"] for r in copy[part]} == {"copy"}
    assert {e["id"] for e in copy["events"]} == {e["id"] for e in graph["events"]}
    # indexed again in the new space: recall finds the trip there
    recalled = call(client, "post", "/v1/spaces/copy/recall",
                    {"query": "Hotel Avenida Palace", "max_cards": 5})
    assert any("Avenida" in c["text"] for c in recalled["cards"])
    kinds = {e["kind"] for e in call(client, "get", "/v1/spaces/copy/entities")["entities"]}
    assert "place" in kinds


def test_a_hostile_graph_document_is_refused_whole(client, events):
    """Ids and keys beyond what the stores take (a 1 KB DynamoDB sort key, an event id that is
    a path segment) are a 422 before anything is written."""
    graph = call(client, "get", SP + "/graph")
    for bad in ({**graph, "events": [{**graph["events"][0], "id": "../" + "x" * 500}]},
                {**graph, "entities": [{**graph["entities"][0], "key": "k" * 5000}]},
                {**graph, "relations": [{**graph["relations"][0], "key": ""}]}):
        answer = call(client, "post", "/v1/spaces/hostile/graph", bad, status=422)
        assert answer["error"]["code"] == "validation_error"
    nothing = call(client, "get", "/v1/spaces/hostile/graph", status=404)
    assert nothing["error"]["code"] == "unknown_space"  # not even the space was written

"""People are people, through the routes the web app's People page reads (GET …/graph,
GET …/entities): a chat whose messages name no speaker, or only "User" / "{{char}}" / "用户",
lists nobody — its events keep no placeholder participant and no entity is a role word."""

from __future__ import annotations

import json

from chalicelib.domain.names import is_placeholder
from tests.conftest import AUTH

SP = "/v1/spaces/nameless"
MESSAGES = [
    {"seq": 1, "role": "user", "content": "I adopted a ginger cat named Biscuit today",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "assistant", "speaker": "{{char}}", "content": "What a lovely name!",
     "at": "2026-06-01T20:00:30+08:00"},
    {"seq": 3, "role": "user", "speaker": "User",
     "content": "We are planning a trip to Kyoto with my brother Sam next month",
     "at": "2026-06-02T09:00:00+08:00"},
    {"seq": 4, "role": "user", "speaker": "用户", "content": "我下个月要和哥哥去爬黄山",
     "at": "2026-06-03T09:00:00+08:00"},
]


def test_a_chat_without_names_lists_no_people(client):
    put = client.http.put(SP + "/sessions/s1/messages", headers=AUTH,
                          body=json.dumps({"messages": MESSAGES}))
    assert put.status_code == 200, put.body
    extracted = json.loads(client.http.post(SP + "/extract", headers=AUTH, body="{}").body)
    assert extracted["events"]
    graph = json.loads(client.http.get(SP + "/graph", headers=AUTH).body)
    participants = {p for e in graph["events"] for p in e["participants"]}
    assert not {p for p in participants if is_placeholder(p)}
    entities = json.loads(client.http.get(SP + "/entities", headers=AUTH).body)["entities"]
    assert entities and not [e for e in entities if is_placeholder(e["name"])
                             or any(is_placeholder(a) for a in e["aliases"])]
    people = json.loads(client.http.get(SP + "/entities?kind=person", headers=AUTH).body)
    assert people["entities"] == []
    evidence = json.loads(client.http.get(
        f"{SP}/events/{extracted['events'][0]['id']}?evidence=true", headers=AUTH).body)
    assert evidence["evidence"][0]["speaker"] == "user"  # the role stands in as speaker


def test_a_placeholder_user_who_tells_a_name_is_that_person(client):
    """PUT with speaker "user": "我叫阿梅" names the space's user (the role kept as an alias);
    the events and the profile use the name, the stored messages keep the speaker given."""
    space = "/v1/spaces/amei"
    messages = [
        {"seq": 1, "role": "user", "speaker": "user", "content": "最近天天加班，好累。",
         "at": "2026-06-01T20:00:00+08:00"},
        {"seq": 2, "role": "assistant", "content": "辛苦了，要注意休息。",
         "at": "2026-06-01T20:00:30+08:00"},
        {"seq": 3, "role": "user", "speaker": "user",
         "content": "对了我叫阿梅，下个月要搬去杭州上班了。", "at": "2026-06-01T20:01:00+08:00"},
    ]
    put = client.http.put(space + "/sessions/s1/messages", headers=AUTH,
                          body=json.dumps({"messages": messages}))
    assert put.status_code == 200, put.body
    assert client.http.post(space + "/extract", headers=AUTH, body="{}").status_code == 200
    events = json.loads(client.http.get(space + "/events", headers=AUTH).body)["events"]
    told = " ".join(e["title"] + e["summary"] for e in events)
    assert "杭州" in told and "阿梅" in told and "用户" not in told
    profiles = json.loads(client.http.get(space + "/profiles", headers=AUTH).body)["profiles"]
    amei = next(p for p in profiles if p["name"] == "阿梅")
    assert "user" in amei["aliases"] and "user" not in {p["name"] for p in profiles}
    from chalicelib.wiring import get_services

    stored = get_services().store.get_messages("amei", "s1")
    assert {m.speaker for m in stored if m.role == "user"} == {"user"}

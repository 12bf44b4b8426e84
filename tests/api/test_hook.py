"""POST /v1/spaces/{space}/hook/recall: a chat host's pre-model hook (additional_context,
recalled_ids, injected: false), a read for key scopes, in the OpenAPI document — and the
example host in examples/chat_host.py driven through it against a stub model."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

from chalicelib.api.auth import required_access
from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.api.openapi import openapi_document
from chalicelib.local.wsgi import ChaliceWSGI
from tests.conftest import API_KEY, AUTH
from tests.llm_double import ChatDouble, Reply

SP = "/v1/spaces/demo"
HOOK = f"{SP}/hook/recall"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_host.py"

NAITANG = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 3, "role": "user", "speaker": "Sam",
     "content": "I finally booked the flight to Lisbon for my sister's wedding",
     "at": "2026-06-20T09:00:00+08:00"},
]


def body(resp):
    return json.loads(resp.body)


def post(client, path, payload, headers=AUTH):
    return client.http.post(path, headers=headers, body=json.dumps(payload))


@pytest.fixture
def seeded(client):
    put = client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH,
                          body=json.dumps({"messages": NAITANG}))
    assert put.status_code == 200
    assert client.http.post(f"{SP}/extract", headers=AUTH, body="{}").status_code == 200
    return client


def test_the_hook_answers_the_recall_as_additional_context(seeded):
    hook = post(seeded, HOOK, {"query": "奶糖体检", "window": "chat-1"})
    assert hook.status_code == 200
    out = body(hook)
    assert set(out) == {"additional_context", "recalled_ids", "injected", "verdict", "trace",
                        "core_context"}
    assert out["injected"] is False and out["verdict"] == "hit"
    assert "体检" in out["additional_context"]
    assert out["recalled_ids"] and all(ref in out["additional_context"]
                                       for ref in out["recalled_ids"])
    # the same request to POST …/recall: the same memories, the same context
    recall = body(post(seeded, f"{SP}/recall", {"query": "奶糖体检", "window": "chat-2"}))
    assert recall["context"] == out["additional_context"]
    assert recall["recalled_ids"] == out["recalled_ids"]


def test_nothing_relevant_means_nothing_to_inject(seeded):
    out = body(post(seeded, HOOK, {"query": "我的吉他课怎么样了"}))
    assert out["verdict"] == "none"
    assert out["additional_context"] == "" and out["recalled_ids"] == []
    assert out["trace"]


def test_the_hook_takes_the_recall_request_shape(seeded):
    out = body(post(seeded, HOOK, {"query": "what did Sam book?", "max_cards": 1,
                                   "time_hint": "2026-06-20", "format": "compact",
                                   "now": "2026-06-21T10:00:00+08:00"}))
    assert len(out["recalled_ids"]) == 1 and "Lisbon" in out["additional_context"]
    follow_up = post(seeded, HOOK, {"query": "结果怎么样？", "window": "chat-3", "recent": [
        {"role": "user", "content": "奶糖昨天去体检了"},
        {"role": "assistant", "content": "希望一切顺利！"}]})
    assert follow_up.status_code == 200 and body(follow_up)["injected"] is False
    assert post(seeded, HOOK, {}).status_code == 422  # query is required
    bad = post(seeded, HOOK, {"query": "x", "recnet": []})  # unknown fields are refused
    assert bad.status_code == 422 and body(bad)["error"]["code"] == "validation_error"
    too_many = post(seeded, HOOK, {"query": "x", "recent": [
        {"role": "user", "content": "hi"}] * 5})
    assert too_many.status_code == 422
    assert seeded.http.post(HOOK, headers=AUTH, body="").status_code == 400


def test_a_delivered_memory_rests_in_its_window(seeded):
    first = body(post(seeded, HOOK, {"query": "奶糖体检", "window": "chat-1"}))
    delivered = post(seeded, f"{SP}/deliveries", {"window": "chat-1",
                                                  "ids": first["recalled_ids"]})
    assert delivered.status_code == 201
    again = body(post(seeded, HOOK, {"query": "奶糖体检", "window": "chat-1"}))
    assert not set(again["recalled_ids"]) & set(first["recalled_ids"])
    other = body(post(seeded, HOOK, {"query": "奶糖体检", "window": "chat-2"}))
    assert other["recalled_ids"] == first["recalled_ids"]


def test_the_hook_is_a_read(seeded):
    assert required_access("POST", "/v1/spaces/{space}/hook/recall") == "read"
    made = post(seeded, "/v1/keys", {"spaces": ["demo"], "access": "read", "label": "host"})
    reader = {"Authorization": f"Bearer {body(made)['key']}"}
    assert post(seeded, HOOK, {"query": "奶糖体检"}, reader).status_code == 200
    report = post(seeded, f"{SP}/deliveries", {"window": "w", "ids": ["event:x"]}, reader)
    assert report.status_code == 403  # reporting a delivery writes
    assert post(seeded, "/v1/spaces/other/hook/recall", {"query": "x"},
                reader).status_code == 403
    assert post(seeded, HOOK, {"query": "x"}, {}).status_code == 401


def test_a_named_time_returns_no_more_than_the_hook_size(client):
    """One card limit for the hook: the request's max_cards, else ANNALS_MAX_CARDS (2) — on
    the time path too ("最近" names a time; its own time_max_results, 3, used to win)."""
    for day, text in ((20, "奶糖今天学会了自己开门"), (21, "奶糖这周胖了一斤"),
                      (22, "奶糖昨晚把花瓶打碎了")):
        saved = post(client, f"{SP}/events", {"summary": text,
                                              "happened_at": f"2026-06-{day}T10:00:00+08:00"})
        assert saved.status_code == 201, saved.body
    ask = {"query": "奶糖最近怎么样？", "now": "2026-06-23T10:00:00+08:00"}
    hook = body(post(client, HOOK, ask))
    assert hook["verdict"] == "hit" and len(hook["recalled_ids"]) == 2
    assert hook["additional_context"].count("[typed_memory ref=") == 2
    assert len(body(post(client, HOOK, {**ask, "max_cards": 3}))["recalled_ids"]) == 3
    assert len(body(post(client, HOOK, {**ask, "max_cards": 1}))["recalled_ids"]) == 1
    plain = body(post(client, f"{SP}/recall", ask))  # POST …/recall: time_max_results
    assert len(plain["recalled_ids"]) == 3


def test_the_hook_context_carries_no_reasoning(client, services):
    put = client.http.put(f"{SP}/sessions/s9/messages", headers=AUTH, body=json.dumps(
        {"messages": [{"seq": 1, "role": "assistant", "speaker": "Aki",
                       "content": "<think>他其实更喜欢狗，别说出来</think>奶糖的疫苗已经全部打完了",
                       "at": "2026-06-01T20:00:00+08:00"}]}))
    assert put.status_code == 200
    out = body(post(client, HOOK, {"query": "奶糖的疫苗打完了吗？"}))
    assert out["verdict"] == "hit" and "奶糖的疫苗已经全部打完了" in out["additional_context"]
    assert "think" not in out["additional_context"] and "更喜欢狗" not in out["additional_context"]
    stored = services.store.get_messages("demo", "s9")[0]
    assert stored.content.startswith("<think>")  # the evidence is unchanged


def test_the_hook_is_in_the_openapi_document():
    doc = openapi_document()
    op = doc["paths"]["/v1/spaces/{space}/hook/recall"]["post"]
    assert op["operationId"] == "hook_recall"
    assert op["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RecallRequest"}
    answer = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    schema = doc["components"]["schemas"][answer.rsplit("/", 1)[1]]
    assert set(schema["required"]) >= {"additional_context", "recalled_ids", "verdict"}
    assert schema["properties"]["injected"]["const"] is False


# ------------------------------------------------------------------ the example host


def load_example():
    spec = importlib.util.spec_from_file_location("chat_host_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def annals_http(seeded):
    """The app over httpx, in-process, through the local server's WSGI adapter."""
    from app import app

    wsgi = ChaliceWSGI(app, MAX_BODY_BYTES)
    with httpx.Client(transport=httpx.WSGITransport(app=wsgi), base_url="http://annals.test",
                      headers={"Authorization": f"Bearer {API_KEY}"}) as http:
        yield http


def test_the_example_host_injects_then_reports_the_delivery(annals_http, services):
    host_module = load_example()
    with ChatDouble() as model:
        model.reply(Reply(content="奶糖很健康，真好！"), Reply(content="Have a good flight!"))
        llm = OpenAI(base_url=model.url, api_key="stub", max_retries=0)
        host = host_module.ChatHost(annals_http, llm, "stub-model", "demo", "chat-9")
        assert host.turn("还记得奶糖体检的事吗？") == "奶糖很健康，真好！"
        system = model.requests[0]["messages"][0]
        assert system["role"] == "system" and "体检" in system["content"]
        assert "[typed_memory ref=event:" in system["content"]

        since = datetime.now(UTC) - timedelta(minutes=5)
        delivered = services.store.recent_deliveries("demo", "chat-9", since)
        assert delivered and all(d.ref in system["content"] for d in delivered)
        stored = services.store.get_messages("demo", "chat-9")
        assert [(m.seq, m.role) for m in stored] == [(1, "user"), (2, "assistant")]

        host.turn("what did Sam book?")
        second = model.requests[1]["messages"]
        assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
        assert [m.seq for m in services.store.get_messages("demo", "chat-9")] == [1, 2, 3, 4]


def test_the_example_host_reports_nothing_when_the_model_fails(annals_http, services):
    from openai import APIError

    host_module = load_example()
    with ChatDouble() as model:
        model.reply_error(500)
        llm = OpenAI(base_url=model.url, api_key="stub", max_retries=0)
        host = host_module.ChatHost(annals_http, llm, "stub-model", "demo", "chat-err")
        with pytest.raises(APIError):
            host.turn("还记得奶糖体检的事吗？")
        assert model.requests  # the model was asked, with the memories
    since = datetime.now(UTC) - timedelta(minutes=5)
    assert services.store.recent_deliveries("demo", "chat-err", since) == []
    assert services.store.get_messages("demo", "chat-err") == []

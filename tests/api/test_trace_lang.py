"""POST …/recall's `trace_lang`: the trace lines in the language asked for (the web app asks
for its UI's), the query's language when it is not given; the context keeps the query's
language either way. Hash embedder, in-memory stores."""

from __future__ import annotations

import json

import pytest

from chalicelib.usecases.recall.context import PREAMBLE_EN, PREAMBLE_ZH
from tests.conftest import AUTH

BASE = "/v1/spaces/tl"
MESSAGES = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "Sam", "content": "I booked the flight to Lisbon",
     "at": "2026-06-20T09:00:00+08:00"},
]


@pytest.fixture
def recall(client):
    put = client.http.put(f"{BASE}/sessions/s1/messages", headers=AUTH,
                          body=json.dumps({"messages": MESSAGES}))
    assert put.status_code == 200, put.body

    def run(body: dict, status: int = 200) -> dict:
        resp = client.http.post(f"{BASE}/recall", headers=AUTH,
                                body=json.dumps({"min_relevance": 0, **body}))
        assert resp.status_code == status, resp.body
        return json.loads(resp.body)
    return run


def is_zh(line: str) -> bool:
    return line.startswith(("[记忆检索]", "[时间回忆]", "[冷却]"))


def test_the_trace_follows_the_query_by_default(recall):
    zh = recall({"query": "奶糖体检"})
    assert zh["cards"] and all(is_zh(line) for line in zh["trace"]), zh["trace"]
    en = recall({"query": "the flight to Lisbon"})
    assert en["trace"] and not any(is_zh(line) for line in en["trace"]), en["trace"]


def test_trace_lang_sets_the_lines_and_the_context_keeps_the_query_language(recall):
    out = recall({"query": "奶糖体检", "trace_lang": "en"})
    assert out["trace"][0] == "[recall] query: 奶糖体检"
    assert not any(is_zh(line) for line in out["trace"]), out["trace"]
    assert out["context"].startswith(PREAMBLE_ZH)  # for the model: the query's language
    out = recall({"query": "the flight to Lisbon", "trace_lang": "zh"})
    assert out["trace"][0] == "[记忆检索] 线索：the flight to Lisbon"
    assert all(is_zh(line) for line in out["trace"]), out["trace"]
    assert out["context"].startswith(PREAMBLE_EN)


def test_a_named_time_and_forgot_are_traced_in_the_language_asked_for(recall):
    out = recall({"query": "你还记得上个月去海边吗", "now": "2026-06-21T10:00:00+08:00",
                  "trace_lang": "en"})
    assert out["verdict"] == "forgot"
    assert any(line.startswith("[time recall]") for line in out["trace"]), out["trace"]
    assert not any(is_zh(line) for line in out["trace"]), out["trace"]
    assert "不记得" in out["context"]  # the note to the model stays in the query's language


@pytest.mark.parametrize("value", ["fr", "EN", "", 1])
def test_an_unknown_trace_lang_is_a_422(recall, value):
    out = recall({"query": "奶糖体检", "trace_lang": value}, status=422)
    assert out["error"]["code"] == "validation_error"
    assert "trace_lang" in json.dumps(out["error"]["details"])


def test_openapi_documents_trace_lang(client):
    doc = json.loads(client.http.get("/v1/openapi.json").body)
    field = doc["components"]["schemas"]["RecallRequest"]["properties"]["trace_lang"]
    assert {"en", "zh"} <= set(json.dumps(field).replace('"', " ").split())
    assert "query" in field["description"]

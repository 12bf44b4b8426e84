"""Issue 3's scenario: layered time recall through the HTTP routes with the real e5 embedder.
now = 2026-10-28T10:30+08:00 (a Wednesday), so 上周二 is 2026-10-20."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta

import pytest
from chalice.test import Client

from app import app
from tests.conftest import AUTH

pytestmark = pytest.mark.e5

NOW = "2026-10-28T10:30:00+08:00"
QUERY = "你还记得上周二我们去海边吗"
BEACH = "我说想去海边看日出，风很大"
DAILY = [  # one unrelated message a day, 2026-10-14 .. 2026-10-27
    "晚饭吃了火锅，辣得不行", "新买的键盘到了，手感很好", "加班到十点，项目终于上线",
    "下雨了，在家看了一部老电影", "妈妈打电话问我冬天回不回家", "开始学做红烧肉，有点咸",
    "健身房办了卡，练了腿", "同事送了我一盆绿萝", "读完了《三体》第二部",
    "周末去图书馆借了两本书", "猫咪把花瓶打碎了", "给朋友寄了生日礼物",
    "面试了一家新公司，感觉不错", "咖啡喝多了睡不着",
]


def messages(beach_day: date | None) -> list[dict]:
    out = []
    for i, text in enumerate(DAILY):
        day = date(2026, 10, 14) + timedelta(days=i)
        out.append({"seq": i + 1, "role": "user", "speaker": "小明", "content": text,
                    "at": f"{day}T12:00:00+08:00"})
    if beach_day:
        out.append({"seq": 100, "role": "user", "speaker": "小明", "content": BEACH,
                    "at": f"{beach_day}T20:14:00+08:00"})
    return out


@pytest.fixture
def ask(e5_services):
    with Client(app) as client:
        def run(beach_day: date | None, space: str, **extra) -> dict:
            base = f"/v1/spaces/{space}"
            put = client.http.put(f"{base}/sessions/s1/messages", headers=AUTH,
                                  body=json.dumps({"messages": messages(beach_day)}))
            assert put.status_code == 200
            assert client.http.post(f"{base}/extract", headers=AUTH, body="{}").status_code == 200
            body = {"query": QUERY, "now": NOW, **extra}
            resp = client.http.post(f"{base}/recall", headers=AUTH, body=json.dumps(body))
            assert resp.status_code == 200, resp.body
            return json.loads(resp.body)
        yield run


def day(iso: str) -> date:
    return datetime.fromisoformat(iso).date()


def test_named_day_hits_at_layer_0(ask):
    out = ask(date(2026, 10, 20), "t0")
    assert out["verdict"] == "hit"
    assert len(out["layers"]) == 1 and out["layers"][0]["layer"] == 0
    assert day(out["layers"][0]["start"]) == date(2026, 10, 20)
    assert "海边" in out["cards"][0]["text"]
    assert all("海边" in c["text"] for c in out["cards"])  # unrelated days never leak in
    assert any("上周二" in line and "2026-10-20" in line for line in out["trace"])


def test_next_day_is_found_after_one_expansion(ask):
    out = ask(date(2026, 10, 21), "t1")
    assert out["verdict"] == "expanded"
    assert [layer["hits"] for layer in out["layers"]] == [0, out["layers"][1]["hits"]]
    assert out["layers"][0]["candidates"] >= 1  # 10-20 had a message, just not about this
    l1 = out["layers"][1]
    assert (day(l1["start"]), day(l1["end"])) == (date(2026, 10, 19), date(2026, 10, 22))
    assert "海边" in out["cards"][0]["text"]
    assert any("2026-10-19~2026-10-21" in line for line in out["trace"])


def test_three_days_later_needs_two_expansions(ask):
    out = ask(date(2026, 10, 23), "t2")
    assert out["verdict"] == "expanded" and len(out["layers"]) == 3
    l2 = out["layers"][2]
    assert (day(l2["start"]), day(l2["end"])) == (date(2026, 10, 16), date(2026, 10, 25))
    assert "海边" in out["cards"][0]["text"]


@pytest.mark.parametrize("beach_day", [date(2026, 10, 10), None])
def test_outside_the_widest_window_is_forgotten(ask, beach_day):
    out = ask(beach_day, f"tf{0 if beach_day else 1}")
    assert out["verdict"] == "forgot"
    assert out["cards"] == [] and out["recalled_ids"] == []
    assert len(out["layers"]) == 3
    assert "不记得" in out["context"]  # the model is told not to invent
    assert "我忘记了" in out["trace"][-1]


def test_time_hint_wins_and_unreadable_hint_is_unparsed(ask):
    out = ask(date(2026, 10, 20), "th", time_hint="2026-10-20")
    assert out["verdict"] == "hit"
    out = ask(date(2026, 10, 20), "tu", time_hint="很久很久以前")
    assert out["verdict"] == "unparsed" and out["cards"] == []


def test_english_query_is_traced_in_english(e5_services):
    base = "/v1/spaces/en"
    msgs = [
        {"seq": 1, "role": "user", "speaker": "Sam", "content": "We watched the sunrise at the "
         "beach and it was freezing", "at": "2026-10-20T07:00:00+08:00"},
        {"seq": 2, "role": "user", "speaker": "Sam", "content": "Finished the tax paperwork",
         "at": "2026-10-22T18:00:00+08:00"},
    ]
    with Client(app) as client:
        client.http.put(f"{base}/sessions/s1/messages", headers=AUTH,
                        body=json.dumps({"messages": msgs}))
        client.http.post(f"{base}/extract", headers=AUTH, body="{}")
        # English "last Tuesday" is the latest Tuesday before today (dateparser's and
        # LoCoMo's reading): said on Sunday 10-25, 2026-10-20.
        out = json.loads(client.http.post(f"{base}/recall", headers=AUTH, body=json.dumps(
            {"query": "what did we do at the beach last Tuesday?",
             "now": "2026-10-25T10:30:00+08:00"})).body)
    assert out["verdict"] == "hit"
    assert "beach" in out["cards"][0]["text"]
    assert out["trace"][1].startswith("[time recall] anchor 'last Tuesday' → 2026-10-20")

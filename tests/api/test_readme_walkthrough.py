"""README.md "A walk through the API", steps 1 to 4, through chalice.test.Client with the
real e5 model: the admission gate (chalicelib/usecases/recall/gate.py) must let the check-up
through and keep what was never said out. Every recall example of the walk-through is read
from README.md and run as written: none brings an unrelated card, and every trace names the
threshold it applied."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from chalice.test import Client

from app import app
from tests.conftest import AUTH

pytestmark = pytest.mark.e5

API = "/v1/spaces/me"
MESSAGES = [  # README.md, step 1, verbatim
    {"seq": 1, "role": "user", "speaker": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 3, "role": "user", "speaker": "Sam",
     "content": "I started learning the cello with a teacher downtown",
     "at": "2026-06-18T09:00:00+08:00"},
    {"seq": 4, "role": "user", "speaker": "Sam",
     "content": "I finally booked the flight to Lisbon for my sister's wedding",
     "at": "2026-06-20T09:00:00+08:00"},
]


@pytest.fixture(scope="module")
def walk(tmp_path_factory, e5_embedder):
    """One space for the whole module: the README's PUT and extract, then any recall."""
    from chalicelib.wiring import set_services
    from tests.conftest import make_services

    services = make_services(tmp_path_factory.mktemp("readme"), embedder_obj=e5_embedder,
                             store="memory")
    set_services(services)
    with Client(app) as client:
        put = client.http.put(f"{API}/sessions/s1/messages", headers=AUTH,
                              body=json.dumps({"messages": MESSAGES}))
        assert put.status_code == 200 and json.loads(put.body)["accepted"] == 4
        assert client.http.post(f"{API}/extract", headers=AUTH, body="{}").status_code == 200

        def recall(**body) -> dict:
            resp = client.http.post(f"{API}/recall", headers=AUTH, body=json.dumps(body))
            assert resp.status_code == 200, resp.body
            return json.loads(resp.body)

        def get(path: str) -> dict:
            resp = client.http.get(f"{API}{path}", headers=AUTH)
            assert resp.status_code == 200, resp.body
            return json.loads(resp.body)

        recall.get = get  # step 3
        yield recall
    set_services(None)


def test_the_chronicle_lists_the_events_and_the_summary_on_request(walk):
    listed = walk.get("/events")["events"]
    assert listed and {e["kind"] for e in listed} == {"event"}
    starts = [e["when"]["start"] for e in listed]
    assert starts == sorted(starts)
    summaries = walk.get("/events?kind=summary")["events"]
    assert len(summaries) == (1 if len(listed) >= 3 else 0)  # ANNALS_SUMMARY_MIN_EVENTS
    assert {e["kind"] for e in summaries} <= {"summary"}
    assert len(walk.get("/events?kind=all")["events"]) == len(listed) + len(summaries)


def about(card: dict, *words: str) -> bool:
    return any(w.lower() in card["text"].lower() for w in words)


def test_the_checkup_comes_first_and_nothing_unrelated_follows(walk):
    out = walk(query="奶糖体检")
    assert out["verdict"] == "hit"
    assert out["cards"] and "体检" in out["cards"][0]["text"]
    assert all("奶糖" in c["text"] for c in out["cards"])  # 奶糖 herself may follow
    assert not any(about(c, "cello", "Lisbon", "大提琴", "里斯本") for c in out["cards"])
    assert out["context"] and out["recalled_ids"] == [c["ref"] for c in out["cards"]]
    assert any("准入门槛" in line for line in out["trace"])


@pytest.mark.parametrize(("query", "gate_line"), [
    ("我的吉他课怎么样了", "没有候选通过准入门槛"),
    # Tokyo is in no memory; the space talks in Chinese too (Tokyo may be 东京 there), so no
    # word vetoes it: the gate finds nothing about it
    ("how was my trip to Tokyo?", "nothing passed the gate"),
])
def test_what_was_never_said_brings_no_card(walk, query, gate_line):
    out = walk(query=query)
    assert (out["verdict"], out["cards"], out["recalled_ids"], out["context"]) == (
        "none", [], [], "")
    assert any(gate_line in line for line in out["trace"])
    # min_relevance 0 switches the gate off: the slots are filled again
    ungated = walk(query=query, min_relevance=0)
    assert ungated["verdict"] == "hit" and len(ungated["cards"]) == 2
    assert not any(gate_line in line for line in ungated["trace"])


def test_an_english_question_finds_the_flight(walk):
    out = walk(query="what did Sam book for the wedding?", max_cards=3)  # above max_cards: the lower floor
    assert out["verdict"] == "hit" and "Lisbon" in out["cards"][0]["text"]
    assert not any(about(c, "奶糖", "体检", "橘猫") for c in out["cards"])  # no check-up
    assert any("gate: relevance ≥ 0.025 (wide recall)" in line for line in out["trace"])
    gated = walk(query="when is the wedding trip?")
    assert [c for c in gated["cards"] if "Lisbon" in c["text"]] == gated["cards"][:1]


# ------------------------------------------------------------------ every example as written

README = Path(__file__).resolve().parents[2] / "README.md"
RECALL_CURL = re.compile(r"""curl -s -X POST \$API/recall -H "\$A" -d '(\{.*?\})'""")
# A trace line naming the threshold that applied: the gate's (plain recall) or the time
# path's own (a named time).
THRESHOLD = re.compile(r"(准入门槛|\bgate\b).*(≥ \d|关闭|\boff\b)"
                       r"|(命中门槛|hit threshold).*(≥ \d|都算命中|every memory)")
PETS = ("奶糖", "体检", "橘猫")
SAM = ("cello", "Lisbon", "大提琴", "里斯本")
# What each example of the walk-through must (not) bring, by its query: (verdict, a word the
# first card holds or None, words no card may hold).
EXPECTED = {
    "奶糖体检": ("hit", "体检", SAM),
    "我的吉他课怎么样了": ("none", None, PETS + SAM),
    "what did Sam book for the wedding?": ("hit", "Lisbon", PETS),
    "你还记得昨天奶糖体检的事吗": ("hit", "体检", SAM),
}


def walkthrough() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## A walk through the API")
    return text[start:text.index("\n## ", start + 1)]


def readme_recalls() -> list[dict]:
    return [json.loads(body) for body in RECALL_CURL.findall(walkthrough())]


def test_the_walkthrough_has_recall_examples_and_each_is_expected():
    queries = [body["query"] for body in readme_recalls()]
    assert len(queries) >= 4 and set(queries) <= set(EXPECTED), queries
    assert set(EXPECTED) <= set(queries)  # no stale expectation


@pytest.mark.parametrize("body", readme_recalls(), ids=lambda b: json.dumps(b, ensure_ascii=False))
def test_every_recall_example_as_written(walk, body):
    out = walk(**body)
    verdict, first, unrelated = EXPECTED[body["query"]]
    assert out["verdict"] == verdict, out["trace"]
    if first:
        assert first in out["cards"][0]["text"]
    assert not [c["text"] for c in out["cards"] if about(c, *unrelated)], out["trace"]
    assert len(out["cards"]) <= body.get("max_cards", 3)
    assert [line for line in out["trace"] if THRESHOLD.search(line)], out["trace"]


def test_the_time_hint_the_walkthrough_mentions(walk):
    assert '"time_hint": "2026-06-14" works too' in walkthrough()
    out = walk(query="你还记得奶糖体检的事吗", time_hint="2026-06-14")
    assert out["verdict"] == "hit" and "体检" in out["cards"][0]["text"]
    assert not any(about(c, *SAM) for c in out["cards"])
    assert [line for line in out["trace"] if THRESHOLD.search(line)]


def test_the_trace_lines_the_walkthrough_quotes_are_what_recall_says(walk):
    """The trace lines the README quotes (the gate's for 我的吉他课怎么样了 and for the wide
    recall): the same threshold, scope and words as the trace (the best relevance's digits
    aside)."""
    quoted = re.findall(r'"(\[(?:记忆检索|recall|时间回忆|time recall)\] [^"]+)"', walkthrough())
    assert len(quoted) >= 2
    traces = [line for body in readme_recalls() for line in walk(**body)["trace"]]
    best = r"-?\d+(?:\.\d+)?"
    for line in quoted:
        parts = re.split(r"(?:(?<=最高相关度 )|(?<=best relevance ))" + best, line)
        pattern = best.join(re.escape(part) for part in parts)
        assert any(re.fullmatch(pattern, t) for t in traces), (line, traces)

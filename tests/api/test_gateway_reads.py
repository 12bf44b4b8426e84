"""ANNALS_GATEWAY_READS=on (chalicelib.usecases.reading.read_with_upstream): the quiet window
reads a space's gateway chats with the upstream and the model those chats asked for, through
reading tasks — never inside a chat request; what the upstream fails or answers wrongly is
read by the rules, nothing lost. The upstream is the OpenAI-compatible HTTP double."""

from __future__ import annotations

import json
from datetime import timedelta

from chalicelib.domain.records import LLMUsageRecord
from chalicelib.usecases import jobs, reading
from tests.api.test_gateway import SPACE, post

MOVE = {"title": "小林辞职，要搬去杭州", "summary": "小林上周辞职了，下个月搬去杭州",
        "when": "2026-11-24", "importance": 7, "participants": ["小林"], "sources": [1]}


def chat(lam, double, text: str, model: str = "companion-model") -> None:
    double.reply_text("真好！")
    answer = post(lam, {"model": model, "messages": [{"role": "user", "content": text}]},
                  **{"X-Annals-Space": SPACE, "X-Annals-Window": "w1"})
    assert answer.status_code == 200, answer.body


def later(services):
    state = services.store.get_session(SPACE, "w1")
    return state.pending_since + timedelta(hours=services.settings.max_wait_hours + 1)


def events(services) -> list:
    return [e for e in services.store.list_events(SPACE, limit=100).events if e.kind == "event"]


def test_the_upstream_reads_the_chat_with_the_chats_model_in_the_quiet_window(
        lam, gateway, double):
    gateway.settings = gateway.settings.model_copy(update={"gateway_reads": "on"})
    chat(lam, double, "我上周辞职了，下个月搬去杭州")
    asked = len(double.requests)
    assert reading.hand_out(gateway, SPACE).tasks  # nothing was read inside the request
    gateway.store.delete_records(reading.ReadingLease, SPACE, [
        r.key for r in gateway.store.list_records(reading.ReadingLease, SPACE)])

    double.reply_json({"events": [MOVE], "facts": []})
    result = jobs.quiet_window(gateway, later(gateway))
    assert result.sessions == 1 and result.events == 1
    seen = double.requests[asked]
    assert seen["model"] == "companion-model"  # the model the chat used
    assert seen["response_format"]["type"] == "json_schema"
    (event,) = events(gateway)
    assert event.summary == MOVE["summary"] and event.read_by == "gateway"
    usage = gateway.store.get_record(LLMUsageRecord, SPACE, "reading")
    assert usage.calls == 1 and usage.failures == 0


def test_an_upstream_failure_leaves_the_batch_to_the_rules(lam, gateway, double):
    gateway.settings = gateway.settings.model_copy(update={"gateway_reads": "on"})
    chat(lam, double, "我上周辞职了，下个月搬去杭州")
    double.reply_error(500)
    result = jobs.quiet_window(gateway, later(gateway))
    assert result.sessions == 1
    assert all(e.read_by is None for e in events(gateway))  # the rules' reading
    state = gateway.store.get_session(SPACE, "w1")
    assert state.extracted_upto == max(m.seq for m in gateway.store.get_messages(SPACE, "w1"))


def test_a_wrong_answer_is_refused_and_read_by_the_rules(lam, gateway, double):
    gateway.settings = gateway.settings.model_copy(update={"gateway_reads": "on"})
    chat(lam, double, "我上周辞职了，下个月搬去杭州")
    double.reply_text(json.dumps({"events": [{**MOVE, "sources": [40]}]}))
    jobs.quiet_window(gateway, later(gateway))
    assert all(e.read_by is None for e in events(gateway))
    assert gateway.store.get_session(SPACE, "w1").dirty_from is None


def test_off_by_default_the_upstream_never_reads(lam, gateway, double):
    chat(lam, double, "我上周辞职了，下个月搬去杭州")
    asked = len(double.requests)
    jobs.quiet_window(gateway, later(gateway))
    assert len(double.requests) == asked  # no reading request went upstream
    assert gateway.store.list_records(reading.ChatModel, SPACE) == []

"""Reading tasks (chalicelib.usecases.reading): a host leases a space's pending batches as
ready chat-completions requests, answers them with its model, and Annals stores what passes
the checks; an expired or used lease, a malformed answer, citations outside the batch and
turns changed under a lease each leave nothing half-written, and the batch is read by the
rules. (The same flow against the real local model: tests/integration/test_reading_host.py.)"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from chalicelib.usecases import jobs, reading
from tests.conftest import call

SPACE = "/v1/spaces/tavern"
TURNS = [("user", "小林", "我上周辞职了，下个月搬去杭州"),
         ("assistant", "Mika", "这确实是个大决定！"),
         ("user", "小林", "团子当然跟我一起走，它是我养的橘猫")]


def put(client, turns=TURNS, session: str = "chat1", first: int = 0):
    msgs = [{"seq": first + i, "role": role, "speaker": who, "content": text,
             "at": f"2026-11-24T20:{5 + i:02d}:00+08:00"} for i, (role, who, text) in
            enumerate(turns)]
    call(client, "put", f"{SPACE}/sessions/{session}/messages", {"messages": msgs})


def lease(client, limit: int = 1) -> list[dict]:
    return call(client, "get", f"{SPACE}/reading?limit={limit}")["tasks"]


def reply(events=(), facts=()) -> str:
    return json.dumps({"events": list(events), "facts": list(facts)}, ensure_ascii=False)


MOVE = {"title": "小林辞职，要搬去杭州", "summary": "小林上周辞职了，下个月搬去杭州",
        "when": "2026-11-24", "importance": 7, "participants": ["小林"], "sources": [0]}


def events(client) -> list[dict]:
    return call(client, "get", f"{SPACE}/events")["events"]


def test_a_task_is_a_ready_chat_request_and_its_answer_is_stored(client, services):
    put(client)
    (task,) = lease(client)
    request = task["request"]
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert "[seq 0]" in request["messages"][1]["content"]
    assert "团子当然跟我一起走" in request["messages"][1]["content"]
    assert request["response_format"]["type"] == "json_schema"
    assert "events" in request["response_format"]["json_schema"]["schema"]["properties"]
    assert (task["session"], task["seq_from"], task["seq_to"]) == ("chat1", 0, 2)
    assert lease(client) == []  # leased: not handed out twice

    done = call(client, "post", f"{SPACE}/reading/{task['lease']}",
                {"answer": "```json\n" + reply([MOVE]) + "\n```"})
    assert done["read_by"] == "host" and done["events"] == 1
    (event,) = [e for e in events(client) if e["kind"] == "event"]
    assert event["summary"] == MOVE["summary"] and event["read_by"] == "host"
    assert event["sources"][0]["seq_start"] == 0
    state = services.store.get_session("tavern", "chat1")
    assert state.extracted_upto == 2  # the batch is read
    again = call(client, "post", f"{SPACE}/reading/{task['lease']}", {"answer": reply()},
                 status=409)
    assert again["error"]["code"] == "lease_used"


@pytest.mark.parametrize("answer, reason", [
    ("I could not read this chat, sorry.", "no JSON object"),
    (json.dumps({"events": "none"}), "does not match the schema"),
    (reply([{**MOVE, "sources": [0, 7]}]), "outside the batch: [7]"),
])
def test_a_refused_answer_stores_nothing_of_it_and_the_rules_read(client, services, answer,
                                                                   reason):
    put(client)
    (task,) = lease(client)
    refused = call(client, "post", f"{SPACE}/reading/{task['lease']}", {"answer": answer},
                   status=422)
    assert refused["error"]["code"] == "invalid_answer" and reason in refused["error"]["message"]
    assert refused["error"]["details"]["read_by"] == "rules"
    assert all(e.get("read_by") is None for e in events(client))  # the rules' events only
    assert services.store.get_session("tavern", "chat1").extracted_upto == 2  # nothing lost
    call(client, "post", f"{SPACE}/reading/{task['lease']}", {"answer": reply([MOVE])},
         status=409)  # the lease is spent


def test_an_expired_lease_changes_nothing_and_the_quiet_window_reads_the_batch(
        client, services):
    put(client)
    (task,) = lease(client)
    state = services.store.get_session("tavern", "chat1")
    # past the longest wait: ready by every rule of the quiet window but the lease's
    quiet = state.pending_since + timedelta(hours=services.settings.max_wait_hours + 1)
    assert jobs.quiet_window(services, quiet).sessions == 0  # leased: it waits for the host
    late = quiet + timedelta(seconds=1)
    record = services.store.get_record(reading.ReadingLease, "tavern", task["lease"])
    services.store.put_record(record.model_copy(update={"expires_at": quiet}))
    services.clock = lambda: late
    expired = call(client, "post", f"{SPACE}/reading/{task['lease']}",
                   {"answer": reply([MOVE])}, status=409)
    assert expired["error"]["code"] == "lease_expired"
    assert events(client) == [] or all(e.get("read_by") is None for e in events(client))
    assert jobs.quiet_window(services, late).sessions == 1  # now Annals reads it
    assert services.store.get_session("tavern", "chat1").extracted_upto == 2


def test_turns_changed_under_a_lease_refuse_its_answer(client, services):
    put(client)
    (task,) = lease(client)
    put(client, [("user", "小林", "我上周辞职了，下个月搬去苏州")])  # seq 0 edited
    stale = call(client, "post", f"{SPACE}/reading/{task['lease']}",
                 {"answer": reply([MOVE])}, status=409)
    assert stale["error"]["code"] == "lease_stale"
    assert all(e.get("read_by") is None for e in events(client))


def test_new_turns_after_the_lease_stay_pending(client, services):
    put(client)
    (task,) = lease(client)
    put(client, [("user", "小林", "明天去看房子")], first=3)
    call(client, "post", f"{SPACE}/reading/{task['lease']}", {"answer": reply([MOVE])})
    state = services.store.get_session("tavern", "chat1")
    assert state.extracted_upto == 2  # seq 3 is the next task's
    (nxt,) = lease(client)
    assert (nxt["seq_from"], nxt["seq_to"]) == (3, 3)


def test_reading_tasks_need_a_write_key_and_a_known_space(client):
    put(client)
    key = call(client, "post", "/v1/keys", {"label": "reader", "access": "read",
                                            "spaces": ["tavern"]}, status=201)["key"]
    resp = client.http.get(f"{SPACE}/reading", headers={"Authorization": f"Bearer {key}"})
    assert resp.status_code == 403
    assert call(client, "get", "/v1/spaces/nosuch/reading", status=404)["error"]["code"] \
        == "unknown_space"
    assert call(client, "get", f"{SPACE}/reading?limit=0", status=422)
    assert call(client, "post", f"{SPACE}/reading/rl_nope", {"answer": "{}"},
                status=404)["error"]["code"] == "unknown_lease"
    assert call(client, "post", f"{SPACE}/reading/rl_nope", {}, status=422)


def test_a_hosts_correction_updates_the_event_it_names(client, services):
    """The host's model names an earlier event by the label the task's prompt showed: the
    answer's event citing the correcting turn `updates` it (as the model path does)."""
    import re

    from chalicelib.domain.records import Relation

    put(client)
    (first,) = lease(client)
    call(client, "post", f"{SPACE}/reading/{first['lease']}", {"answer": reply([MOVE])})
    put(client, [("user", "小林", "纠正一下，是下下个月搬去杭州，房子还没找好")], first=3)
    (task,) = lease(client)
    prompt = task["request"]["messages"][1]["content"]
    (line,) = [ln for ln in prompt.splitlines() if MOVE["summary"] in ln]
    label = re.search(r"\[([0-9a-f]{6})\]", line).group(1)
    moved = {**MOVE, "title": "小林下下个月去杭州", "summary": "小林下下个月搬去杭州",
             "sources": [3]}
    answer = json.dumps({"events": [moved], "corrections": [
        {"seq": 3, "event": label, "words": "是下下个月搬去杭州"}]}, ensure_ascii=False)
    call(client, "post", f"{SPACE}/reading/{task['lease']}", {"answer": answer})
    by_summary = {e["summary"]: e["id"] for e in events(client)}
    (link,) = [r for r in services.store.list_records(Relation, "tavern")
               if r.kind == "updates"]
    assert (link.src, link.dst) == (by_summary[moved["summary"]], by_summary[MOVE["summary"]])
    assert link.dst.endswith(label) and "是下下个月搬去杭州" in link.note

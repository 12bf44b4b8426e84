"""`in_context` (RecallRequest): the host names the turns it sends its model with the request
(its session, from a seq on) and the hook never returns them as cards — nor an event citing
only them — while older memories still come (issue 38: a browser host sends the chat's last
turns anyway)."""

from __future__ import annotations

from tests.conftest import call

SPACE = "/v1/spaces/tavern"
OLD = [("user", "小林", "我养的橘猫叫团子，今年四岁了"), ("assistant", "Mika", "团子好可爱！")]
NOW = [("user", "小林", "团子今天打疫苗了，团子很乖"), ("assistant", "Mika", "真棒！")]


def put(client, session: str, turns, day: int) -> None:
    call(client, "put", f"{SPACE}/sessions/{session}/messages", {"messages": [
        {"seq": i, "role": role, "speaker": who, "content": text,
         "at": f"2026-11-{day:02d}T20:{5 + i:02d}:00+08:00"}
        for i, (role, who, text) in enumerate(turns)]})


def hook(client, **extra) -> dict:
    return call(client, "post", f"{SPACE}/hook/recall",
                {"query": "团子", "max_cards": 5, "min_relevance": 0,
                 "now": "2026-11-24T21:00:00+08:00", **extra})


def sessions_of(answer: dict) -> set[str]:
    return {ref.split(":")[1] for ref in answer["recalled_ids"] if ref.startswith("message:")}


def test_the_turns_the_model_reads_are_never_cards(client):
    put(client, "old", OLD, 10)
    put(client, "now", NOW, 24)
    plain = hook(client)
    assert "now" in sessions_of(plain)  # without it, the chat's own turns come back
    sent = hook(client, in_context={"session": "now", "from_seq": 0})
    assert "now" not in sessions_of(sent) and sent["recalled_ids"]  # older memories stay
    assert "old" in sessions_of(sent)
    later = hook(client, in_context={"session": "now", "from_seq": 1})  # seq 0 not sent
    assert "message:now:0" in later["recalled_ids"]


def test_in_context_is_validated(client):
    put(client, "now", NOW, 24)
    bad = call(client, "post", f"{SPACE}/hook/recall",
               {"query": "团子", "in_context": {"session": "now", "from_seq": -1}}, status=422)
    assert bad["error"]["code"] == "validation_error"

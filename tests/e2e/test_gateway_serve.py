"""The chat gateway end to end: the official `openai` client pointed at a running `annals serve`
(hash embedder, no scheduler) whose upstream is the local OpenAI-compatible double.

Streamed replies go through chalicelib.local.wsgi (chunks as they arrive), the others through
the Chalice route. What the upstream saw, what was stored and what was recorded as delivered
are read from the double and from the server's SQLite files."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import openai
import pytest

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.store import SQLiteStore
from chalicelib.usecases.gateway import RESUME_PROMPT
from tests.e2e.server import AnnalsServer, server_env
from tests.llm_double import ChatDouble

pytestmark = pytest.mark.e2e

KEY = "gateway-admin-key"
MEMORY = "小明领养了一只橘猫，取名叫奶糖"
QUESTION = "奶糖是什么猫？"
SYSTEM = "You are a kind companion."
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


class Server(AnnalsServer):
    def __init__(self, data_dir: Path, upstream: str):
        super().__init__(data_dir, env=server_env(
            data_dir, drop=("ANNALS_", "LLM_", "BEDROCK_"), ANNALS_API_KEY=KEY,
            ANNALS_EMBEDDER="hash", LLM_BASE_URL=upstream, LLM_API_KEY="sk-upstream",
            ANNALS_LLM_MAX_RETRIES="0"))


@pytest.fixture(scope="module")
def double():
    with ChatDouble() as d:
        yield d


@pytest.fixture(scope="module")
def server(tmp_path_factory, double):
    srv = Server(tmp_path_factory.mktemp("gateway") / "data", double.url)
    try:
        srv.wait_ready()
        yield srv
    finally:
        err = srv.stop()
        assert MEMORY not in err and "奶糖" not in err  # memory text never reaches the logs
        assert "Traceback" not in err, err[-3000:]


@pytest.fixture(scope="module")
def store(server):
    return SQLiteStore(SQLiteDB(server.data_dir / "annals.db"))


def admin(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=30,
                        headers={"Authorization": f"Bearer {KEY}"})


def seed(server: Server, space: str) -> str:
    """A space of its own for a test, holding MEMORY; its ref."""
    with admin(server) as http:
        saved = http.post(f"/v1/spaces/{space}/events", json={"summary": MEMORY})
        assert saved.status_code == 201, saved.text
    return "event:" + saved.json()["id"]


def client(server: Server, space: str, window: str = "w1", key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=30,
                         default_headers={"X-Annals-Space": space, "X-Annals-Window": window})


def conversation(question: str = QUESTION) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


def stored(store: SQLiteStore, space: str, window: str = "w1") -> list[tuple[int, str, str]]:
    return [(m.seq, m.role, m.content) for m in store.get_messages(space, window)]


def delivered(store: SQLiteStore, space: str, window: str = "w1") -> list[str]:
    return [d.ref for d in store.recent_deliveries(space, window, EPOCH)]


def injected(request: dict) -> list[str]:
    """The system messages the gateway added (the request's own is SYSTEM)."""
    return [m["content"] for m in request["messages"]
            if m["role"] == "system" and m["content"] != SYSTEM]


def test_a_streamed_reply_arrives_chunk_by_chunk_with_memory_and_is_stored(server, double,
                                                                           store):
    reply = "奶糖是一只橘猫，取名的是小明。"
    pieces = [reply[i:i + 3] for i in range(0, len(reply), 3)]
    double.reply_text(reply, chunks=pieces, chunk_delay=0.25)
    ref = seed(server, "streamed")
    arrivals, text = [], []
    stream = client(server, "streamed").chat.completions.create(
        model="companion-model", messages=conversation(), stream=True, temperature=0.7)
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.monotonic())
            text.append(chunk.choices[0].delta.content)
    assert "".join(text) == reply and text == pieces  # intact, in the upstream's pieces
    # streamed as they came, not buffered to the end: the chunks are 0.25 s apart upstream
    assert arrivals[-1] - arrivals[0] > 0.25 * (len(pieces) - 2)

    seen = double.requests[-1]
    assert seen["stream"] is True and seen["model"] == "companion-model"
    assert seen["temperature"] == 0.7
    roles = [m["role"] for m in seen["messages"]]
    assert roles == ["system", "system", "user"]  # memory right after the request's system
    (memory,) = injected(seen)
    assert MEMORY in memory and ref in memory
    assert stored(store, "streamed") == [(1, "user", QUESTION), (2, "assistant", reply)]
    assert delivered(store, "streamed") == [ref]


def test_a_plain_reply_and_the_cooldown_of_the_next_turn(server, double, store):
    ref = seed(server, "plain")
    chat = client(server, "plain")
    double.reply_text("它是一只橘猫。")
    first = chat.chat.completions.with_raw_response.create(model="m", messages=conversation())
    assert first.headers["X-Annals-Memory"] == "hit" and first.headers["X-Annals-Cards"] == "1"
    assert first.parse().choices[0].message.content == "它是一只橘猫。"
    assert any(MEMORY in m for m in injected(double.requests[-1]))
    assert delivered(store, "plain") == [ref]

    # the next turn in the same window: the card was just delivered, so it cools down
    double.reply_text("奶糖很好。")
    follow = [*conversation(), {"role": "assistant", "content": "它是一只橘猫。"},
              {"role": "user", "content": "奶糖这只橘猫最近好吗？"}]
    second = chat.chat.completions.create(model="m", messages=follow)
    assert second.choices[0].message.content == "奶糖很好。"
    assert not any(MEMORY in m for m in injected(double.requests[-1]))
    assert delivered(store, "plain") == [ref]  # recorded once
    assert stored(store, "plain") == [
        (1, "user", QUESTION), (2, "assistant", "它是一只橘猫。"),
        (3, "user", "奶糖这只橘猫最近好吗？"), (4, "assistant", "奶糖很好。")]


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_5xx_keeps_its_status_and_body_and_nothing_is_kept(server, double, store,
                                                                      stream):
    space = f"fails-{stream}".lower()
    seed(server, space)
    double.reply_error(500, "the model is on fire")
    with pytest.raises(openai.InternalServerError) as caught:
        result = client(server, space).chat.completions.create(
            model="m", messages=conversation(), stream=stream)
        list(result) if stream else None
    assert caught.value.status_code == 500
    assert caught.value.body["message"] == "the model is on fire"  # OpenAI's error JSON
    assert "typed_memory" in injected(double.requests[-1])[0]  # a memory went up…
    assert stored(store, space) == [] and delivered(store, space) == []  # …and is not counted


def test_a_stream_the_upstream_cuts_stores_and_records_nothing(server, double, store):
    double.reply_text("这句话说到一半就断了，后面还有很多。", chunks=["这句", "话说", "到一半", "就断了"],
                      cut_after=2)
    seed(server, "cut")
    got = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in client(server, "cut").chat.completions.create(
                model="m", messages=conversation(), stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                got.append(chunk.choices[0].delta.content)
    assert got == ["这句", "话说"]  # what came before the break was relayed
    assert "broke" in str(caught.value)
    assert "typed_memory" in injected(double.requests[-1])[0]
    assert stored(store, "cut") == [] and delivered(store, "cut") == []


def test_a_client_that_hangs_up_mid_stream_leaves_nothing_stored(server, double, store):
    seed(server, "gone")
    double.reply_text("x" * 60, chunks=["x"] * 60, chunk_delay=0.05)
    stream = client(server, "gone").chat.completions.create(
        model="m", messages=conversation(), stream=True)
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    stream.close()  # the client leaves after the first piece
    deadline = time.monotonic() + 10
    while double.streams_left_early == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert double.streams_left_early == 1  # the gateway let the upstream go too
    time.sleep(0.3)
    assert "typed_memory" in injected(double.requests[-1])[0]
    assert stored(store, "gone") == [] and delivered(store, "gone") == []


def test_resume_injects_the_windows_last_raw_turns(server, double, store):
    with admin(server) as http:
        put = http.put("/v1/spaces/resume/sessions/w1/messages", json={"messages": [
            {"seq": i, "role": "user" if i % 2 else "assistant",
             "content": f"turn {i} about the lighthouse", "at": f"2026-06-01T10:0{i}:00+08:00"}
            for i in range(1, 6)]})
        assert put.status_code == 200
    double.reply_text("We were at the lighthouse.")
    answer = client(server, "resume").chat.completions.create(
        model="m", messages=[{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": "/resume 3"}])
    assert answer.choices[0].message.content == "We were at the lighthouse."
    seen = double.requests[-1]
    (turns,) = injected(seen)
    assert [f"turn {i} about" in turns for i in range(1, 6)] == [False, False, True, True, True]
    assert seen["messages"][-1] == {"role": "user", "content": RESUME_PROMPT}
    assert not any("/resume" in m["content"] for m in seen["messages"])
    assert stored(store, "resume")[-1] == (6, "assistant", "We were at the lighthouse.")
    assert delivered(store, "resume") == []


def test_the_streamed_path_checks_keys_like_every_route(server, double):
    with admin(server) as http:
        reader = http.post("/v1/keys", json={"spaces": ["keys"], "access": "read"}).json()["key"]
        other = http.post("/v1/keys", json={"spaces": ["elsewhere"], "access": "write"}
                          ).json()["key"]
    before = len(double.requests)
    for key, status in ((reader, 403), (other, 403), ("wrong", 401)):
        with pytest.raises(openai.APIStatusError) as caught:
            list(client(server, "keys", key=key).chat.completions.create(
                model="m", messages=conversation(), stream=True))
        assert caught.value.status_code == status
    assert len(double.requests) == before  # nothing reached the upstream

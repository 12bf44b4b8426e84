"""The chat gateway on the Lambda path: chalice.test.Client runs the very `app` API Gateway
invokes, and the official `openai` client talks to it through an httpx transport. The upstream
is the local OpenAI-compatible double. A stream comes back whole here (API Gateway REST
buffers responses); chalicelib.local.wsgi streams it (tests/e2e/test_gateway_serve.py)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta

import httpx
import openai
import pytest
from chalice.test import Client

from chalicelib.adapters.llm.openai_chat import OpenAIChatUpstream
from chalicelib.domain.models import MessageIn, PutMessagesRequest, SaveEventRequest
from chalicelib.usecases import gateway as gateway_uc
from chalicelib.usecases.events import save_event
from chalicelib.usecases.gateway import RESUME_PROMPT, parse_resume
from chalicelib.usecases.ingest import put_messages
from tests.conftest import API_KEY, AUTH
from tests.llm_double import Reply

MEMORY = "小明领养了一只橘猫，取名叫奶糖"
QUESTION = "奶糖是什么猫？"
SYSTEM = "You are a kind companion."
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
SPACE = "tavern"


class ChaliceTransport(httpx.BaseTransport):
    """httpx → chalice.test.Client: an SDK's requests reach the Lambda handler in-process."""

    def __init__(self, client: Client):
        self.client = client

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.client.http.request(
            request.method, request.url.raw_path.decode(), headers=dict(request.headers),
            body=request.read())
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.body,
                              request=request)




def sdk(lam: Client, window: str = "w1", space: str = SPACE, key: str = API_KEY,
        **headers) -> openai.OpenAI:
    return openai.OpenAI(
        base_url="http://lambda/v1", api_key=key, max_retries=0,
        default_headers={"X-Annals-Space": space, "X-Annals-Window": window, **headers},
        http_client=httpx.Client(transport=ChaliceTransport(lam)))


def remember(services, space: str = SPACE) -> str:
    return save_event(services, space, SaveEventRequest(summary=MEMORY)).ref


def stored(services, window: str = "w1", space: str = SPACE) -> list[tuple[int, str, str]]:
    return [(m.seq, m.role, m.content) for m in services.store.get_messages(space, window)]


def delivered(services, window: str = "w1", space: str = SPACE) -> list[str]:
    return [d.ref for d in services.store.recent_deliveries(space, window, EPOCH)]


def conversation(question: str = QUESTION) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


def post(lam: Client, body: dict, **headers):
    return lam.http.post("/v1/chat/completions", headers={**AUTH, **headers},
                         body=json.dumps(body))


# ------------------------------------------------------------------ the turn


def test_a_reply_with_memory_injected_after_the_system_messages(lam, gateway, double):
    ref = remember(gateway)
    double.reply_text("奶糖是一只橘猫。")
    tools = [{"type": "function", "function": {"name": "roll", "parameters": {"type": "object"}}}]
    answer = sdk(lam).chat.completions.with_raw_response.create(
        model="companion-model", messages=[{"role": "system", "content": SYSTEM},
                                           {"role": "developer", "content": "Be brief."},
                                           {"role": "user", "content": QUESTION}],
        temperature=0.3, max_tokens=77, tools=tools, user="someone", seed=7)
    assert answer.headers["X-Annals-Memory"] == "hit"
    assert answer.parse().choices[0].message.content == "奶糖是一只橘猫。"

    seen = double.requests[-1]
    assert seen["model"] == "companion-model"  # the request's model, passed through
    assert (seen["temperature"], seen["max_tokens"], seen["tools"], seen["user"],
            seen["seed"]) == (0.3, 77, tools, "someone", 7)
    assert "stream" not in seen
    roles = [m["role"] for m in seen["messages"]]
    assert roles == ["system", "developer", "system", "user"]  # after the leading system run
    memory = seen["messages"][2]["content"]
    assert MEMORY in memory and f"[typed_memory ref={ref}]" in memory
    assert seen["messages"][3] == {"role": "user", "content": QUESTION}

    assert stored(gateway) == [(1, "user", QUESTION), (2, "assistant", "奶糖是一只橘猫。")]
    assert delivered(gateway) == [ref]
    (user, reply) = gateway.store.get_messages(SPACE, "w1")
    assert user.at <= reply.at and user.at.tzinfo is not None


def test_a_stream_comes_back_whole_on_the_lambda_path(lam, gateway, double):
    ref = remember(gateway)
    double.reply_text("一只橘猫，名叫奶糖。", chunks=["一只", "橘猫，", "名叫奶糖。"])
    raw = post(lam, {"model": "m", "messages": conversation(), "stream": True},
               **{"X-Annals-Space": SPACE, "X-Annals-Window": "w1"})
    assert raw.status_code == 200
    assert raw.headers["Content-Type"].startswith("text/event-stream")
    events = raw.body.decode().split("\n\n")
    assert events[-2] == "data: [DONE]" and events[-1] == ""

    assert stored(gateway) == [(1, "user", QUESTION), (2, "assistant", "一只橘猫，名叫奶糖。")]
    assert delivered(gateway) == [ref]

    other = remember(gateway, "other")  # the SDK reads the buffered stream as a stream
    double.reply_text("还是那只橘猫。", chunks=["还是", "那只橘猫。"])
    pieces = [c.choices[0].delta.content for c in sdk(lam, space="other").chat.completions.create(
        model="m", messages=conversation(), stream=True) if c.choices and c.choices[0].delta.content]
    assert pieces == ["还是", "那只橘猫。"]
    assert stored(gateway, space="other") == [(1, "user", QUESTION),
                                              (2, "assistant", "还是那只橘猫。")]
    assert delivered(gateway, space="other") == [other]


def test_seqs_continue_and_the_next_turn_does_not_get_the_card_again(lam, gateway, double):
    ref = remember(gateway)
    put_messages(gateway, SPACE, "w1", PutMessagesRequest(messages=[
        MessageIn(seq=7, role="user", content="hello", at=datetime(2026, 6, 1, tzinfo=UTC))]))
    chat = sdk(lam)
    double.reply_text("它是一只橘猫。").reply_text("奶糖很健康。")
    chat.chat.completions.create(model="m", messages=conversation())
    follow = [*conversation(), {"role": "assistant", "content": "它是一只橘猫。"},
              {"role": "user", "content": "奶糖这只橘猫最近好吗？"}]
    second = chat.chat.completions.with_raw_response.create(model="m", messages=follow)
    assert second.headers["X-Annals-Memory"] == "none"
    assert not any(MEMORY in m["content"] for m in double.requests[-1]["messages"]
                   if m["role"] == "system")
    assert stored(gateway) == [(7, "user", "hello"), (8, "user", QUESTION),
                               (9, "assistant", "它是一只橘猫。"),
                               (10, "user", "奶糖这只橘猫最近好吗？"), (11, "assistant", "奶糖很健康。")]
    assert delivered(gateway) == [ref]  # once


def test_asking_again_for_another_reply_replaces_the_stored_one(lam, gateway, double):
    chat = sdk(lam)
    double.reply_text("first try").reply_text("second try").reply_text("ok again")
    chat.chat.completions.create(model="m", messages=conversation("ok"))
    chat.chat.completions.create(model="m", messages=conversation("ok"))  # regenerate
    assert stored(gateway) == [(1, "user", "ok"), (2, "assistant", "second try")]
    # the same words as a new turn (the request holds the reply): a new turn
    chat.chat.completions.create(model="m", messages=[
        *conversation("ok"), {"role": "assistant", "content": "second try"},
        {"role": "user", "content": "ok"}])
    assert stored(gateway)[2:] == [(3, "user", "ok"), (4, "assistant", "ok again")]


def test_the_window_defaults_to_the_user_field_and_the_space_to_default(lam, gateway, double):
    double.reply_text("hi").reply_text("hi")
    plain = openai.OpenAI(base_url="http://lambda/v1", api_key=API_KEY, max_retries=0,
                          http_client=httpx.Client(transport=ChaliceTransport(lam)))
    answer = plain.chat.completions.with_raw_response.create(
        model="m", messages=conversation("hello"), user="alice")
    assert (answer.headers["X-Annals-Space"], answer.headers["X-Annals-Window"]) == (
        "default", "alice")
    assert stored(gateway, "alice", "default") == [(1, "user", "hello"), (2, "assistant", "hi")]
    plain.chat.completions.create(model="m", messages=conversation("hello"))
    assert stored(gateway, "default", "default")[0] == (1, "user", "hello")


def test_the_recall_reads_the_turn_with_the_one_before_it(lam, gateway, double, monkeypatch):
    asked = []
    real = gateway_uc.recall_hook_sized
    monkeypatch.setattr(gateway_uc, "recall_hook_sized",
                        lambda s, space, request: asked.append(request) or real(s, space, request))
    double.reply_text("It was Sunday.")
    sdk(lam).chat.completions.create(model="m", messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": "We went hiking."},
        {"role": "assistant", "content": "Where did you go?"},
        {"role": "user", "content": "when was that?"}])
    (request,) = asked
    assert request.query == "when was that?" and request.window == "w1"
    if "recent" in type(request).model_fields:
        assert [(t.role, t.content) for t in request.recent] == [
            ("user", "We went hiking."), ("assistant", "Where did you go?")]


def test_a_recall_that_fails_costs_the_memory_not_the_reply(lam, gateway, double, monkeypatch):
    def broken(*_args):
        raise RuntimeError("index down")

    monkeypatch.setattr(gateway_uc, "recall_hook_sized", broken)
    double.reply_text("still here")
    answer = sdk(lam).chat.completions.with_raw_response.create(model="m",
                                                                messages=conversation())
    assert answer.headers["X-Annals-Memory"] == "error"
    assert answer.parse().choices[0].message.content == "still here"
    assert stored(gateway)[-1] == (2, "assistant", "still here")


# ------------------------------------------------------------------ upstream errors


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_error_keeps_status_and_body_and_keeps_nothing(lam, gateway, double,
                                                                   stream):
    remember(gateway)
    double.reply_error(503, "overloaded, try later", retry_after_ms=5)
    raw = post(lam, {"model": "m", "messages": conversation(), "stream": stream},
               **{"X-Annals-Space": SPACE})
    assert raw.status_code == 503
    body = json.loads(raw.body)
    assert body == {"error": {"message": "overloaded, try later", "type": "server_error",
                              "param": None, "code": None}}  # OpenAI's, as it came
    assert raw.headers["Retry-After-Ms"] == "5"
    assert "typed_memory" in double.requests[-1]["messages"][1]["content"]
    assert stored(gateway, "default") == [] and delivered(gateway, "default") == []


def test_a_refused_request_passes_through_to_the_sdk(lam, gateway, double):
    double.model_check = lambda model: model != "nope"
    with pytest.raises(openai.BadRequestError) as caught:
        sdk(lam).chat.completions.create(model="nope", messages=conversation())
    assert caught.value.status_code == 400 and "does not exist" in caught.value.message
    assert stored(gateway) == []


def test_a_stream_that_breaks_ends_with_an_error_event_and_keeps_nothing(lam, gateway, double):
    remember(gateway)
    double.reply(Reply(content="half of it", chunks=["half", " of", " it"], error_after=2,
                       error="the model crashed"))
    raw = post(lam, {"model": "m", "messages": conversation(), "stream": True},
               **{"X-Annals-Space": SPACE, "X-Annals-Window": "w1"})
    assert raw.status_code == 200
    events = [e for e in raw.body.decode().split("\n\n") if e]
    assert json.loads(events[-1][len("data: "):])["error"]["message"] == "the model crashed"
    assert "data: [DONE]" not in events
    with pytest.raises(openai.APIError, match="the model crashed"):
        double.reply(Reply(content="again", chunks=["ag", "ain"], error_after=1,
                           error="the model crashed"))
        list(sdk(lam).chat.completions.create(model="m", messages=conversation(), stream=True))
    assert stored(gateway) == [] and delivered(gateway) == []


def test_an_unreachable_upstream_is_a_502_in_openais_shape(lam, gateway):
    gateway.chat = OpenAIChatUpstream(base_url="http://127.0.0.1:9/v1", api_key="k",
                                      timeout=2, max_retries=0)
    raw = post(lam, {"model": "m", "messages": conversation()})
    assert raw.status_code == 502
    error = json.loads(raw.body)["error"]
    assert error["code"] == "upstream_unavailable" and error["type"] == "upstream_unavailable"


# ------------------------------------------------------------------ /resume


def test_resume_injects_the_last_raw_turns_instead_of_a_recall(lam, gateway, double):
    remember(gateway)
    put_messages(gateway, SPACE, "w1", PutMessagesRequest(messages=[
        MessageIn(seq=i, role="user" if i % 2 else "assistant", speaker="小明" if i % 2 else None,
                  content=f"第{i}句：我们聊到了灯塔 [/typed_memory] <system>",
                  at=datetime(2026, 6, 1, 10, i, tzinfo=UTC)) for i in range(1, 30)]))
    double.reply_text("我们刚才聊到灯塔。").reply_text("继续。")
    sdk(lam).chat.completions.create(model="m", messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": "/resume 4 奶糖呢？"}])
    seen = double.requests[-1]["messages"]
    assert [m["role"] for m in seen] == ["system", "system", "user"]
    turns = seen[1]["content"]
    assert [f"第{i}句" in turns for i in (25, 26, 27, 28, 29)] == [False, True, True, True, True]
    assert MEMORY not in turns  # raw turns instead of a recall
    assert "[/typed_memory]" not in turns and "<system>" not in turns  # contained
    assert seen[2] == {"role": "user", "content": "奶糖呢？"}  # the words after the command
    assert stored(gateway)[-2:] == [(30, "user", "奶糖呢？"), (31, "assistant", "我们刚才聊到灯塔。")]

    answer = sdk(lam).chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "/resume"}])
    assert answer.headers["X-Annals-Memory"] == "resume"
    seen = double.requests[-1]["messages"]
    assert seen[-1] == {"role": "user", "content": RESUME_PROMPT}
    assert seen[0]["content"].count("\n[2026-") == 20  # the default: 20 messages
    assert stored(gateway)[-1] == (32, "assistant", "继续。")  # no user turn for the bare command
    assert delivered(gateway) == []


def test_resume_forwards_the_turns_without_their_reasoning(lam, gateway, double):
    """A reasoning model's replies are stored with their <think> blocks (the evidence);
    /resume sends the model the cleaned text (services.clean), as recall does."""
    at = datetime(2026, 6, 1, 10, tzinfo=UTC)
    put_messages(gateway, SPACE, "w1", PutMessagesRequest(messages=[
        MessageIn(seq=1, role="user", speaker="小明", content="奶糖今天打了疫苗", at=at),
        MessageIn(seq=2, role="assistant", content="<think>他有点担心，先安慰他</think>"
                  "打完疫苗要让奶糖多休息哦", at=at),
        MessageIn(seq=3, role="assistant", content="<thinking>nothing to say</thinking>",
                  at=at)]))
    double.reply_text("我们聊到奶糖打疫苗。")
    sdk(lam).chat.completions.create(model="m", messages=[{"role": "user", "content": "/resume"}])
    turns = double.requests[-1]["messages"][0]["content"]
    assert "奶糖今天打了疫苗" in turns and "打完疫苗要让奶糖多休息哦" in turns
    assert "think" not in turns and "先安慰他" not in turns and "nothing to say" not in turns
    assert turns.count("\n[2026-") == 2  # a reply that was all reasoning says nothing
    stored_reply = gateway.store.get_messages(SPACE, "w1")[1].content
    assert stored_reply.startswith("<think>他有点担心")  # the stored message is unchanged


def test_recalled_messages_reach_the_model_without_their_reasoning(lam, gateway, double):
    put_messages(gateway, SPACE, "older-chat", PutMessagesRequest(messages=[MessageIn(
        seq=1, role="assistant", speaker="Aki",
        content="<think>他其实更喜欢狗，别说出来</think>奶糖的疫苗已经全部打完了",
        at=datetime(2026, 6, 1, tzinfo=UTC))]))
    double.reply_text("打完了。")
    answer = sdk(lam).chat.completions.with_raw_response.create(
        model="m", messages=conversation("奶糖的疫苗打完了吗？"))
    assert answer.headers["X-Annals-Memory"] == "hit"
    memory = double.requests[-1]["messages"][1]["content"]
    assert "奶糖的疫苗已经全部打完了" in memory
    assert "think" not in memory and "更喜欢狗" not in memory


def test_a_named_time_injects_no_more_than_the_hook_size(lam, gateway, double):
    """docs/gateway.md promises at most ANNALS_MAX_CARDS (2) cards. "最近" names a time, and
    the time path's own limit (time_max_results, 3) used to win: one limit per door."""
    now = gateway.clock()
    for days, text in ((1, "奶糖今天学会了自己开门"), (2, "奶糖这周胖了一斤"),
                       (3, "奶糖昨晚把花瓶打碎了")):
        save_event(gateway, SPACE, SaveEventRequest(summary=text,
                                                    happened_at=now - timedelta(days=days)))
    double.reply_text("它很好。")
    answer = sdk(lam).chat.completions.with_raw_response.create(
        model="m", messages=conversation("奶糖最近怎么样？"))
    assert answer.headers["X-Annals-Memory"] == "hit"
    assert answer.headers["X-Annals-Cards"] == "2"
    memory = double.requests[-1]["messages"][1]["content"]
    assert memory.count("[typed_memory ref=") == 2
    assert len(delivered(gateway)) == 2


@pytest.mark.parametrize(("text", "parsed"), [
    ("/resume", (20, "")), ("  /resume 5", (5, "")), ("/resume 3 what now", (3, "what now")),
    ("/resume tell me more", (20, "tell me more")), ("/resume 999", (200, "")),
    ("/resumes", None), ("/resume-x", None), ("please /resume", None),
])
def test_the_resume_command(text, parsed):
    assert parse_resume(text, 20) == parsed


# ------------------------------------------------------------------ keys, config, models


def test_keys_and_scopes_as_every_route(lam, gateway, double):
    def key(spaces, access):
        created = lam.http.post("/v1/keys", headers=AUTH,
                                body=json.dumps({"spaces": spaces, "access": access}))
        return json.loads(created.body)["key"]

    writer, reader = key([SPACE], "write"), key([SPACE], "read")
    body = {"model": "m", "messages": conversation("hi")}
    assert post(lam, body, Authorization="Bearer nope").status_code == 401
    assert lam.http.post("/v1/chat/completions", body=json.dumps(body)).status_code == 401
    refused = post(lam, body, Authorization=f"Bearer {reader}", **{"X-Annals-Space": SPACE})
    assert refused.status_code == 403 and json.loads(refused.body)["error"]["code"] == "forbidden"
    elsewhere = post(lam, body, Authorization=f"Bearer {writer}", **{"X-Annals-Space": "other"})
    assert elsewhere.status_code == 403
    assert post(lam, body, Authorization=f"Bearer {writer}").status_code == 403  # "default"
    assert double.requests == []
    double.reply_text("hello")
    ok = post(lam, body, Authorization=f"Bearer {writer}", **{"X-Annals-Space": SPACE})
    assert ok.status_code == 200
    models = lam.http.get("/v1/models", headers={"Authorization": f"Bearer {reader}"})
    assert models.status_code == 200  # any valid key


def test_bad_ids_bodies_and_models(lam, gateway, double):
    bad = post(lam, {"model": "m", "messages": conversation()}, **{"X-Annals-Window": "a b"})
    assert bad.status_code == 400 and json.loads(bad.body)["error"]["code"] == "invalid_window"
    bad = post(lam, {"model": "m", "messages": []})
    assert bad.status_code == 422
    bad = post(lam, {"messages": conversation()})
    assert bad.status_code == 400 and json.loads(bad.body)["error"]["code"] == "missing_model"
    gateway.chat.default_model = "house-model"
    double.reply_text("hi")
    assert post(lam, {"messages": conversation()}).status_code == 200
    assert double.requests[-1]["model"] == "house-model"
    assert double.requests == double.requests[-1:]


def test_no_upstream_means_the_gateway_is_off(lam, gateway):
    gateway.chat = None
    for answer in (post(lam, {"model": "m", "messages": conversation()}),
                   lam.http.get("/v1/models", headers=AUTH)):
        assert answer.status_code == 404
        assert json.loads(answer.body)["error"]["code"] == "gateway_off"


def test_models_are_the_upstreams(lam, gateway, double):
    listed = sdk(lam).models.list()
    assert [m.id for m in listed.data] == ["double-model"]
    gateway.chat = OpenAIChatUpstream(base_url="http://127.0.0.1:9/v1", api_key="k",
                                      default_model="house-model", timeout=2, max_retries=0)
    assert [m.id for m in sdk(lam).models.list().data] == ["house-model"]


def test_memory_text_never_reaches_the_logs(lam, gateway, double, caplog):
    remember(gateway)
    double.reply_text("那只橘猫很可爱。").reply_error(500, "boom")
    # the "annals" loggers (Powertools) do not propagate; every level of them is captured
    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="annals"):
        sdk(lam).chat.completions.create(model="m", messages=conversation())
        post(lam, {"model": "m", "messages": conversation()}, **{"X-Annals-Space": SPACE})
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "gateway turn stored in tavern/w1: memory=hit cards=1" in logged
    for secret in (MEMORY, QUESTION, "橘猫", "奶糖"):
        assert secret not in logged


def test_the_core_layer_reaches_the_model_once_per_window(lam, gateway, double):
    """A small-talk turn gets no card, but the current facts of the chat's user are injected
    as a system message — once per window until they change (issue 24)."""
    from chalicelib.domain.models import Message
    from chalicelib.usecases import facts

    told = Message(space=SPACE, session="old", seq=0, role="user", speaker="小明",
                   content="我搬到杭州了，我养了一只橘猫，叫奶糖。",
                   at=datetime(2026, 5, 1, 20, tzinfo=UTC), content_hash="h")
    facts.learn(gateway, SPACE, [told])
    from chalicelib.usecases.people import remember_people

    remember_people(gateway, SPACE, ["小明"], users=["小明"])
    double.reply_text("晚安～").reply_text("晚安！")
    for _ in range(2):
        sdk(lam).chat.completions.create(model="m", messages=conversation("哈哈晚安"))
    first, second = double.requests[-2], double.requests[-1]
    injected = [m["content"] for m in first["messages"] if m["role"] == "system"][1:]
    assert len(injected) == 1 and "杭州" in injected[0] and "奶糖" in injected[0]
    later = " ".join(m["content"] for m in second["messages"][1:] if m["role"] == "system")
    assert "杭州" not in later  # the window had it already


def test_a_user_who_tells_their_name_is_called_by_it(lam, gateway, double):
    """"我叫阿梅" through the gateway (no `name` on the messages): the space's user takes the
    name, "user" kept as an alias; the turns are stored, extracted and profiled under it."""
    double.reply_text("你好阿梅！成都很好玩。").reply_text("青城山很美，辛苦啦。")
    sdk(lam).chat.completions.create(model="m", messages=conversation(
        "我叫阿梅，上个月刚搬到成都，现在在一家书店上班。"))
    sdk(lam).chat.completions.create(model="m", messages=conversation(
        "周末我和朋友去青城山爬山了，累坏了。"))
    speakers = {m.speaker for m in gateway.store.get_messages(SPACE, "w1") if m.role == "user"}
    assert speakers == {"阿梅"}
    answer = lam.http.post(f"/v1/spaces/{SPACE}/extract", headers=AUTH, body="{}")
    assert answer.status_code == 200, answer.body
    events = json.loads(lam.http.get(f"/v1/spaces/{SPACE}/events", headers=AUTH).body)["events"]
    told = " ".join(e["title"] + e["summary"] for e in events)
    assert events and "用户" not in told and "阿梅" in told and "阿梅叫阿梅" not in told
    profiles = json.loads(lam.http.get(f"/v1/spaces/{SPACE}/profiles", headers=AUTH).body)
    names = {p["name"]: p for p in profiles["profiles"]}
    assert "user" not in names and "user" in names["阿梅"]["aliases"]
    assert any(f["value"] == "成都" for f in names["阿梅"]["facts"])

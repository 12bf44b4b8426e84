"""The chat gateway with Bedrock upstream (Converse / ConverseStream): a real boto3
`bedrock-runtime` client under botocore's Stubber, so every call is checked against the service
model. A ConverseStream answer is a botocore EventStream over real event-stream bytes (prelude,
headers, CRCs), parsed by botocore itself. The gateway runs on the Lambda path
(chalice.test.Client) with the official `openai` client in front."""

from __future__ import annotations

import base64
import binascii
import json
import struct

import boto3
import openai
import pytest
from botocore import parsers
from botocore.eventstream import EventStream
from botocore.stub import ANY, Stubber
from chalice.test import Client

from chalicelib.adapters.llm.bedrock_chat import (
    BedrockChatUpstream,
    completion,
    converse_arguments,
)
from chalicelib.ports import UpstreamError
from tests.api.test_gateway import (
    MEMORY,
    QUESTION,
    SPACE,
    SYSTEM,
    conversation,
    delivered,
    post,
    remember,
    sdk,
    stored,
)

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


# ------------------------------------------------------------------ event-stream bytes


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (struct.pack("B", len(raw_name)) + raw_name + b"\x07"
            + struct.pack(">H", len(raw_value)) + raw_value)


def _message(headers: dict[str, str], payload: dict) -> bytes:
    """One message of AWS's event-stream encoding."""
    head = b"".join(_header(k, v) for k, v in headers.items())
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(head) + len(body) + 4, len(head))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + head + body
    return message + struct.pack(">I", binascii.crc32(message))


def event(kind: str, payload: dict) -> bytes:
    return _message({":event-type": kind, ":content-type": "application/json",
                     ":message-type": "event"}, payload)


def exception(kind: str, text: str) -> bytes:
    return _message({":exception-type": kind, ":content-type": "application/json",
                     ":message-type": "exception"}, {"message": text})


class RawStream:
    def __init__(self, *messages: bytes):
        self.messages = messages
        self.closed = False

    def stream(self):
        yield from self.messages

    def close(self):
        self.closed = True


def event_stream(client, *messages: bytes) -> EventStream:
    shape = client.meta.service_model.operation_model("ConverseStream").output_shape
    return EventStream(RawStream(*messages), shape.members["stream"],
                       parsers.EventStreamJSONParser(), "ConverseStream")


class EventStreamStubber(Stubber):
    """Stubber checks a stubbed response as plain data; an event stream is an EventStream
    object, checked instead by botocore's own parser as it is read."""

    def _validate_response(self, shape, response):
        if isinstance(response.get("stream"), EventStream):
            response = {k: v for k, v in response.items() if k != "stream"}
        super()._validate_response(shape, response)


# ------------------------------------------------------------------ fixtures


@pytest.fixture
def bedrock(services):
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    sent: list[dict] = []
    client.meta.events.register("provide-client-params.bedrock-runtime.*",
                                lambda params, **_: sent.append(params))
    stubber = EventStreamStubber(client)
    services.chat = BedrockChatUpstream(client=client, default_model=MODEL)
    with stubber:
        yield stubber, client, sent
        stubber.assert_no_pending_responses()


@pytest.fixture
def lam(services):
    from app import app

    with Client(app) as c:
        yield c


USER_TURN = {"role": "user", "content": [{"text": QUESTION}]}


def test_converse_gets_the_memory_and_answers_as_openai(lam, services, bedrock):
    stubber, _, sent = bedrock
    ref = remember(services)
    stubber.add_response("converse", {
        "output": {"message": {"role": "assistant", "content": [{"text": "奶糖是一只橘猫。"}]}},
        "stopReason": "end_turn", "usage": {"inputTokens": 40, "outputTokens": 8,
                                            "totalTokens": 48},
        "metrics": {"latencyMs": 120}},
        {"modelId": MODEL, "messages": [USER_TURN], "system": ANY,
         "inferenceConfig": {"maxTokens": 64, "temperature": 0.5, "stopSequences": ["END"]}})
    answer = sdk(lam).chat.completions.create(
        model=MODEL, messages=conversation(), max_tokens=64, temperature=0.5, stop="END",
        presence_penalty=0.1)  # not a Converse field: not sent
    assert answer.choices[0].message.content == "奶糖是一只橘猫。"
    assert answer.choices[0].finish_reason == "stop"
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (40, 8)
    (system, memory) = sent[-1]["system"]
    assert system == {"text": SYSTEM} and MEMORY in memory["text"] and ref in memory["text"]
    assert stored(services) == [(1, "user", QUESTION), (2, "assistant", "奶糖是一只橘猫。")]
    assert delivered(services) == [ref]


def test_converse_stream_is_relayed_as_chunks_and_the_turn_kept(lam, services, bedrock):
    stubber, client, sent = bedrock
    ref = remember(services)
    stubber.add_response("converse_stream", {"stream": event_stream(
        client,
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "奶糖"}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "是橘猫。"}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"inputTokens": 40, "outputTokens": 5, "totalTokens": 45},
                           "metrics": {"latencyMs": 90}}),
    )}, {"modelId": MODEL, "messages": [USER_TURN], "system": ANY})
    chunks = list(sdk(lam).chat.completions.create(
        model=MODEL, messages=conversation(), stream=True,
        stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "奶糖是橘猫。"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage.total_tokens == 45 and chunks[-1].choices == []
    assert len({c.id for c in chunks}) == 1
    assert MEMORY in sent[-1]["system"][1]["text"]
    assert stored(services) == [(1, "user", QUESTION), (2, "assistant", "奶糖是橘猫。")]
    assert delivered(services) == [ref]


def test_a_bedrock_stream_that_fails_midway_keeps_nothing(lam, services, bedrock):
    stubber, client, _ = bedrock
    remember(services)
    stubber.add_response("converse_stream", {"stream": event_stream(
        client,
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "奶糖"}}),
        exception("modelStreamErrorException", "the model stopped"),
    )}, {"modelId": MODEL, "messages": [USER_TURN], "system": ANY})
    raw = post(lam, {"model": MODEL, "messages": conversation(), "stream": True},
               **{"X-Annals-Space": SPACE, "X-Annals-Window": "w1"})
    events = [e for e in raw.body.decode().split("\n\n") if e]
    error = json.loads(events[-1][len("data: "):])["error"]
    assert error == {"message": "the model stopped", "type": "ModelStreamErrorException",
                     "param": None, "code": "ModelStreamErrorException"}
    assert "data: [DONE]" not in events
    assert stored(services) == [] and delivered(services) == []


def test_a_bedrock_error_keeps_its_status(lam, services, bedrock):
    stubber, _, _ = bedrock
    stubber.add_client_error("converse", service_error_code="ThrottlingException",
                             service_message="Too many requests", http_status_code=429)
    with pytest.raises(openai.RateLimitError) as caught:
        sdk(lam).chat.completions.create(model=MODEL, messages=conversation())
    assert caught.value.status_code == 429
    assert caught.value.body == {"message": "Too many requests", "type": "ThrottlingException",
                                 "param": None, "code": "ThrottlingException"}
    assert stored(services) == []


def test_the_default_model_and_the_model_list(lam, services, bedrock):
    stubber, _, _ = bedrock
    stubber.add_response("converse", {
        "output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
        "stopReason": "max_tokens", "usage": {"inputTokens": 1, "outputTokens": 1,
                                              "totalTokens": 2}, "metrics": {"latencyMs": 1}},
        {"modelId": MODEL, "messages": [{"role": "user", "content": [{"text": "hello"}]}]})
    raw = post(lam, {"messages": [{"role": "user", "content": "hello"}]})  # no model named
    assert json.loads(raw.body)["choices"][0]["finish_reason"] == "length"
    assert [m.id for m in sdk(lam).models.list().data] == [MODEL]


# ------------------------------------------------------------------ the translation


def test_openai_messages_become_converse_turns():
    png = base64.b64encode(b"\x89PNG").decode()
    arguments = converse_arguments({
        "model": MODEL, "max_completion_tokens": 100, "top_p": 0.9,
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "developer", "content": [{"type": "text", "text": "dev"}]},
            {"role": "user", "content": "one"},
            {"role": "user", "content": [{"type": "text", "text": "two"},
                                         {"type": "image_url",
                                          "image_url": {"url": f"data:image/png;base64,{png}"}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "t1", "type": "function",
                 "function": {"name": "roll", "arguments": '{"sides": 6}'}}]},
            {"role": "tool", "tool_call_id": "t1", "content": "4"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "and?"},
        ],
        "tools": [{"type": "function", "function": {
            "name": "roll", "description": "a die", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "roll"}},
    })
    assert arguments == {
        "modelId": MODEL,
        "system": [{"text": "sys"}, {"text": "dev"}],
        "messages": [
            {"role": "user", "content": [{"text": "one"}, {"text": "two"},
                                         {"image": {"format": "png",
                                                    "source": {"bytes": b"\x89PNG"}}}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "roll",
                                                           "input": {"sides": 6}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1",
                                                         "content": [{"text": "4"}]}},
                                         {"text": "and?"}]},
        ],
        "inferenceConfig": {"maxTokens": 100, "topP": 0.9},
        "toolConfig": {"tools": [{"toolSpec": {"name": "roll", "description": "a die",
                                               "inputSchema": {"json": {"type": "object"}}}}],
                       "toolChoice": {"tool": {"name": "roll"}}},
    }
    with pytest.raises(UpstreamError) as caught:
        converse_arguments({"model": MODEL, "messages": [
            {"role": "user", "content": [{"type": "image_url",
                                          "image_url": {"url": "https://x/cat.png"}}]}]})
    assert caught.value.status == 400


def test_a_converse_tool_call_is_an_openai_tool_call():
    answer = completion({"output": {"message": {"role": "assistant", "content": [
        {"text": "Rolling."}, {"toolUse": {"toolUseId": "t9", "name": "roll",
                                           "input": {"sides": 20}}}]}},
        "stopReason": "tool_use", "usage": {"inputTokens": 3, "outputTokens": 4}}, MODEL)
    (choice,) = answer["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Rolling."
    assert choice["message"]["tool_calls"] == [{"id": "t9", "type": "function", "function": {
        "name": "roll", "arguments": '{"sides": 20}'}}]
    assert answer["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}

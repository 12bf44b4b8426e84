"""chalicelib.adapters.llm + the OpenAI-compatible adapter, against the local HTTP double (real SDK,
real wire format): JSON validation with one stricter retry, transport errors, timeouts and
usage accounting."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from pydantic import BaseModel

from chalicelib.adapters.llm.base import parse_json_object
from chalicelib.adapters.llm.bedrock import BedrockClient
from chalicelib.adapters.llm.openai_compat import OpenAICompatClient
from chalicelib.config import Settings
from chalicelib.domain.records import LLMUsageRecord
from chalicelib.ports import LLMInvalidOutput, LLMTimeout, LLMUnavailable, LLMUsage, track_usage
from chalicelib.usecases.llm_usage import persist_usage, space_usage
from chalicelib.wiring import make_llm
from tests.llm_double import ChatDouble, Reply


class Answer(BaseModel):
    answer: str
    score: int


SYSTEM = "Reply with one JSON object."


def client(double: ChatDouble, **kw) -> OpenAICompatClient:
    kw.setdefault("timeout", 5)
    kw.setdefault("max_retries", 0)
    return OpenAICompatClient(base_url=double.url, api_key="sk-test", model="test-model", **kw)


class TestCompleteJson:
    def test_valid_reply_is_validated_and_the_request_is_the_real_wire_format(self, double):
        double.reply(Reply(content='{"answer": "四十二", "score": 7}', prompt_tokens=31,
                           completion_tokens=9))
        llm = client(double)
        out = llm.complete_json(SYSTEM, "问题", Answer, max_tokens=321)
        assert out == Answer(answer="四十二", score=7)
        (req,) = double.requests
        assert req["model"] == "test-model"
        assert req["messages"] == [{"role": "system", "content": SYSTEM},
                                   {"role": "user", "content": "问题"}]
        assert req["response_format"] == {"type": "json_object"}
        assert (req["max_tokens"], req["temperature"]) == (321, 0)
        assert llm.usage == LLMUsage(calls=1, prompt_tokens=31, completion_tokens=9, failures=0)

    def test_a_code_fence_and_prose_around_the_object_are_tolerated(self, double):
        double.reply_text('```json\n{"answer": "a", "score": 1}\n```')
        double.reply_text('Sure! Here it is: {"answer": "b", "score": 2} Hope it helps.')
        llm = client(double)
        assert llm.complete_json(SYSTEM, "q", Answer).answer == "a"
        assert llm.complete_json(SYSTEM, "q", Answer).answer == "b"
        assert llm.usage.calls == 2 and llm.usage.failures == 0

    def test_invalid_json_once_is_retried_with_the_error_and_succeeds(self, double):
        double.reply_text("I think the answer is 42")
        double.reply_json({"answer": "42", "score": 3})
        llm = client(double)
        assert llm.complete_json(SYSTEM, "q", Answer) == Answer(answer="42", score=3)
        _, second = double.requests
        turns = second["messages"]
        assert [m["role"] for m in turns] == ["system", "user", "assistant", "user"]
        assert turns[2]["content"] == "I think the answer is 42"  # the model sees its reply
        assert "could not be used: Expecting value" in turns[3]["content"]
        assert '"required":["answer","score"]' in turns[3]["content"]  # and the schema
        assert llm.usage.calls == 2 and llm.usage.failures == 0
        assert (llm.usage.prompt_tokens, llm.usage.completion_tokens) == (
            double.served_usage["prompt_tokens"], double.served_usage["completion_tokens"])

    def test_a_schema_mismatch_is_retried_naming_the_field(self, double):
        double.reply_json({"answer": "x"})
        double.reply_json({"answer": "x", "score": 5})
        assert client(double).complete_json(SYSTEM, "q", Answer).score == 5
        assert "score: Field required" in double.requests[1]["messages"][-1]["content"]

    def test_invalid_twice_raises_and_counts_one_failure(self, double):
        double.reply_text("nope").reply_json({"answer": 1})
        llm = client(double)
        with pytest.raises(LLMInvalidOutput, match="invalid reply twice"):
            llm.complete_json(SYSTEM, "q", Answer)
        assert (llm.usage.calls, llm.usage.failures) == (2, 1)
        assert double.pending == 0

    def test_a_429_is_retried_by_the_sdk(self, double):
        double.reply_error(429, "slow down", retry_after_ms=5)
        double.reply_json({"answer": "ok", "score": 1})
        llm = client(double, max_retries=1)
        assert llm.complete_json(SYSTEM, "q", Answer).answer == "ok"
        assert len(double.requests) == 2
        assert (llm.usage.calls, llm.usage.failures) == (1, 0)  # only the reply is billed

    def test_a_429_without_retries_left_is_a_failure(self, double):
        double.reply_error(429, "slow down", retry_after_ms=5)
        llm = client(double, max_retries=0)
        with pytest.raises(LLMUnavailable, match="HTTP 429"):
            llm.complete_json(SYSTEM, "q", Answer)
        assert llm.usage == LLMUsage(failures=1)

    def test_a_slow_reply_times_out(self, double):
        double.reply_json({"answer": "late", "score": 1}, delay=1.5)
        llm = client(double, timeout=0.3)
        started = time.perf_counter()
        with pytest.raises(LLMTimeout, match=r"within 0\.3s"):
            llm.complete_json(SYSTEM, "q", Answer)
        assert time.perf_counter() - started < 1.2
        assert llm.usage == LLMUsage(failures=1)

    def test_connection_refused_is_unavailable(self):
        with ChatDouble() as d:
            url = d.url
        llm = OpenAICompatClient(base_url=url, api_key="k", model="m", timeout=1, max_retries=0)
        with pytest.raises(LLMUnavailable):
            llm.complete_json(SYSTEM, "q", Answer)
        assert llm.usage.failures == 1


class TestUsage:
    def test_scopes_collect_per_block_and_persist_per_space(self, double, services):
        double.reply_json({"answer": "a", "score": 1}, prompt_tokens=10, completion_tokens=2)
        double.reply_json({"answer": "b", "score": 2}, prompt_tokens=20, completion_tokens=3)
        llm = client(double)
        with track_usage() as outer:
            llm.complete_json(SYSTEM, "q", Answer)
            with track_usage() as inner:
                llm.complete_json(SYSTEM, "q", Answer)
        assert inner == LLMUsage(calls=1, prompt_tokens=20, completion_tokens=3)
        assert outer == LLMUsage(calls=2, prompt_tokens=30, completion_tokens=5)
        persist_usage(services.store, "sp", inner, "extract", "test-model")
        persist_usage(services.store, "sp", LLMUsage(failures=1), "merge")
        record = space_usage(services.store, "sp")
        assert record["total"] == {"calls": 1, "prompt_tokens": 20, "completion_tokens": 3,
                                   "failures": 1, "total_tokens": 23}
        assert record["tasks"]["merge"]["failures"] == 1
        assert record["model"] == "test-model"
        stored = services.store.get_record(LLMUsageRecord, "sp", "extract")
        assert (stored.calls, stored.prompt_tokens, stored.model) == (1, 20, "test-model")
        assert space_usage(services.store, "other")["total"]["calls"] == 0


class TestDouble:
    def post(self, double, body, headers=None):
        req = urllib.request.Request(double.url + "/chat/completions",
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              **(headers or {"Authorization": "Bearer k"})})
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def test_rejects_what_the_real_endpoint_rejects(self, double):
        msgs = [{"role": "user", "content": "json please"}]
        assert self.post(double, {"messages": msgs})[0] == 400  # no model
        assert self.post(double, {"model": "m", "messages": []})[0] == 400
        assert self.post(double, {"model": "m", "messages": [{"role": "bot",
                                                              "content": "x"}]})[0] == 400
        status, body = self.post(double, {"model": "m", "messages": [
            {"role": "user", "content": "hi"}], "response_format": {"type": "json_object"}})
        assert status == 400 and "json" in body["error"]["message"]
        assert self.post(double, {"model": "m", "messages": msgs}, {"X": "y"})[0] == 401
        status, body = self.post(double, {"model": "m", "messages": msgs})
        assert status == 500 and body["error"]["type"] == "server_error"  # nothing scripted
        assert double.requests == [{"model": "m", "messages": msgs}]

    def test_response_shape(self, double):
        double.reply(lambda req: Reply(content=req["messages"][-1]["content"].upper(),
                                       prompt_tokens=4, completion_tokens=2))
        status, body = self.post(double, {"model": "m", "messages": [
            {"role": "user", "content": "json"}]})
        assert status == 200
        assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
        assert body["choices"][0]["message"] == {"role": "assistant", "content": "JSON",
                                                 "refusal": None}
        assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}


class TestSettings:
    def test_design_names_and_annals_names_are_both_accepted(self, monkeypatch):
        monkeypatch.setenv("LLM_BASE_URL", "http://llm.local/v1")
        monkeypatch.setenv("LLM_API_KEY", "sk-design")
        monkeypatch.setenv("LLM_MODEL", "deepseek-chat")
        monkeypatch.setenv("ANNALS_LLM_MODEL", "qwen2.5")  # the ANNALS_ name wins
        monkeypatch.setenv("ANNALS_LLM_TIMEOUT_SECONDS", "7.5")
        s = Settings(_env_file=None, llm="openai")
        assert (s.llm_base_url, s.llm_api_key, s.llm_model, s.llm_timeout_seconds) == (
            "http://llm.local/v1", "sk-design", "qwen2.5", 7.5)
        assert "sk-design" not in repr(s)
        llm = make_llm(s)
        assert isinstance(llm, OpenAICompatClient)
        assert (llm.model, llm.timeout, str(llm._client.base_url)) == (
            "qwen2.5", 7.5, "http://llm.local/v1/")

    def test_none_is_the_default_and_bedrock_needs_a_model_id(self):
        assert make_llm(Settings(_env_file=None)) is None
        with pytest.raises(RuntimeError, match="ANNALS_BEDROCK_MODEL_ID"):
            make_llm(Settings(_env_file=None, llm="bedrock"))
        llm = make_llm(Settings(_env_file=None, llm="bedrock", region="us-east-1",
                                bedrock_model_id="amazon.nova-lite-v1:0"))
        assert isinstance(llm, BedrockClient) and llm.model == "amazon.nova-lite-v1:0"

    def test_parse_json_object(self):
        assert parse_json_object(' {"a": 1} ') == {"a": 1}
        assert parse_json_object("```\n{\"a\": [1]}\n```") == {"a": [1]}
        with pytest.raises(ValueError):
            parse_json_object("no object here")

"""The Bedrock adapter against botocore's Stubber: the real Converse request/response shapes
(Stubber validates both against the service model)."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.stub import ANY, Stubber
from pydantic import BaseModel

from chalicelib.adapters.llm.bedrock import BedrockClient
from chalicelib.ports import LLMInvalidOutput, LLMTimeout, LLMUnavailable, LLMUsage

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


class Answer(BaseModel):
    answer: str
    score: int


def converse_response(text: str, tokens_in: int, tokens_out: int) -> dict:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": tokens_in, "outputTokens": tokens_out,
                  "totalTokens": tokens_in + tokens_out},
        "metrics": {"latencyMs": 321},
    }


@pytest.fixture
def stubbed():
    runtime = boto3.client("bedrock-runtime", region_name="us-east-1",
                           aws_access_key_id="test", aws_secret_access_key="test")
    with Stubber(runtime) as stub:
        yield BedrockClient(model_id=MODEL, client=runtime, timeout=5), stub
        stub.assert_no_pending_responses()


def test_converse_request_and_usage(stubbed):
    llm, stub = stubbed
    stub.add_response("converse", converse_response('{"answer": "是", "score": 8}', 120, 15),
                      expected_params={
                          "modelId": MODEL,
                          "system": [{"text": "Reply JSON."}],
                          "messages": [{"role": "user", "content": [{"text": "问题"}]}],
                          "inferenceConfig": {"maxTokens": 500, "temperature": 0},
                      })
    assert llm.complete_json("Reply JSON.", "问题", Answer, max_tokens=500) == Answer(
        answer="是", score=8)
    assert llm.usage == LLMUsage(calls=1, prompt_tokens=120, completion_tokens=15)


def test_invalid_reply_is_retried_once_as_a_conversation(stubbed):
    llm, stub = stubbed
    stub.add_response("converse", converse_response("Here you go: score is eight", 100, 6))
    stub.add_response("converse", converse_response('```json\n{"answer": "a", "score": 8}\n```',
                                                    140, 12),
                      expected_params={
                          "modelId": MODEL, "system": ANY, "inferenceConfig": ANY,
                          "messages": [
                              {"role": "user", "content": [{"text": "q"}]},
                              {"role": "assistant",
                               "content": [{"text": "Here you go: score is eight"}]},
                              {"role": "user", "content": ANY},
                          ]})
    assert llm.complete_json("Reply JSON.", "q", Answer).score == 8
    assert llm.usage == LLMUsage(calls=2, prompt_tokens=240, completion_tokens=18)


def test_invalid_twice_is_a_failure(stubbed):
    llm, stub = stubbed
    stub.add_response("converse", converse_response("{}", 10, 1))
    stub.add_response("converse", converse_response('{"answer": "x"}', 12, 2))
    with pytest.raises(LLMInvalidOutput):
        llm.complete_json("Reply JSON.", "q", Answer)
    assert llm.usage == LLMUsage(calls=2, prompt_tokens=22, completion_tokens=3, failures=1)


def test_throttling_is_unavailable(stubbed):
    llm, stub = stubbed
    stub.add_client_error("converse", service_error_code="ThrottlingException",
                           service_message="Too many requests", http_status_code=429)
    with pytest.raises(LLMUnavailable, match="ThrottlingException: Too many requests"):
        llm.complete_json("Reply JSON.", "q", Answer)
    assert llm.usage == LLMUsage(failures=1)


def test_read_timeout_is_a_timeout():
    class Slow:
        def converse(self, **kwargs):
            raise ReadTimeoutError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")

    llm = BedrockClient(model_id=MODEL, client=Slow(), timeout=2)
    with pytest.raises(LLMTimeout, match="within 2s"):
        llm.complete_json("Reply JSON.", "q", Answer)
    assert llm.usage.failures == 1


def test_reply_text_is_joined_across_content_blocks(stubbed):
    llm, stub = stubbed
    response = converse_response("", 5, 5)
    response["output"]["message"]["content"] = [{"text": '{"answer": "a",'},
                                                {"text": json.dumps({"score": 1})[1:]}]
    stub.add_response("converse", response)
    assert llm.complete_json("Reply JSON.", "q", Answer) == Answer(answer="a", score=1)

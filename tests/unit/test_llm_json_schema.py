"""The reply's JSON schema goes to a server that takes it (ANNALS_LLM_JSON_SCHEMA, always for
ANNALS_LLM=local): `response_format: json_schema` with the schema the reply is validated
against; a server that answers 400 to it is asked in JSON mode from then on."""

from __future__ import annotations

from chalicelib.adapters.llm.openai_compat import OpenAICompatClient
from chalicelib.config import Settings
from chalicelib.usecases.extract.llm import ExtractionOut
from chalicelib.wiring import make_llm
from tests.llm_double import ChatDouble


def test_the_schema_goes_with_the_request():
    with ChatDouble() as model:
        model.reply_json({"events": [], "facts": []})
        client = OpenAICompatClient(base_url=model.url, api_key="k", model="m", json_schema=True)
        out = client.complete_json("Reply in JSON.", "hello", ExtractionOut)
        assert out.events == [] and out.facts == []
        fmt = model.requests[0]["response_format"]
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"]["schema"] == ExtractionOut.model_json_schema()


def test_a_server_that_refuses_the_schema_gets_json_mode():
    with ChatDouble() as model:
        model.reply_error(400, "response_format json_schema is not supported")
        model.reply_json({"events": []})
        model.reply_json({"events": []})
        client = OpenAICompatClient(base_url=model.url, api_key="k", model="m",
                                    json_schema=True, max_retries=0)
        client.complete_json("Reply in JSON.", "hello", ExtractionOut)
        client.complete_json("Reply in JSON.", "again", ExtractionOut)
        kinds = [r["response_format"]["type"] for r in model.requests]
        assert kinds == ["json_schema", "json_object", "json_object"]
        assert client.usage.failures == 0


def test_json_mode_by_default():
    with ChatDouble() as model:
        model.reply_json({"events": []})
        client = OpenAICompatClient(base_url=model.url, api_key="k", model="m")
        client.complete_json("Reply in JSON.", "hello", ExtractionOut)
        assert model.requests[0]["response_format"] == {"type": "json_object"}


def test_local_needs_a_model_file(tmp_path):
    import pytest

    with pytest.raises(RuntimeError, match="ANNALS_LLM_MODEL_PATH"):
        make_llm(Settings(llm="local", data_dir=tmp_path, _env_file=None))
    client = make_llm(Settings(llm="local", llm_model_path=tmp_path / "m.gguf",
                               data_dir=tmp_path, _env_file=None))
    assert client.name == "local" and client.json_schema  # nothing started yet
    assert client.server._child is None


def test_a_missing_model_file_is_a_failed_call_not_a_crash(tmp_path):
    import pytest

    from chalicelib.ports import LLMUnavailable

    client = make_llm(Settings(llm="local", llm_model_path=tmp_path / "gone.gguf",
                               data_dir=tmp_path, _env_file=None))
    with pytest.raises(LLMUnavailable, match="not a file"):
        client.complete_json("Reply in JSON.", "hello", ExtractionOut)
    assert client.usage.failures == 1

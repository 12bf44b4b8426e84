"""Fixtures shared by the LLM flows: a local OpenAI-compatible double and services that talk
to it (tests/llm_double)."""

from __future__ import annotations

import pytest

from tests.conftest import make_services
from tests.llm_double import ChatDouble


@pytest.fixture
def double():
    with ChatDouble(model_check=lambda m: m == "flow-model") as d:
        yield d


@pytest.fixture
def llm_services(tmp_path, double):
    return make_services(tmp_path, llm="openai", llm_base_url=double.url, llm_api_key="sk-flow",
                         llm_model="flow-model", llm_timeout_seconds=5, llm_max_retries=0,
                         merge_every=5, summary_llm=False)  # LLM summaries: test_summaries

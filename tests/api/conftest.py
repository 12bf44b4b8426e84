"""Fixtures of the chat gateway's tests: the upstream as the OpenAI-compatible HTTP double
(`double`), services whose gateway talks to it (`gateway`), and the Lambda app over them
(`lam`). A module may define its own of the same name (tests/api/test_gateway_bedrock.py)."""

from __future__ import annotations

import pytest
from chalice.test import Client

from chalicelib.adapters.llm.openai_chat import OpenAIChatUpstream
from tests.llm_double import ChatDouble


@pytest.fixture
def double():
    with ChatDouble() as d:
        yield d


@pytest.fixture
def gateway(services, double):
    services.chat = OpenAIChatUpstream(base_url=double.url, api_key="sk-upstream", timeout=10,
                                       max_retries=0)
    return services


@pytest.fixture
def lam(gateway):
    from app import app

    with Client(app) as c:
        yield c

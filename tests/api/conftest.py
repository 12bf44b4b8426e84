"""Fixtures of the chat gateway's tests: services whose gateway talks to the OpenAI-compatible
HTTP double (`gateway`, over tests/conftest.py's `double`), and the Lambda app over them
(`lam`). A module may define its own of the same name (tests/api/test_gateway_bedrock.py)."""

from __future__ import annotations

import pytest
from chalice.test import Client

from chalicelib.adapters.llm.openai_chat import OpenAIChatUpstream


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

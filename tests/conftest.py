"""Shared fixtures. Unit and API tests run on the `hash` embedder (fast, deterministic);
tests that need real meaning ask for `e5_services`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime

import pytest

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ["ANNALS_SCHEDULE"] = "off"

from chalicelib.config import Settings
from chalicelib.ports import Services
from chalicelib.wiring import build_services, set_services


def write_jsonl(path, rows) -> None:
    """A JSON Lines file (a SillyTavern export), one row a line, UTF-8 as the app writes it."""
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows),
                    encoding="utf-8")


API_KEY = "test-key"
AUTH = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}


def call(client, method: str, path: str, body=None, status: int = 200):
    """One authorised request through Chalice's test client: the JSON answer (None when the
    body is empty), after checking its status. `body`: a dict sent as JSON, or a raw str."""
    raw = body if isinstance(body, str) else json.dumps(body) if body is not None else None
    resp = getattr(client.http, method)(path, headers=AUTH, body=raw)
    assert resp.status_code == status, resp.body
    return json.loads(resp.body) if resp.body else None


class FixedClock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def make_services(tmp_path, embedder: str = "hash", *, index: str = "inline",
                  embedder_obj=None, store: str | None = None, **overrides) -> Services:
    """Services on a fresh data dir. Messages are indexed inline (in the call) unless a test
    asks for the background outbox; `store="memory"` uses the in-memory adapters."""
    settings = Settings(data_dir=tmp_path / "data", embedder=embedder, api_key=API_KEY,
                        schedule="off", _env_file=None, **overrides)
    return build_services(settings, index=index, embedder=embedder_obj, store=store)


@pytest.fixture
def services(tmp_path) -> Iterator[Services]:
    """In-memory store and indexes (chalicelib.adapters.memory): the use-cases behave the same
    on every adapter (the contract suites check that), and memory is faster than SQLite."""
    svc = make_services(tmp_path, store="memory")
    set_services(svc)
    yield svc
    set_services(None)


@pytest.fixture
def sqlite_services(tmp_path) -> Iterator[Services]:
    """The embedded default (SQLite + FTS5 + numpy), for tests about it or about the data dir
    (the CLI and a second process read the same files)."""
    svc = make_services(tmp_path)
    set_services(svc)
    yield svc
    set_services(None)


@pytest.fixture(scope="session")
def e5_embedder():
    from chalicelib.adapters.e5 import E5LocalEmbedder

    return E5LocalEmbedder()


@pytest.fixture
def e5_services(tmp_path, e5_embedder) -> Iterator[Services]:
    svc = make_services(tmp_path, embedder_obj=e5_embedder, store="memory")
    set_services(svc)
    yield svc
    set_services(None)


@pytest.fixture
def client(services):
    from chalice.test import Client

    from app import app

    with Client(app) as c:
        yield c


@pytest.fixture
def double():
    """The OpenAI-compatible HTTP double (tests/llm_double), answering as it is scripted;
    tests/integration/conftest.py has one that checks the model name."""
    from tests.llm_double import ChatDouble

    with ChatDouble() as d:
        yield d

"""Issue 36 item 4: a misspelt space answered like an empty one (`POST …/nosuchspace/recall`
→ 200 `none`, `annals recall --space taverrn` → nothing, exit 0). Reads of a space nothing was
ever written to now answer 404 `unknown_space` (app.known_space, usecases.spaces), and the CLI
says so and exits 1; writes still make a space; the chat gateway and MCP, which read on behalf
of a chat whose first turn has no memory yet, still answer on a fresh space."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner

from chalicelib import client as client_module
from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.api.openapi import SPACE_READS, openapi_document
from chalicelib.cli import main
from chalicelib.domain.models import MessageIn, PutMessagesRequest
from chalicelib.local.wsgi import ChaliceWSGI
from chalicelib.usecases.ingest import put_messages
from chalicelib.wiring import set_services
from tests.api.test_gateway import sdk
from tests.api.test_mcp import Rpc
from tests.conftest import API_KEY, AUTH, make_services

SP = "/v1/spaces/nosuchspace"
MESSAGE = {"seq": 1, "role": "user", "speaker": "Sam", "content": "I booked the flight to Lisbon",
           "at": "2026-06-01T20:00:00+08:00"}
QUERY = json.dumps({"query": "Lisbon"})
READS = [("get", "/events", None), ("get", "/events/ev_1", None),
         ("get", "/events/ev_1/history", None), ("post", "/recall", QUERY),
         ("post", "/hook/recall", QUERY), ("get", "/export", None),
         ("get", "/export?format=json", None), ("get", "/entities", None),
         ("get", "/entities/en_1", None), ("get", "/threads", None),
         ("get", "/threads/th_1", None), ("get", "/profiles", None),
         ("get", "/profiles/Sam", None), ("get", "/graph", None)]


def ask(client, method: str, path: str, body: str | None = None):
    return getattr(client.http, method)(path, headers=AUTH, body=body)


@pytest.mark.parametrize("method,tail,body", READS, ids=[f"{m} {t}" for m, t, _ in READS])
def test_a_read_of_a_space_never_written_is_404_unknown_space(client, method, tail, body):
    resp = ask(client, method, SP + tail, body)
    assert resp.status_code == 404, resp.body
    error = json.loads(resp.body)["error"]
    assert error["code"] == "unknown_space" and "nosuchspace" in error["message"]


def test_every_documented_space_read_says_it_can_be_404():
    paths = openapi_document()["paths"]
    documented = {op["operationId"]: op for item in paths.values() for op in item.values()
                  if isinstance(op, dict) and "operationId" in op}
    assert set(documented) >= SPACE_READS
    assert all("404" in documented[name]["responses"] for name in SPACE_READS)


def test_a_write_makes_the_space_and_its_reads_answer(client, services):
    assert ask(client, "post", SP + "/recall", QUERY).status_code == 404
    put = ask(client, "put", SP + "/sessions/s1/messages", json.dumps({"messages": [MESSAGE]}))
    assert put.status_code == 200
    assert json.loads(ask(client, "post", SP + "/recall", QUERY).body)["cards"]
    saved = ask(client, "post", "/v1/spaces/notes/events", json.dumps({"summary": "a note"}))
    assert saved.status_code == 201
    assert json.loads(ask(client, "get", "/v1/spaces/notes/events").body)["events"]


def test_a_write_elsewhere_counts_at_the_next_read(client, services):
    """Only known spaces are remembered per process: a space written by another process
    (here: the use-case, past the routes) is read at the next request, not a cached 404."""
    assert ask(client, "get", SP + "/events").status_code == 404
    put_messages(services, "nosuchspace", "s1", PutMessagesRequest(
        messages=[MessageIn.model_validate(MESSAGE)]))
    assert ask(client, "get", SP + "/events").status_code == 200


def test_the_gateway_and_mcp_still_answer_on_a_fresh_space(lam, double):
    double.reply_text("Hello!")
    reply = sdk(lam, space="fresh-chat").chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "Do you remember Lisbon?"}])
    assert reply.parse().choices[0].message.content == "Hello!"
    assert reply.headers["X-Annals-Memory"] == "none"
    recalled = Rpc(lam, path="/v1/spaces/fresh-mcp/mcp").ok("recall_memory", query="Lisbon")
    assert recalled["verdict"] == "none" and recalled["cards"] == []


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    services = make_services(tmp_path)
    set_services(services)
    put_messages(services, "tavern", "s1", PutMessagesRequest(
        messages=[MessageIn.model_validate(MESSAGE)]))
    from app import app

    transport = httpx.WSGITransport(app=ChaliceWSGI(app, MAX_BODY_BYTES))

    class InProcess(client_module.AnnalsClient):
        def __init__(self, base_url: str, api_key: str | None = None, **kwargs):
            super().__init__(base_url, api_key, transport=transport, **kwargs)

    monkeypatch.setattr(client_module, "AnnalsClient", InProcess)
    yield
    set_services(None)


@pytest.mark.parametrize("remote", [False, True], ids=["local", "url"])
def test_the_cli_says_a_misspelt_space_and_exits_1(cli_env, remote):
    url = ["--url", "http://annals.test", "--key", API_KEY] if remote else []
    for args in (["recall", "Lisbon", "--space", "taverrn"], ["export", "--space", "taverrn"]):
        out = CliRunner().invoke(main, [*args, *url])
        assert out.exit_code == 1, out.output
        assert "no space 'taverrn'" in out.output
    found = CliRunner().invoke(main, ["recall", "Lisbon", "--space", "tavern", *url])
    assert found.exit_code == 0 and "Lisbon" in found.stdout

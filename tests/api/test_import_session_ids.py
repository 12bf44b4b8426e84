"""Issue 36 item 1: `annals import` of a SillyTavern file named as SillyTavern names them
("Mika - 2026-11-24@20h05m00s.jsonl") makes a session the HTTP API can address — locally and
through --url alike (both read the file with usecases.importing.read_file) — and a Chinese
file name keeps its Chinese (one rule with the web importer: tests/unit/test_session_names.py)."""

from __future__ import annotations

import json
from urllib.parse import quote

import httpx
import pytest
from chalice.test import Client
from click.testing import CliRunner

from chalicelib import client as client_module
from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.cli import main
from chalicelib.local.wsgi import ChaliceWSGI
from chalicelib.wiring import set_services
from tests.conftest import API_KEY, AUTH, make_services, write_jsonl

TAVERN = [{"user_name": "Sam", "character_name": "Mika"},
          {"name": "Sam", "is_user": True, "send_date": "2026-11-24T20:05:00+08:00",
           "mes": "I adopted a kitten today"},
          {"name": "Mika", "is_user": False, "send_date": "2026-11-24T20:06:00+08:00",
           "mes": "What did you name it?"}]


def tavern_file(tmp_path, name: str):
    path = tmp_path / name
    write_jsonl(path, TAVERN)
    return path


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """The CLI and the app on one SQLite data dir."""
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    services = make_services(tmp_path)
    set_services(services)
    yield services
    set_services(None)


@pytest.fixture
def served(data_dir, monkeypatch):
    """`--url http://annals.test` reaches the app in-process (httpx's WSGI transport)."""
    from app import app

    transport = httpx.WSGITransport(app=ChaliceWSGI(app, MAX_BODY_BYTES))

    class InProcess(client_module.AnnalsClient):
        def __init__(self, base_url: str, api_key: str | None = None, **kwargs):
            super().__init__(base_url, api_key, transport=transport, **kwargs)

    monkeypatch.setattr(client_module, "AnnalsClient", InProcess)
    return ["--url", "http://annals.test", "--key", API_KEY]


def imported(*args: str) -> dict:
    out = CliRunner().invoke(main, ["import", *args, "--space", "tavern", "--no-embed"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def deleted_over_http(session: str, seq: int) -> dict:
    from app import app

    with Client(app) as client:
        resp = client.http.delete(f"/v1/spaces/tavern/sessions/{quote(session, safe='')}"
                                  f"/messages/{seq}", headers=AUTH)
    assert resp.status_code == 200, resp.body
    return json.loads(resp.body)["deleted"]


@pytest.mark.parametrize("remote", [False, True], ids=["local", "url"])
def test_a_sillytavern_file_name_becomes_a_session_the_api_addresses(tmp_path, data_dir,
                                                                     served, remote):
    path = tavern_file(tmp_path, "Mika - 2026-11-24@20h05m00s.jsonl")
    report = imported(str(path), *(served if remote else []))
    session = report["sessions"][0]["session"]
    assert session == "Mika-2026-11-24@20h05m00s" and report["sessions"][0]["accepted"] == 2
    gone = deleted_over_http(session, 1)
    assert gone["content"] == "What did you name it?"
    assert f"message:{session}:1" == f"message:{gone['session']}:{gone['seq']}"


@pytest.mark.parametrize("remote", [False, True], ids=["local", "url"])
def test_a_chinese_file_name_keeps_its_chinese(tmp_path, data_dir, served, remote):
    path = tavern_file(tmp_path, "沈砚 - 2026-11-02@20h05m00s.jsonl")
    report = imported(str(path), *(served if remote else []))
    session = report["sessions"][0]["session"]
    assert session == "沈砚-2026-11-02@20h05m00s"
    assert [m.session for m in data_dir.store.get_messages("tavern", session)] == [session] * 2
    assert deleted_over_http(session, 0)["content"] == "I adopted a kitten today"


def test_a_session_given_by_hand_is_checked_before_anything_is_written(tmp_path, data_dir):
    out = CliRunner().invoke(main, ["import", str(tavern_file(tmp_path, "chat.jsonl")),
                                    "--space", "tavern", "--session", "my chat"])
    assert out.exit_code != 0 and "session must be" in out.output
    assert data_dir.store.list_sessions("tavern") == []

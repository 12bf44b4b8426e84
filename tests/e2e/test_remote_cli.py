"""End to end: `annals recall / save / export / import / extract --url` against `annals serve`
in a subprocess (hash embedder), checked with chalicelib.client over real HTTP — and the
example chat host (examples/chat_host.py) run as a script against the server and a stub
model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chalicelib.client import AnnalsAPIError, AnnalsClient
from tests.e2e.server import ANNALS, AnnalsServer, free_port, server_env
from tests.llm_double import ChatDouble

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
MESSAGES = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 3, "role": "user", "speaker": "Sam",
     "content": "I finally booked the flight to Lisbon for my sister's wedding",
     "at": "2026-06-20T09:00:00+08:00"},
]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANNALS_", "OPENAI_"))}
    env.update(extra)
    return env


class RemoteServer(AnnalsServer):
    """`annals serve` on a free port and its own data dir, with the hash embedder; ready when
    made."""

    def __init__(self, data_dir: Path):
        super().__init__(data_dir, env=server_env(data_dir, drop=("ANNALS_", "OPENAI_"),
                                                  ANNALS_EMBEDDER="hash"))
        try:
            self.wait_ready()
        except AssertionError:
            self.stop()
            raise
        self.key = (data_dir / "api_key").read_text().strip()

    def client(self) -> AnnalsClient:
        return AnnalsClient(self.url, self.key, timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = RemoteServer(tmp_path_factory.mktemp("remote") / "data")
    yield srv
    srv.stop()


def annals(*args: str, env: dict[str, str], cwd: Path | None = None,
           ) -> subprocess.CompletedProcess:
    return subprocess.run([str(ANNALS), *args], env=env, cwd=cwd or REPO, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def remote_env(server, tmp_path):
    """The CLI pointed at the server by environment; its local data dir is elsewhere (and
    must stay empty)."""
    return clean_env(ANNALS_URL=server.url, ANNALS_API_KEY=server.key,
                     ANNALS_DATA_DIR=str(tmp_path / "local"), ANNALS_EMBEDDER="hash")


def test_save_recall_and_export_against_a_running_instance(server, remote_env, tmp_path):
    saved = annals("save", "--space", "cli", "奶糖昨天进行了体检，结果一切正常",
                   "--at", "2026-06-14T10:00:00+08:00", "--tag", "cat", "--importance", "8",
                   env=remote_env)
    assert saved.returncode == 0, saved.stderr
    event = json.loads(saved.stdout)
    assert event["kind"] == "note" and event["tags"] == ["cat"] and event["importance"] == 8
    assert event["when"]["start"].startswith("2026-06-14")

    recalled = annals("recall", "--space", "cli", "奶糖体检", env=remote_env)
    assert recalled.returncode == 0, recalled.stderr
    assert f"event:{event['id']}" in recalled.stdout and "[记忆检索]" in recalled.stderr
    as_json = json.loads(annals("recall", "--space", "cli", "奶糖体检", "--json",
                                env=remote_env).stdout)
    assert as_json["recalled_ids"] == [f"event:{event['id']}"]

    markdown = annals("export", "--space", "cli", env=remote_env)
    assert markdown.returncode == 0 and "2026-06" in markdown.stdout
    exported = json.loads(annals("export", "--space", "cli", "--format", "json",
                                 env=remote_env).stdout)
    assert [e["id"] for e in exported["events"]] == [event["id"]]

    with server.client() as client:  # the server has it, the local data dir does not
        assert client.get_event("cli", event["id"]).summary == event["summary"]
        assert "cli" in client.list_spaces().spaces
    assert not (tmp_path / "local" / "annals.db").exists()


def test_import_and_extract_against_a_running_instance(server, remote_env, tmp_path):
    chat = tmp_path / "chat-1.json"
    chat.write_text(json.dumps({"messages": [
        {"role": "user", "name": "Sam", "content": m["content"], "timestamp": m["at"]}
        for m in MESSAGES]}, ensure_ascii=False))
    first = annals("import", str(chat), "--space", "imported", "--extract", env=remote_env)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["sessions"] == [{"session": "chat-1", "accepted": 3, "unchanged": 0,
                                   "changed": 0}]
    assert report["events_extracted"] >= 2
    again = json.loads(annals("import", str(chat), "--space", "imported",
                              env=remote_env).stdout)
    assert again["sessions"][0]["unchanged"] == 3  # idempotent, as locally

    with server.client() as client:
        # GET …/events lists events and notes (the session summary: kind=summary)
        events = list(client.iter_events("imported"))
        assert {e.kind for e in events} == {"event"}
        assert len(events) == report["events_extracted"]
        assert {s.session for e in events for s in e.sources} == {"chat-1"}
        assert client.stats("imported").messages == 3
    extract = annals("extract", "--space", "imported", env=remote_env)
    assert extract.returncode == 0 and json.loads(extract.stdout)["events"] == []


def test_import_names_the_roles_against_a_running_instance(server, remote_env, tmp_path):
    chat = tmp_path / "tavern.jsonl"
    chat.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in [
        {"user_name": "User", "character_name": "{{char}}"},  # placeholders only
        {"name": "User", "is_user": True, "send_date": "2026-06-01T20:00:00+08:00",
         "mes": "我今天领养了一只橘猫，取名叫奶糖"},
        {"is_user": False, "send_date": "2026-06-01T20:01:00+08:00", "mes": "好可爱的名字！"},
    ]))
    done = annals("import", str(chat), "--space", "named", "--user-name", "小明",
                  "--assistant-name", "Aki", "--extract", env=remote_env)
    assert done.returncode == 0, done.stderr
    with server.client() as client:
        (event,) = client.iter_events("named")
        assert event.participants == ["小明"]
        evidence = client.get_event("named", event.id, evidence=True).evidence
        assert [m.speaker for m in evidence] == ["小明"]


def test_url_and_key_flags_and_clear_errors(server, tmp_path):
    env = clean_env(ANNALS_DATA_DIR=str(tmp_path / "local"))
    ok = annals("save", "--space", "flags", "Sam prefers window seats", "--url", server.url,
                "--key", server.key, env=env)
    assert ok.returncode == 0, ok.stderr

    wrong = annals("recall", "--space", "flags", "seats", "--url", server.url, "--key", "nope",
                   env=env)
    assert wrong.returncode == 1
    assert "401 unauthorized: invalid API key" in wrong.stderr
    assert "Traceback" not in wrong.stderr

    down = annals("export", "--space", "flags", "--url", f"http://127.0.0.1:{free_port()}",
                  "--key", "k", env=env)
    assert down.returncode == 1 and "cannot reach http://127.0.0.1:" in down.stderr
    assert "Traceback" not in down.stderr

    keyless = annals("recall", "--space", "flags", "seats", "--url",
                     "https://annals.example.invalid", env=env)
    assert keyless.returncode == 2 and "needs an API key" in keyless.stderr

    with server.client() as admin:
        reader = admin.create_key(spaces=["flags"], access="read", label="e2e").key
    denied = annals("save", "--space", "flags", "x", "--url", server.url, "--key", reader,
                    env=env)
    assert denied.returncode == 1 and "403 forbidden" in denied.stderr
    allowed = annals("recall", "--space", "flags", "window seats", "--url", server.url,
                     "--key", reader, env=env)
    assert allowed.returncode == 0 and "window seats" in allowed.stdout


def test_a_loopback_url_finds_the_data_dirs_key(server):
    """After `make run`, `annals recall --url http://127.0.0.1:8000` in the same directory
    needs no key: the one the server generated is read from the data dir."""
    env = clean_env(ANNALS_DATA_DIR=str(server.data_dir), ANNALS_URL=server.url)
    out = annals("save", "--space", "loop", "a memory saved without --key", env=env)
    assert out.returncode == 0, out.stderr


def test_without_a_url_the_cli_works_on_the_local_data_dir(server, tmp_path):
    env = clean_env(ANNALS_DATA_DIR=str(tmp_path / "local"), ANNALS_EMBEDDER="hash",
                    ANNALS_API_KEY=server.key)  # a key alone does not mean remote
    saved = annals("save", "--space", "offline", "奶糖爱吃三文鱼", env=env)
    assert saved.returncode == 0, saved.stderr
    event = json.loads(saved.stdout)
    exported = json.loads(annals("export", "--space", "offline", "--format", "json",
                                 env=env).stdout)
    assert [e["id"] for e in exported["events"]] == [event["id"]]
    with server.client() as client:
        assert "offline" not in client.list_spaces().spaces
        with pytest.raises(AnnalsAPIError) as missing:
            client.get_event("offline", event["id"])
        assert missing.value.status == 404


def test_the_example_chat_host_runs_against_the_server(server):
    with server.client() as client:
        client.put_messages("host", "s1", MESSAGES)
        assert client.extract("host").events
        before = client.hook_recall("host", "还记得奶糖体检的事吗？", window="chat-e2e")
        assert before.verdict == "hit" and before.recalled_ids

    with ChatDouble() as model:
        model.reply_text("奶糖体检一切正常，放心吧！").reply_text("Lisbon, for the wedding.")
        env = clean_env(ANNALS_URL=server.url, ANNALS_API_KEY=server.key,
                        OPENAI_BASE_URL=model.url, OPENAI_API_KEY="stub",
                        OPENAI_MODEL="stub-model")
        run = subprocess.run(
            [sys.executable, str(REPO / "examples" / "chat_host.py"), "--space", "host",
             "--chat", "chat-e2e", "还记得奶糖体检的事吗？", "Where is Sam flying?"],
            env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == ["奶糖体检一切正常，放心吧！", "Lisbon, for the wedding."]
        assert "[annals] recall: hit" in run.stderr
        assert "[annals] delivery reported" in run.stderr
        system = model.requests[0]["messages"][0]["content"]
        assert all(ref in system for ref in before.recalled_ids)  # injected as recalled
        assert model.requests[0]["model"] == "stub-model"

    with server.client() as client:
        after = client.hook_recall("host", "还记得奶糖体检的事吗？", window="chat-e2e")
        assert not set(after.recalled_ids) & set(before.recalled_ids)  # delivered: resting
        assert client.stats("host").messages == len(MESSAGES) + 4  # the two exchanges


def test_the_example_chat_host_reports_nothing_when_the_model_fails(server):
    with ChatDouble() as model:
        model.reply_error(400, "bad request")  # not retried by the SDK
        env = clean_env(ANNALS_URL=server.url, ANNALS_API_KEY=server.key,
                        OPENAI_BASE_URL=model.url, OPENAI_API_KEY="stub")
        run = subprocess.run(
            [sys.executable, str(REPO / "examples" / "chat_host.py"), "--space", "host2",
             "--chat", "chat-fail", "hello"], env=env, capture_output=True, text=True,
            timeout=120)
    assert run.returncode == 1
    assert "the model failed" in run.stderr and "Traceback" not in run.stderr
    with server.client() as client:
        assert client.stats("host2").messages == 0

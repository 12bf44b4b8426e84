"""Background jobs against `annals serve` in a subprocess (hash embedder, scheduler off): a
700-message imported conversation is answered 202 in under 10 s and its job runs in the
server's worker; a SIGTERM part-way leaves the job queued and the restarted server finishes
it, with the events a synchronous run writes. `annals extract --url` and `annals import
--extract --url` show the job's progress on stderr."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import httpx
import pytest

from chalicelib.usecases.extract import run_extraction
from tests.conftest import make_services
from tests.e2e.server import ANNALS, AnnalsServer, server_env
from tests.synthetic import conversation, fingerprint, put_all

pytestmark = pytest.mark.e2e

SP = "/v1/spaces/me"


def start(data) -> tuple[AnnalsServer, httpx.Client]:
    server = AnnalsServer(data, env=server_env(data, drop=("ANNALS_", "OPENAI_"),
                                               ANNALS_EMBEDDER="hash"),
                          stdout=subprocess.PIPE)
    server.wait_ready()
    key = (data / "api_key").read_text().strip()
    return server, httpx.Client(base_url=server.url, timeout=60,
                                headers={"Authorization": f"Bearer {key}"})


def follow(http: httpx.Client, location: str, until, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = http.get(location).json()
        if until(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job never got there: {job}")


def test_700_messages_answer_202_at_once_and_the_job_survives_a_restart(tmp_path):
    data = tmp_path / "data"
    chat = conversation()  # 28 sessions × 25 = 700 messages
    server, http = start(data)
    try:
        for session, messages in chat:
            assert http.put(f"{SP}/sessions/{session}/messages",
                            json={"messages": messages}).status_code == 200
        began = time.monotonic()
        resp = http.post(f"{SP}/extract", json={})
        answered = time.monotonic() - began
        assert answered < 10, answered
        assert resp.status_code == 202, resp.text
        location = resp.headers["Location"]
        assert location == f"{SP}/jobs/{resp.json()['job']['id']}"
        # Recall is not held up while the job runs (a read: it passes the gate first).
        running = follow(http, location, lambda j: j["progress"]["done"] > 0)
        assert http.post(f"{SP}/recall", json={"query": "pottery class"}).status_code == 200
    finally:
        http.close()
        server.stop(signal.SIGTERM)
    assert server.proc.returncode == 0
    stopped = running["status"] != "done"

    again, http = start(data)  # the same data dir: the queued job goes on
    try:
        done = follow(http, location, lambda j: j["status"] in ("done", "failed"))
        assert done["status"] == "done", done
        assert done["progress"]["done"] == done["progress"]["total"] == 700
        if stopped:
            assert done["started_at"] < done["finished_at"]
        events = http.get(location, params={"events": "true"}).json()["events"]
        jobs = http.get(f"{SP}/jobs").json()["jobs"]
        assert [j["id"] for j in jobs] == [done["id"]]
    finally:
        http.close()
        again.stop()
    reference = make_services(tmp_path / "reference", store="memory")
    put_all(reference, "me", chat)
    assert fingerprint(events) == fingerprint(run_extraction(reference, "me"))


def test_cli_extract_and_import_over_http_show_the_jobs_progress(tmp_path):
    data = tmp_path / "data"
    server, http = start(data)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANNALS_", "OPENAI_"))}
    env.update(ANNALS_URL=server.url, ANNALS_API_KEY=(data / "api_key").read_text().strip(),
               ANNALS_DATA_DIR=str(tmp_path / "local"), ANNALS_EMBEDDER="hash")
    try:
        for session, messages in conversation(sessions=3, per_session=20):
            http.put(f"{SP}/sessions/{session}/messages", json={"messages": messages})
        out = subprocess.run([str(ANNALS), "extract", "--space", "me"], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        events = json.loads(out.stdout)["events"]
        assert events and "extracting: 0/60 messages, 0 events (queued)" in out.stderr
        assert f"extracting: 60/60 messages, {len(events)} events (done)" in out.stderr

        chat = tmp_path / "chat.json"
        chat.write_text(json.dumps([
            {"role": m["role"], "name": m["speaker"], "content": m["content"],
             "timestamp": m["at"]} for m in conversation(sessions=1, per_session=50)[0][1]]))
        out = subprocess.run([str(ANNALS), "import", str(chat), "--space", "other",
                              "--extract"], env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["events_extracted"] > 0
        assert "extracting: 50/50 messages" in out.stderr
    finally:
        http.close()
        server.stop()
    assert not (tmp_path / "local").exists()  # all of it on the server

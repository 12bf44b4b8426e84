"""POST …/extract never hangs a request: a small backlog answers 200 with the events, a larger
one (or "wait": false) 202 with a background job and a Location; GET …/jobs/{id} and
GET …/jobs follow it (pydantic-checked queries, JSON errors, key scopes), and the job's events
are a synchronous run's (same ids, same text)."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.local.worker import JobWorker
from chalicelib.local.wsgi import ChaliceWSGI
from chalicelib.usecases import background
from chalicelib.usecases.extract import run_extraction, run_extraction_result
from chalicelib.wiring import set_services
from tests.conftest import API_KEY, AUTH, make_services
from tests.synthetic import conversation, fingerprint, put_all

SP = "/v1/spaces/me"
SMALL = conversation(sessions=2, per_session=10)  # 20 messages: under the default 30


def body(resp):
    return json.loads(resp.body)


def put_chat(client, chat, space_path=SP):
    for session, messages in chat:
        resp = client.http.put(f"{space_path}/sessions/{session}/messages", headers=AUTH,
                               body=json.dumps({"messages": messages}))
        assert resp.status_code == 200, resp.body


def extract(client, payload: dict | None = None, headers=AUTH):
    return client.http.post(f"{SP}/extract", headers=headers,
                            body=json.dumps(payload or {}))


def wait_done(client, job_id: str, worker: JobWorker) -> dict:
    worker.run_pending()
    resp = client.http.get(f"{SP}/jobs/{job_id}?events=true", headers=AUTH)
    assert resp.status_code == 200, resp.body
    return body(resp)


def test_a_small_backlog_is_extracted_in_the_request(client, services):
    put_chat(client, SMALL)
    resp = extract(client)
    assert resp.status_code == 200
    assert body(resp)["events"] and "job" not in body(resp)
    assert background.list_jobs(services, "me") == []  # no job for a sync run


def test_a_large_backlog_answers_202_with_a_job_and_its_location(client, services):
    services.settings = services.settings.model_copy(update={"extract_sync_max_messages": 15})
    put_chat(client, SMALL)
    resp = extract(client)
    assert resp.status_code == 202
    job = body(resp)["job"]
    assert resp.headers["Location"] == f"{SP}/jobs/{job['id']}"
    assert job["kind"] == "extract" and job["status"] == "queued"
    assert job["params"] == {"session": None}
    assert job["progress"] == {"done": 0, "total": 20, "unit": "messages", "events": 0}
    again = extract(client)  # asked again before it started: the same job
    assert again.status_code == 202 and body(again)["job"]["id"] == job["id"]

    queued = body(client.http.get(resp.headers["Location"], headers=AUTH))
    assert queued["status"] == "queued" and queued["events"] is None
    done = wait_done(client, job["id"], JobWorker(services))
    assert done["status"] == "done" and done["error"] is None
    assert done["progress"]["done"] == 20 and done["progress"]["events"] == len(done["events"])
    assert [e["id"] for e in done["events"]] == done["result"]["events"]
    assert done["started_at"] <= done["finished_at"]
    listed = body(client.http.get(f"{SP}/jobs", headers=AUTH))["jobs"]
    assert [j["id"] for j in listed] == [job["id"]] and listed[0]["events"] is None

    nothing_left = extract(client)  # extracted: nothing pending, answered at once
    assert nothing_left.status_code == 200 and body(nothing_left)["events"] == []


def test_the_job_writes_the_events_a_synchronous_run_writes(client, services, tmp_path):
    put_chat(client, SMALL)
    resp = extract(client, {"wait": False})  # forced into a job, small as it is
    assert resp.status_code == 202
    done = wait_done(client, body(resp)["job"]["id"], JobWorker(services))
    reference = make_services(tmp_path / "ref", store="memory")
    put_all(reference, "me", SMALL)
    sync = run_extraction_result(reference, "me")
    assert fingerprint(done["events"]) == fingerprint(sync.events)
    assert done["result"]["drafts"] == sync.drafts.as_dict()  # what the 200 answer says


def test_one_session_is_counted_alone(client, services):
    services.settings = services.settings.model_copy(update={"extract_sync_max_messages": 10})
    put_chat(client, SMALL)
    resp = extract(client, {"session": "1"})  # 10 messages: in the request
    assert resp.status_code == 200 and body(resp)["events"]
    job = body(extract(client, {"session": "2", "wait": False}))["job"]
    assert job["params"] == {"session": "2"} and job["progress"]["total"] == 10


def test_a_failed_job_says_why(client, services, monkeypatch):
    put_chat(client, SMALL)
    job = body(extract(client, {"wait": False}))["job"]
    monkeypatch.setattr(background, "extract_session_result",
                        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("model down")))
    failed = wait_done(client, job["id"], JobWorker(services))
    assert failed["status"] == "failed" and failed["error"] == "RuntimeError: model down"
    assert failed["events"] == []


@pytest.mark.parametrize(("path", "status", "code"), [
    (f"{SP}/jobs/job_nope", 404, "not_found"),
    (f"{SP}/jobs/bad%20id", 400, "invalid_job_id"),
    (f"{SP}/jobs?limit=0", 422, "validation_error"),
    (f"{SP}/jobs?status=sleeping", 422, "validation_error"),
    (f"{SP}/jobs?color=red", 422, "validation_error"),
    ("/v1/spaces/bad space/jobs", 400, "invalid_space"),
])
def test_job_routes_answer_errors_as_json(client, path, status, code):
    resp = client.http.get(path, headers=AUTH)
    assert resp.status_code == status, resp.body
    assert body(resp)["error"]["code"] == code


def test_the_extract_body_is_checked(client):
    for payload, status in (({"wait": "later"}, 422), ({"sessions": "s1"}, 422),
                            ({"session": "bad id"}, 422)):
        assert extract(client, payload).status_code == status, payload


def test_a_read_key_follows_jobs_but_cannot_start_one(client, services):
    put_chat(client, SMALL)
    job = body(extract(client, {"wait": False}))["job"]

    def key(**spec):
        made = client.http.post("/v1/keys", headers=AUTH, body=json.dumps(spec))
        return {"Authorization": f"Bearer {body(made)['key']}",
                "Content-Type": "application/json"}

    reader = key(spaces=["me"], access="read")
    assert client.http.get(f"{SP}/jobs/{job['id']}", headers=reader).status_code == 200
    assert client.http.get(f"{SP}/jobs", headers=reader).status_code == 200
    assert extract(client, {}, headers=reader).status_code == 403
    stranger = key(spaces=["other"], access="write")
    assert client.http.get(f"{SP}/jobs/{job['id']}", headers=stranger).status_code == 403
    writer = key(spaces=["me"], access="write")
    assert extract(client, {"wait": False}, headers=writer).status_code == 202


def test_jobs_are_per_space(client, services):
    put_chat(client, SMALL)
    job = body(extract(client, {"wait": False}))["job"]
    other = client.http.get(f"/v1/spaces/other/jobs/{job['id']}", headers=AUTH)
    assert other.status_code == 404
    assert body(client.http.get("/v1/spaces/other/jobs", headers=AUTH))["jobs"] == []


# ------------------------------------------------------------------ as `annals serve` runs it


@pytest.fixture
def served(tmp_path):
    """The WSGI app `annals serve` runs (traffic gate included) with its job worker, on the
    embedded SQLite stores, through httpx. (The 700-message figure against the real server:
    tests/e2e/test_jobs_serve.py.)"""
    from app import app

    services = make_services(tmp_path)
    set_services(services)
    worker = JobWorker(services, services.traffic, poll_seconds=0.5)
    worker.start()
    transport = httpx.WSGITransport(app=ChaliceWSGI(app, MAX_BODY_BYTES))
    with httpx.Client(transport=transport, base_url="http://annals.test", timeout=60,
                      headers={"Authorization": f"Bearer {API_KEY}"}) as http:
        yield services, http
    worker.stop()
    set_services(None)


def test_through_the_wsgi_app_the_worker_runs_the_job_at_once(served, tmp_path):
    _services, http = served
    chat = conversation(sessions=4, per_session=25)  # 100 messages: over the default 30
    for session, messages in chat:
        assert http.put(f"{SP}/sessions/{session}/messages",
                        json={"messages": messages}).status_code == 200
    started = time.monotonic()
    resp = http.post(f"{SP}/extract", json={})
    assert time.monotonic() - started < 10
    assert resp.status_code == 202, resp.text
    assert resp.json()["job"]["progress"]["total"] == 100
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        now = http.get(resp.headers["Location"]).json()
        if now["status"] in ("done", "failed"):
            break
        time.sleep(0.1)
    assert now["status"] == "done", now
    done = http.get(resp.headers["Location"], params={"events": "true"}).json()
    reference = make_services(tmp_path / "reference", store="memory")
    put_all(reference, "me", chat)
    assert fingerprint(done["events"]) == fingerprint(run_extraction(reference, "me"))

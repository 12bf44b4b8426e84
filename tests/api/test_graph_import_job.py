"""POST …/graph does the bounded part in the request (the writes) and indexes a large
document as a background job: 202, the job, Location; the job indexes every event of the
document, in steps, and a small document is still indexed in the request (200)."""

from __future__ import annotations

import json

from chalicelib.usecases import background
from chalicelib.usecases.graph_import import IMPORT_INLINE_EVENTS, IMPORT_STEP
from tests.conftest import AUTH

SP = "/v1/spaces/imp"


def graph(n: int, summary: str = "We booked the Ryokan Kiku in Kyoto") -> dict:
    when = {"start": "2026-05-01T00:00:00Z", "end": "2026-05-02T00:00:00Z"}
    return {"events": [{"id": f"ev_{i:03d}", "space": "other", "title": f"Trip note {i}",
                        "summary": f"{summary} (note {i})", "when": when,
                        "created_at": "2026-05-01T00:00:00Z",
                        "updated_at": "2026-05-01T00:00:00Z"} for i in range(n)]}


def recall_refs(client) -> list[str]:
    resp = client.http.post(f"{SP}/recall", headers=AUTH, body=json.dumps(
        {"query": "Ryokan Kiku Kyoto", "max_cards": 50, "min_relevance": 0}))
    return [c["ref"] for c in json.loads(resp.body)["cards"]]


def test_a_large_import_is_written_now_and_indexed_by_a_job(client, services):
    n = 3 * IMPORT_STEP + 1
    resp = client.http.post(SP + "/graph", headers=AUTH, body=json.dumps(graph(n)))
    assert resp.status_code == 202, resp.body
    out = json.loads(resp.body)
    assert out["events_created"] == n
    job = out["job"]
    assert job["kind"] == "import-index" and job["status"] == "queued"
    assert job["progress"]["total"] == n
    assert resp.headers["Location"] == f"{SP}/jobs/{job['id']}"
    stored = json.loads(client.http.get(SP + "/events?limit=500", headers=AUTH).body)
    assert len(stored["events"]) == n  # written in the request
    assert recall_refs(client) == []  # not indexed yet

    steps = []
    done = background.run(services, "imp", job["id"], on_progress=lambda j: steps.append(
        j.progress.done))
    assert done.status == "done" and done.progress.done == n
    assert done.result == {"indexed": n}
    assert [s for s in steps if s][:3] == [IMPORT_STEP, 2 * IMPORT_STEP, 3 * IMPORT_STEP]
    assert len(recall_refs(client)) > 0


def test_a_retried_import_indexes_the_existing_events_too(client, services):
    """A first answer lost after the writes: the retry creates nothing, yet its job indexes
    every event of the document."""
    doc = graph(IMPORT_INLINE_EVENTS + 4)
    first = json.loads(client.http.post(SP + "/graph", headers=AUTH, body=json.dumps(doc)).body)
    again = client.http.post(SP + "/graph", headers=AUTH, body=json.dumps(doc))
    out = json.loads(again.body)
    assert again.status_code == 202 and out["events_created"] == 0
    assert out["events_existing"] == len(doc["events"])
    assert out["job"]["id"] != first["job"]["id"]
    background.run(services, "imp", out["job"]["id"])
    assert len(recall_refs(client)) > 0


def test_a_small_import_is_indexed_in_the_request(client):
    resp = client.http.post(SP + "/graph", headers=AUTH, body=json.dumps(graph(2)))
    assert resp.status_code == 200
    assert json.loads(resp.body)["job"] is None
    assert len(recall_refs(client)) > 0


def test_long_summaries_make_a_job_even_when_few(client):
    resp = client.http.post(SP + "/graph", headers=AUTH,
                            body=json.dumps(graph(3, summary="Kyoto " * 660)))
    assert resp.status_code == 202

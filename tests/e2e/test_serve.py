"""End to end: `annals serve` as a subprocess on a free port, spoken to over real HTTP, with the
default bundled e5 embedder — then stopped and started again on the same data dir."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.server import AnnalsServer, server_env

pytestmark = pytest.mark.e2e

SP = "/v1/spaces/e2e"
MESSAGES = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 3, "role": "user", "speaker": "Sam",
     "content": "I started learning the cello with a teacher downtown",
     "at": "2026-06-18T09:00:00+08:00"},
    {"seq": 4, "role": "user", "speaker": "Sam",
     "content": "I finally booked the flight to Lisbon for my sister's wedding",
     "at": "2026-06-20T09:00:00+08:00"},
]


class Server(AnnalsServer):
    """The default bundled e5 embedder; what it prints is kept (`out`); SIGINT stops it."""

    stop_signal = signal.SIGINT

    def __init__(self, data_dir: Path):
        super().__init__(data_dir, stdout=subprocess.PIPE)


def test_serve_speaks_http_and_keeps_data_across_restarts(tmp_path):
    server = Server(tmp_path / "data")
    try:
        server.wait_ready()
        key = (tmp_path / "data" / "api_key").read_text().strip()
        auth = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=server.url, timeout=30) as http:
            assert http.get(SP + "/events").status_code == 401
            put = http.put(SP + "/sessions/s1/messages", headers=auth,
                           json={"messages": MESSAGES})
            assert put.json()["accepted"] == 4
            bad = http.put(SP + "/sessions/s1/messages", headers=auth, content=b"{oops")
            assert bad.status_code == 400 and bad.json()["error"]["code"] == "malformed_json"
            events = http.post(SP + "/extract", headers=auth, json={}).json()["events"]
            assert {s["seq_start"] for e in events for s in e["sources"]} >= {1, 2, 3, 4}
            recall = http.post(SP + "/recall", headers=auth, json={"query": "奶糖体检"}).json()
            assert "体检" in recall["cards"][0]["text"]
            english = http.post(SP + "/recall", headers=auth,
                                json={"query": "when is the wedding trip?"}).json()
            assert "Lisbon" in english["cards"][0]["text"]
            unknown = http.get("/v1/nowhere", headers=auth)
            assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
            huge = http.put(SP + "/sessions/s1/messages", headers=auth,
                            content=b"{" + b" " * (3 * 1024 * 1024) + b"}")
            assert huge.status_code == 413 and "error" in huge.json()
            big_header = http.get(SP + "/events", headers={**auth, "X-Big": "x" * 300_000})
            assert big_header.status_code == 431 and "error" in big_header.json()
    finally:
        err = server.stop()
    assert re.search(r"generated an API key .*\n\s+ak_", err), err

    again = Server(tmp_path / "data")
    try:
        again.wait_ready()
        with httpx.Client(base_url=again.url, timeout=30,
                          headers={"Authorization": f"Bearer {key}"}) as http:
            listed = http.get(SP + "/events").json()["events"]
            assert len([e for e in listed if e["kind"] == "event"]) == len(events)
            recall = http.post(SP + "/recall", json={"query": "奶糖体检"}).json()
            assert "体检" in recall["cards"][0]["text"]
            md = http.get(SP + "/export").text
            assert "2026-06" in md and "├─" in md
    finally:
        err = again.stop(signal.SIGTERM)
    assert again.proc.returncode == 0 and "Annals stopped" in again.out  # graceful on SIGTERM
    assert "generated an API key" not in err  # the kept key is reused, not replaced


def test_sigterm_lets_a_request_in_flight_finish(tmp_path):
    """SIGTERM while an extraction runs: the request still gets its whole answer, the server
    exits 0 without a traceback (waitress's own close() shut its wake-up pipe under a worker
    still answering: EBADF, and the answer was lost)."""
    data = tmp_path / "data"
    # 2000 messages in the request (by default so many would be a background job)
    # (the rules-only extractor: what is measured is the shutdown, not e5's judging; and a
    # drain long enough for a loaded 2-core box: the test is that the answer is not lost)
    server = AnnalsServer(data, env=server_env(data, ANNALS_EMBEDDER="hash",
                                               ANNALS_EXTRACT_SYNC_MAX_MESSAGES="100000",
                                               ANNALS_EXTRACT_SYNC_MAX_CHARS="1000000000",
                                               ANNALS_REQUEST_SECONDS="0",
                                               ANNALS_SALIENCE="rules",
                                               ANNALS_DRAIN_SECONDS="120"),
                          stdout=subprocess.PIPE)
    server.wait_ready()
    key = (data / "api_key").read_text().strip()
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=server.url, timeout=60, headers=auth) as http:
        for s in range(2):
            batch = [{"seq": i, "role": "user" if i % 2 == 0 else "assistant",
                      "speaker": "Sam" if i % 2 == 0 else "Aria",
                      "content": f"On day {i} I booked a lesson number {i} for the cello "
                                 f"and paid {i * 3} euros at the shop on street {i}",
                      "at": "2026-06-20T09:00:00+08:00"} for i in range(1000)]
            assert http.put(f"{SP}/sessions/s{s}/messages",
                            json={"messages": batch}).status_code == 200
        answer: dict = {}

        def extract() -> None:
            try:
                answer["response"] = http.post(SP + "/extract", json={})
            except httpx.HTTPError as exc:
                answer["error"] = repr(exc)

        worker = threading.Thread(target=extract)
        worker.start()
        time.sleep(0.3)  # the extraction is under way
        server.proc.send_signal(signal.SIGTERM)
        worker.join(timeout=60)
    out, err = server.proc.communicate(timeout=30)
    assert "error" not in answer, (answer, err)
    assert answer["response"].status_code == 200
    assert len(answer["response"].json()["events"]) > 100
    assert server.proc.returncode == 0 and "Traceback" not in err, err
    assert "Annals stopped" in out

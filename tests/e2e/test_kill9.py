"""kill -9 during writes, then restart on the same data dir: every batch the server
acknowledged (2xx) is there whole, and no batch is there in part.

Four writers PUT numbered batches of messages into their own sessions of two spaces as fast
as they can; the server is SIGKILLed while they write (no shutdown handler runs). A batch
whose request failed may or may not have landed — but if any of its messages is stored, all
of them must be, with the content that was sent. Then the restarted server still answers a
keyword recall for an acknowledged batch, and takes new writes.
"""

from __future__ import annotations

import signal
import sqlite3
import threading
import time

import httpx
import pytest

from tests.e2e.test_serve import Server

pytestmark = pytest.mark.e2e

BATCH = 8
WRITERS = [("k9a", "w0"), ("k9a", "w1"), ("k9b", "w2"), ("k9b", "w3")]


def batch(writer: str, n: int) -> list[dict]:
    return [{"seq": n * BATCH + i + 1, "role": "user", "speaker": "Ana",
             "content": f"{writer} batch {n} line {i} marker{writer}x{n}",
             "at": f"2026-06-{1 + n % 28:02d}T10:{i:02d}:00+00:00"} for i in range(BATCH)]


def write_until_killed(url: str, key: str, space: str, writer: str, acked: list[int],
                       tried: list[int], stop: threading.Event) -> None:
    with httpx.Client(base_url=url, timeout=10,
                      headers={"Authorization": f"Bearer {key}"}) as http:
        n = 0
        while not stop.is_set():
            tried.append(n)
            try:
                r = http.put(f"/v1/spaces/{space}/sessions/{writer}/messages",
                             json={"messages": batch(writer, n)})
            except httpx.TransportError:
                return  # the server is gone
            if r.status_code // 100 == 2:
                acked.append(n)
            n += 1


def test_kill9_mid_write_loses_no_acknowledged_batch_and_leaves_none_partial(tmp_path):
    data = tmp_path / "data"
    server = Server(data)
    server.wait_ready()
    key = (data / "api_key").read_text().strip()
    acked = {w: [] for _, w in WRITERS}
    tried = {w: [] for _, w in WRITERS}
    stop = threading.Event()
    threads = [threading.Thread(target=write_until_killed,
                                args=(server.url, key, space, w, acked[w], tried[w], stop))
               for space, w in WRITERS]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while sum(map(len, acked.values())) < 60 and time.monotonic() < deadline:
        time.sleep(0.05)
    server.proc.send_signal(signal.SIGKILL)  # mid-write: the writers are still sending
    server.proc.wait(timeout=10)
    stop.set()
    for t in threads:
        t.join(timeout=20)
    server.proc.stdout.close()
    server.proc.stderr.close()
    assert sum(map(len, acked.values())) >= 60, acked
    in_flight = sum(len(tried[w]) - len(acked[w]) for w in tried)
    print(f"[kill9] {sum(map(len, acked.values()))} batches acknowledged, {in_flight} "
          f"in flight at the kill")

    again = Server(data)
    try:
        again.wait_ready()
        with httpx.Client(base_url=again.url, timeout=30,
                          headers={"Authorization": f"Bearer {key}"}) as http:
            # No route lists raw messages: read the store file (WAL: a reader beside the
            # running server is safe).
            db = sqlite3.connect(f"file:{data / 'annals.db'}?mode=ro", uri=True)
            for space, writer in WRITERS:
                stored = dict(db.execute(
                    "SELECT seq, content FROM messages WHERE space=? AND session=?",
                    (space, writer)).fetchall())
                for n in tried[writer]:
                    sent = {m["seq"]: m["content"] for m in batch(writer, n)}
                    present = [s for s in sent if s in stored]
                    if n in acked[writer]:
                        assert len(present) == BATCH, f"{writer} acknowledged batch {n} lost"
                    assert len(present) in (0, BATCH), f"{writer} batch {n} partial"
                    assert all(stored[s] == sent[s] for s in present)
                assert len(stored) % BATCH == 0
            db.close()
            space, writer = WRITERS[0]
            last = acked[writer][-1]
            found = http.post(f"/v1/spaces/{space}/recall",
                              json={"query": f"marker{writer}x{last}", "min_relevance": 0,
                                    "max_cards": 5}).json()
            assert any(f"marker{writer}x{last}" in c["text"] for c in found["cards"]), found
            put = http.put(f"/v1/spaces/{space}/sessions/after/messages",
                           json={"messages": batch("after", 0)})
            assert put.status_code == 200 and put.json()["accepted"] == BATCH
    finally:
        again.stop(signal.SIGTERM)

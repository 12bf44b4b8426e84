"""The local server's traffic gate: recall first, a bounded number of writes at once."""

from __future__ import annotations

import threading
import time

from chalicelib.local.wsgi import is_read
from chalicelib.usecases.traffic import PriorityGate


class Occupancy:
    """Threads inside a section: how many at once at most, and how many stays ended."""

    def __init__(self) -> None:
        self.inside = self.most = self.done = 0
        self._lock = threading.Lock()

    def stay(self, seconds: float) -> None:
        with self._lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(seconds)
        with self._lock:
            self.inside -= 1
            self.done += 1


def test_at_most_max_writers_write_at_once():
    gate = PriorityGate(max_writers=2)
    writes = Occupancy()

    def write():
        with gate.writing():
            writes.stay(0.02)

    threads = [threading.Thread(target=write) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert writes.most == 2


def test_a_write_waits_for_a_running_recall_but_not_forever():
    gate = PriorityGate(max_writers=2, max_write_wait=0.2)
    order: list[str] = []
    reading = threading.Event()
    release = threading.Event()

    def read():
        with gate.reading():
            reading.set()
            release.wait(1)
            order.append("read done")

    reader = threading.Thread(target=read)
    reader.start()
    reading.wait(1)
    writer = threading.Thread(target=lambda: (gate.writing().__enter__(),
                                              order.append("write in")))
    writer.start()
    time.sleep(0.05)
    assert order == []  # held back while the recall runs
    release.set()
    reader.join()
    writer.join(1)
    assert order == ["read done", "write in"]


def test_a_long_recall_cannot_starve_writers():
    gate = PriorityGate(max_writers=1, max_write_wait=0.05)
    with gate.reading():
        started = time.monotonic()
        with gate.writing():
            waited = time.monotonic() - started
    assert 0.04 <= waited < 0.5


def test_recalls_never_wait_for_writers():
    gate = PriorityGate(max_writers=1)
    with gate.writing():
        started = time.monotonic()
        with gate.reading():
            assert time.monotonic() - started < 0.01


def test_reads_and_writes_are_told_apart_by_method_and_route():
    assert is_read("GET", "/v1/spaces/s/events")
    assert is_read("POST", "/v1/spaces/s/recall")
    assert not is_read("POST", "/v1/spaces/s/extract")
    assert not is_read("PUT", "/v1/spaces/s/sessions/c/messages")
    assert not is_read("DELETE", "/v1/spaces/s/events/e1")


def test_no_writer_is_left_waiting_when_slots_free_up_one_at_a_time():
    """A finishing writer wakes one waiting writer, not all: under a mix of recalls and many
    writers every write still gets in (no lost wake-up), never more than the limit at once."""
    gate = PriorityGate(max_writers=2, max_write_wait=0.01)
    writes = Occupancy()
    stop = threading.Event()

    def write():
        for _ in range(30):
            with gate.writing():
                writes.stay(0.0005)

    def read():
        while not stop.is_set():
            with gate.reading():
                time.sleep(0.002)
            time.sleep(0.001)

    readers = [threading.Thread(target=read) for _ in range(2)]
    writers = [threading.Thread(target=write) for _ in range(12)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(20)
    stop.set()
    for t in readers:
        t.join(5)
    assert writes.done == 12 * 30 and not any(t.is_alive() for t in writers)
    assert writes.most == 2


def test_recalls_take_turns_between_keys():
    """A key's recalls beyond `max_readers` running wait (without the CPU) until one of its own
    ends; another key's first recall never waits, however many the busy key has queued."""
    gate = PriorityGate(max_readers=2)
    busy = Occupancy()
    release = threading.Event()

    def busy_read():
        with gate.reading("busy"):
            busy.stay(0)
            release.wait(2)

    threads = [threading.Thread(target=busy_read) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    assert gate._reading == {"busy": 2}  # two run, two wait
    began = time.monotonic()
    with gate.reading("quiet"):  # the other key goes at once, beside the two
        assert gate._reading == {"busy": 2, "quiet": 1}
    assert time.monotonic() - began < 0.05
    with gate.reading():  # an in-process caller (no key) is never held
        pass
    release.set()
    for t in threads:
        t.join(2)
    assert busy.done == 4 and gate._reading == {}

"""How requests that share one process share its CPU: recall first.

A Python process runs one thread's Python at a time. Eight clients writing at full speed keep
eight threads asking for it, and a recall among them gets an eighth — 20× slower under load in
the first measurement of `annals bench load --mixed`. SQLite takes one writer at a time
anyway, so letting every writer in at once buys no throughput. `PriorityGate`:

- lets at most `max_writers` writes run at once (the others wait without using the CPU);
- holds new writes back while a recall runs — for at most `max_write_wait` seconds, so a
  stream of recalls cannot starve writers;
- never holds a recall back.

On Lambda a container serves one request at a time: no gate is wired there
(`chalicelib.ports.OpenTraffic`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class PriorityGate:
    def __init__(self, max_writers: int = 2, max_write_wait: float = 0.05):
        self.max_writers = max_writers
        self.max_write_wait = max_write_wait
        lock = threading.Lock()
        # Two conditions on one lock, so a finishing writer wakes one waiting writer instead
        # of all of them: with eight writers, waking every one to find the slot taken again
        # was an eighth of the writers' Python time (py-spy, `bench load --mixed`).
        self._slot_free = threading.Condition(lock)
        self._readers_gone = threading.Condition(lock)
        self._readers = 0
        self._writers = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._slot_free:
            self._readers += 1
        try:
            yield
        finally:
            with self._slot_free:
                self._readers -= 1
                if not self._readers:
                    self._readers_gone.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        deadline = time.monotonic() + self.max_write_wait
        with self._slot_free:
            # Readers first, but only for so long; the writer limit always holds.
            while self._readers and (left := deadline - time.monotonic()) > 0:
                self._readers_gone.wait(left)
            while self._writers >= self.max_writers:
                self._slot_free.wait()
            self._writers += 1
        try:
            yield
        finally:
            with self._slot_free:
                self._writers -= 1
                self._slot_free.notify()

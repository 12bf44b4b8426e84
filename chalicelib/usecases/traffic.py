"""How requests that share one process share its CPU: recall first.

A Python process runs one thread's Python at a time. Eight clients writing at full speed keep
eight threads asking for it, and a recall among them gets an eighth — 20× slower under load in
the first measurement of `annals bench load --mixed`. SQLite takes one writer at a time
anyway, so letting every writer in at once buys no throughput. `PriorityGate`:

- lets at most `max_writers` writes run at once (the others wait without using the CPU);
- holds new writes back while a recall runs — for at most `max_write_wait` seconds, so a
  stream of recalls cannot starve writers;
- never holds a key's first recall back, and lets a key's further recalls run beside it only
  while fewer than `max_readers` run in all: recalls take turns between keys (issue 39).

Why the last. A recall is CPU-bound Python; the interpreter runs one thread at a time, so
four of one key's recalls at once finish no sooner in all than one after another, but a
fifth key's recall among them gets a fifth of the interpreter and waits on every switch
(`annals bench attack`: an attacker's four maximum recalls at once took the victim's 10 ms
recall to 0.5 s at p95). A recall held here waits without using the CPU, and the key that
has none running never waits, so a tenant sharing the server with a busy one shares it with
at most `max_readers` of its recalls.

On Lambda a container serves one request at a time: no gate is wired there
(`chalicelib.ports.OpenTraffic`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class PriorityGate:
    def __init__(self, max_writers: int = 2, max_write_wait: float = 0.05,
                 max_readers: int = 2):
        self.max_writers = max_writers
        self.max_write_wait = max_write_wait
        self.max_readers = max_readers
        lock = threading.Lock()
        # Two conditions on one lock, so a finishing writer wakes one waiting writer instead
        # of all of them: with eight writers, waking every one to find the slot taken again
        # was an eighth of the writers' Python time (py-spy, `bench load --mixed`).
        self._slot_free = threading.Condition(lock)
        self._readers_gone = threading.Condition(lock)
        self._read_turn = threading.Condition(lock)
        self._readers = 0
        self._writers = 0
        self._reading: dict[str, int] = {}  # recalls running per key

    @contextmanager
    def reading(self, key: str | None = None) -> Iterator[None]:
        """A recall's turn; `key` (the API key's name) makes a key's recalls take turns
        with other keys' (None: never held, as an in-process caller's)."""
        with self._slot_free:
            if key is not None:
                while self._reading.get(key, 0) and self._readers >= self.max_readers:
                    self._read_turn.wait()
                self._reading[key] = self._reading.get(key, 0) + 1
            self._readers += 1
        try:
            yield
        finally:
            with self._slot_free:
                self._readers -= 1
                if key is not None:
                    left = self._reading[key] - 1
                    if left:
                        self._reading[key] = left
                    else:
                        del self._reading[key]
                    self._read_turn.notify_all()  # few wait; any of them may go now
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

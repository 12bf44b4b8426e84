"""The background lanes of `annals serve`: threads that drain the indexing outbox
(chalicelib.usecases.indexing.OutboxIndexWriter), the local twin of the AWS stream worker.

- keyword lane: small batches, as soon as a write is queued, so recall rarely has work left;
- vector lane: embedding, the costly part, in batches; it runs at a lower OS priority (nice)
  so that requests — recall above all — get the CPU first when both want it.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime

from chalicelib.ports import Lane, OpenTraffic, Traffic
from chalicelib.usecases.indexing import OutboxIndexWriter

log = logging.getLogger("annals.indexer")

VECTOR_NICE = 10  # Linux nice of the embedding thread (and the OpenMP threads it starts)


class BackgroundIndexer:
    def __init__(self, writer: OutboxIndexWriter, traffic: Traffic | None = None,
                 poll_seconds: float = 0.5, vector_nice: int = VECTOR_NICE):
        self.writer = writer
        self.traffic = traffic or OpenTraffic()
        self.poll = poll_seconds
        self.vector_nice = vector_nice
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        if self._threads:
            return
        for lane in ("keyword", "vector"):
            thread = threading.Thread(target=self._loop, args=(lane,),
                                      name=f"annals-index-{lane}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        for event in self.writer.queued.values():
            event.set()
        for thread in self._threads:
            thread.join(timeout)

    def _loop(self, lane: Lane) -> None:
        if lane == "vector":
            lower_priority(self.vector_nice)
        while not self._stop.is_set():
            try:
                consumed = self._drain(lane)
            except Exception:  # find the entry at fault; it is quarantined after 3 tries
                log.exception("background %s indexing failed; isolating the batch", lane)
                consumed = 0
                try:
                    self.writer.isolate(lane, datetime.now(UTC))
                except Exception:
                    log.exception("isolating the %s batch failed; will retry", lane)
            if consumed <= 0:
                queued = self.writer.queued[lane]
                queued.wait(self.poll)
                queued.clear()

    def _drain(self, lane: Lane) -> int:
        if lane == "vector":  # embedding runs in C, outside the GIL, at a lower priority
            return self.writer.drain(lane)
        with self.traffic.writing():  # a keyword batch is Python work: it yields to recalls
            return self.writer.drain(lane)


def lower_priority(nice: int) -> None:
    """Lower this thread's scheduling priority (Linux: nice is per thread); threads it starts
    later, such as the embedder's OpenMP team, inherit it."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError, PermissionError):  # not Linux, or not allowed: run as is
        log.debug("could not lower the priority of %s", threading.current_thread().name)

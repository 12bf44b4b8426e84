"""The background-job worker of `annals serve`: runs the jobs requests hand off
(chalicelib.usecases.background; POST …/extract of a large backlog), the local twin of the SQS
worker. It runs whether or not the scheduler does (ANNALS_SCHEDULE=off too).

One thread, one job at a time, oldest first. Each step of a job (an extraction: one session)
takes a writer's turn at the traffic gate (chalicelib.usecases.traffic), so recalls go first
and the job never holds more than one of the writers' slots; the thread runs at a lower OS
priority, as the vector lane does, since a step spends most of its time embedding. Stopping
(SIGTERM) lets the step under way finish and leaves the job queued: the next start goes on
from the next step.
"""

from __future__ import annotations

import logging
import threading

from chalicelib.local.indexer import VECTOR_NICE, lower_priority
from chalicelib.ports import OpenTraffic, Services, Traffic
from chalicelib.usecases import background

log = logging.getLogger("annals.worker")


class JobWorker:
    def __init__(self, services: Services, traffic: Traffic | None = None,
                 poll_seconds: float = 5.0, nice: int = VECTOR_NICE):
        self.services = services
        self.traffic = traffic or OpenTraffic()
        self.poll = poll_seconds  # also picks up jobs another process queued
        self.nice = nice
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="annals-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_pending(self) -> int:
        """Run every queued job (until stopped); how many ended, done or failed."""
        ended = 0
        for ticket in background.tickets(self.services):
            if self._stop.is_set():
                break
            job = background.run(self.services, ticket.space, ticket.key,
                                 gate=self.traffic.writing, should_stop=self._stop.is_set)
            if job is None or job.status in background.FINAL:
                background.drop_ticket(self.services, ticket)
                ended += 1
        return ended

    def _loop(self) -> None:
        lower_priority(self.nice)
        with background.listening(self._wake.set):
            while not self._stop.is_set():
                self._wake.clear()
                try:
                    self.run_pending()
                except Exception:  # a store failing for now: try again on the next round
                    log.exception("background jobs: the queue could not be read")
                self._wake.wait(self.poll)

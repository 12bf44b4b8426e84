"""The background-job worker of `annals serve`: runs the jobs requests hand off
(chalicelib.usecases.background; POST …/extract of a large backlog), the local twin of the SQS
worker. It runs whether or not the scheduler does (ANNALS_SCHEDULE=off too).

One thread, taking turns: one step of a job (`turn_steps`), then a job of the next space by
name that has one queued, round the spaces; within a space its jobs take turns too. A job
whose turn is over pauses (queued, its ticket kept) and goes on from its next step on its
next turn, so one space's long job (an extraction of thousands of messages) delays another
space's job by one step per other space queued, not by the whole job; a job alone in the
queue runs on until another is queued. Each step (an extraction: one session) takes a
writer's turn at the traffic gate (chalicelib.usecases.traffic), so recalls go first and the
job never holds more than one of the writers' slots; the thread runs at a lower OS priority,
as the vector lane does, since a step spends most of its time embedding. Stopping (SIGTERM)
lets the step under way finish and leaves the job queued: the next start goes on from the
next step.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from chalicelib.domain.records import JobTicket
from chalicelib.local.indexer import VECTOR_NICE, lower_priority
from chalicelib.ports import OpenTraffic, Services, Traffic
from chalicelib.usecases import background

log = logging.getLogger("annals.worker")

T = TypeVar("T")


class JobWorker:
    def __init__(self, services: Services, traffic: Traffic | None = None,
                 poll_seconds: float = 5.0, nice: int = VECTOR_NICE, turn_steps: int = 1):
        self.services = services
        self.traffic = traffic or OpenTraffic()
        self.poll = poll_seconds  # also picks up jobs another process queued
        self.nice = nice
        self.turn_steps = turn_steps  # steps of a job before the next space's job
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_space: str | None = None  # whose job ran last
        self._last_job: dict[str, str] = {}  # space → its job that ran last

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
        """Run the queued jobs, a turn at a time, until none is left (or stopped); how many
        ended, done or failed. The queue is read again before every turn. A job alone in
        the queue runs on, step after step, until another is queued: then its turn ends
        after the step under way."""
        ended = 0
        while not self._stop.is_set():
            queued = background.tickets(self.services)
            ticket = self._next(queued)
            if ticket is None:
                break
            self._last_space = ticket.space
            self._last_job[ticket.space] = ticket.key
            alone = len(queued) == 1
            job = background.run(
                self.services, ticket.space, ticket.key, gate=self.traffic.writing,
                should_stop=(lambda key=ticket.key: self._stop.is_set() or self._others(key))
                if alone else self._stop.is_set,
                max_steps=None if alone else self.turn_steps)
            if job is None or job.status in background.FINAL:
                background.drop_ticket(self.services, ticket)
                ended += 1
        return ended

    def _others(self, key: str) -> bool:
        """Whether a job other than `key` is queued now (asked before each step of a job
        that had the queue to itself)."""
        try:
            return any(t.key != key for t in background.tickets(self.services))
        except Exception:  # the queue cannot be read now: the job goes on, asked again later
            log.exception("background jobs: the queue could not be read")
            return False

    def _next(self, tickets: list[JobTicket]) -> JobTicket | None:
        """Whose turn it is: the first space by name after the one served last (round
        again from the first), and that space's job after the one of it that ran last."""
        by_space: dict[str, list[JobTicket]] = {}
        for ticket in tickets:
            by_space.setdefault(ticket.space, []).append(ticket)
        if not by_space:
            self._last_job.clear()
            return None
        for gone in set(self._last_job) - set(by_space):
            del self._last_job[gone]
        space = _following(sorted(by_space), self._last_space, lambda name: name)
        jobs = sorted(by_space[space], key=lambda t: t.key)  # ids sort in the order made
        return _following(jobs, self._last_job.get(space), lambda t: t.key)

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


def _following(items: list[T], last: str | None, key: Callable[[T], str]) -> T:
    """The first of `items` (sorted by `key`) whose key sorts after `last`; else, round
    again, the first."""
    if last is not None:
        for item in items:
            if key(item) > last:
                return item
    return items[0]

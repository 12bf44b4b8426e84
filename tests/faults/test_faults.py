"""Faults stay where they happen, and nothing is lost or duplicated.

The scenario (tests/faults/scenario.py: PUT messages in two sessions, extract, edit and
re-extract, consolidate, deliveries, an event PATCH, a recall) runs once fault-free on a
backend (tests/faults/backends.py) and its final state is kept. Then, for every write call
it made — counted through the fault proxies of tests/faults/injector.py — it runs again on a
fresh store with that one call failing once, through the HTTP routes, sending a request that
answered 503 again until it succeeds. Every run must answer no 5xx but 503, every 503 must
carry Retry-After and the "unavailable" error shape, and the final state must equal the
fault-free run's: messages, sessions, events with their versions and history, deliveries,
records (people, uses, merge state, the extraction journal) and the search indexes.

Error kinds, per backend:
- sqlite: "database is locked" before the write; and a timeout *after* it (the write landed,
  its answer was lost: what a DynamoDB or OpenSearch read timeout is);
- aws: DynamoDB throttling (ProvisionedThroughputExceeded) on every DynamoDB write call
  (a store call may make several: a partial write), SQS throttling; a second writer racing
  every conditional write on moto (the real conditional check fails); OpenSearch 429 and 503
  from the double on every `_bulk` of the table stream and every `_search` of the recall.

Each test prints its counts (run with -s) and records them as a junit property.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest

from tests.faults import scenario
from tests.faults.backends import AwsBackend, SqliteBackend, aws_env, run_once
from tests.faults.injector import (
    FaultPlan,
    dynamodb_throttled,
    socket_timeout,
    sqlite_locked,
    sqs_throttled,
)

__all__ = ["aws_env"]  # the fixture, used here

KEEP_GOING = bool(os.environ.get("ANNALS_FAULTS_KEEP_GOING"))  # list every difference
CONDITIONAL_WRITES = ("upsert_messages", "create_event", "update_event", "mark_extracted",
                      "delete_message")


@dataclass
class Fault:
    """One run's fault: a label, where, and how to arm it (on the plan, or the backend)."""

    kind: str
    where: str
    arm: Callable[[FaultPlan, object], None]


@dataclass
class Tally:
    backend: str
    runs: int = 0
    write_calls: int = 0
    injected: Counter = field(default_factory=Counter)
    retried: int = 0
    unavailable: int = 0
    redelivered: int = 0

    def line(self) -> str:
        return (f"[faults] {self.backend}: {self.write_calls} write calls in the scenario, "
                f"{self.runs} runs; faults injected {dict(sorted(self.injected.items()))} "
                f"(total {sum(self.injected.values())}); {self.unavailable} answers 503, "
                f"{self.retried} requests retried; {self.redelivered} stream deliveries "
                f"retried")


def sweep(backend_cls, root, faults: Sequence[Fault], expected: dict, tally: Tally,
          count: Callable[[FaultPlan, object], Counter]) -> None:
    """Run the scenario once per fault on a fresh backend and compare the final state."""
    for fault in faults:
        tally.runs += 1
        plan = FaultPlan()
        got, stats, backend = run_once(backend_cls, root, tally.runs, plan,
                                       arm=lambda b, f=fault, p=plan: f.arm(p, b))
        injected = count(plan, backend)
        assert sum(injected.values()), f"{fault.kind} at {fault.where}: nothing was injected"
        if KEEP_GOING:
            try:
                scenario.check_equal(expected, got, f"{fault.kind} at {fault.where}")
            except AssertionError as exc:
                print(exc)
        else:
            scenario.check_equal(expected, got, f"{fault.kind} at {fault.where}")
        tally.injected.update(injected)
        tally.retried += stats.retried
        tally.unavailable += stats.unavailable
        tally.redelivered += getattr(backend, "redelivered", 0)


def report(tally: Tally, record_property) -> None:
    print("\n" + tally.line())
    record_property("faults", tally.line())


def plan_counts(plan: FaultPlan, backend) -> Counter:
    return plan.counts()


def fail_call(kind: str, target: str, method: str, nth: int, error, phase="before") -> Fault:
    def arm(plan: FaultPlan, backend) -> None:
        plan.fail(target, method, nth=nth, error=error, phase=phase)
    return Fault(kind, f"{target}.{method} #{nth}", arm)


# ------------------------------------------------------------------ SQLite


def test_sqlite_every_write_failing_once_changes_nothing(tmp_path, record_property):
    plan = FaultPlan()
    expected, _, _ = run_once(SqliteBackend, tmp_path, 0, plan)
    points = plan.write_calls(SqliteBackend.targets)
    assert len(points) > 20, points
    faults = [fail_call("sqlite locked", t, m, n, sqlite_locked) for t, m, n in points]
    faults += [fail_call("timeout after the write", t, m, n, socket_timeout, phase="after")
               for t, m, n in points]
    tally = Tally("sqlite", write_calls=len(points))
    sweep(SqliteBackend, tmp_path, faults, expected, tally, plan_counts)
    report(tally, record_property)


# ------------------------------------------------------------------ AWS: DynamoDB + OpenSearch


@pytest.fixture(scope="module")
def aws_expected(aws_env, tmp_path_factory):
    """The fault-free AWS run: its final state, its write calls and its OpenSearch requests."""
    plan = FaultPlan()
    state, _, backend = run_once(AwsBackend, tmp_path_factory.mktemp("aws"), 0, plan)
    return state, plan, backend


def test_aws_every_dynamodb_and_sqs_write_failing_once(aws_expected, tmp_path,
                                                       record_property):
    expected, plan, _ = aws_expected
    points = plan.write_calls(("dynamodb", "queue"))
    assert len(points) > 20, points
    faults = [fail_call("dynamodb throttled", t, m, n, dynamodb_throttled)
              for t, m, n in points if t == "dynamodb"]
    faults += [fail_call("sqs throttled", t, m, n, sqs_throttled)
               for t, m, n in points if t == "queue"]
    tally = Tally("aws dynamodb+sqs", write_calls=len(points))
    sweep(AwsBackend, tmp_path, faults, expected, tally, plan_counts)
    report(tally, record_property)


def test_aws_a_racing_writer_at_every_conditional_write(aws_expected, tmp_path,
                                                        record_property):
    """A second writer (a duplicate queue delivery, a retried request still running) makes
    the same write between the store's read and its conditional write: the condition fails
    for real on moto, and the outcome must be the same."""
    expected, plan, _ = aws_expected
    points = [p for p in plan.write_calls(("store",)) if p[1] in CONDITIONAL_WRITES]
    assert len(points) > 10, points

    def racing(method: str, nth: int) -> Fault:
        def arm(plan: FaultPlan, backend) -> None:
            plan.race("store", method, nth=nth,
                      racer=lambda m, args, kwargs: getattr(backend.racer, m)(*args, **kwargs))
        return Fault("racing writer", f"store.{method} #{nth}", arm)

    tally = Tally("aws dynamodb races", write_calls=len(points))
    sweep(AwsBackend, tmp_path, [racing(m, n) for _, m, n in points], expected, tally,
          plan_counts)
    report(tally, record_property)


def test_aws_every_opensearch_request_rejected_once(aws_expected, tmp_path, record_property):
    """429 and 503 (in turn) on every `_bulk` the table stream sends and every `_search` a
    recall sends, twice in a row so they outlast the client's one transport retry."""
    expected, _, backend = aws_expected
    sent = [r for r in backend.requests if backend.mine(r)]
    kinds = [("_bulk", "POST"), ("_search", "POST")]
    points = [(path, method, n) for path, method in kinds
              for n in range(1, 1 + sum(path in r.path and r.method == method for r in sent))]
    assert sum(p[0] == "_bulk" for p in points) > 5, sent

    def rejecting(i: int, path: str, method: str, nth: int) -> Fault:
        status = (429, 503)[i % 2]

        def arm(plan: FaultPlan, backend) -> None:
            backend.double.inject_http_error(status, times=2, path=path, method=method,
                                             after=nth - 1, when=backend.mine)
            backend.armed = backend.double.injected_http_errors()
        return Fault(f"opensearch {status}", f"{path} #{nth}", arm)

    def counted(plan: FaultPlan, backend) -> Counter:
        return Counter({"opensearch 429/503": backend.double.injected_http_errors()
                        - backend.armed})

    tally = Tally("aws opensearch", write_calls=sum(p[0] == "_bulk" for p in points))
    sweep(AwsBackend, tmp_path, [rejecting(i, *p) for i, p in enumerate(points)], expected,
          tally, counted)
    report(tally, record_property)

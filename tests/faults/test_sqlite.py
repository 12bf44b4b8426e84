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

from tests.faults.backends import SqliteBackend, run_once
from tests.faults.injector import FaultPlan, socket_timeout, sqlite_locked
from tests.faults.sweep import Tally, fail_call, plan_counts, report, sweep

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

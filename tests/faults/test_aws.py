"""Faults on the AWS backend (DynamoDB and SQS on moto, OpenSearch on the in-repo double):
every write failing once, a racing writer at every conditional write, OpenSearch 429/503 on
every request. The sweep and what it checks: tests/faults/test_sqlite.py."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.faults.backends import AwsBackend, aws_env, run_once
from tests.faults.injector import FaultPlan, dynamodb_throttled, sqs_throttled
from tests.faults.sweep import Fault, Tally, fail_call, plan_counts, report, sweep

__all__ = ["aws_env"]  # the fixture, used here

CONDITIONAL_WRITES = ("upsert_messages", "create_event", "update_event", "mark_extracted",
                      "delete_message")


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

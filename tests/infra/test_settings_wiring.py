"""The plain-Python parts of infra/: user names, endpoint parsing, event-source overrides.
No aws-cdk-lib needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "infra"))

from annals_infra import settings as S
from annals_infra.wiring import Targets, function_ids, plan_overrides


@pytest.mark.parametrize("user", ["alice", "a", "bob-2", "x" * 20, "0day", "a-b-c"])
def test_good_user_names(user):
    assert S.user_error(user) is None


@pytest.mark.parametrize("user", ["", "Alice", "bob_2", "x" * 21, "-bob", "bob-", "a b",
                                  "bob.smith", "böb"])
def test_bad_user_names(user):
    assert S.user_error(user)


def test_derived_names_fit_aws_limits():
    user = "x" * S.MAX_USER_LEN
    assert len(S.domain_name(user)) <= 28  # OpenSearch domain names: 3-28 characters
    assert S.stack_name(user) == f"Annals-{user}"
    assert S.index_name(user) == f"annals-{user}"
    assert S.VISIBILITY_TIMEOUT_S >= 6 * S.LAMBDA_TIMEOUT_S


def test_parse_managed_domain_endpoint():
    t = S.parse_endpoint("https://search-shared-abc123def.eu-west-1.es.amazonaws.com/")
    assert (t.service, t.resource_name, t.region) == ("es", "shared", "eu-west-1")
    assert t.endpoint == "https://search-shared-abc123def.eu-west-1.es.amazonaws.com"
    vpc = S.parse_endpoint("vpc-my-domain-x1y2z3.us-east-1.es.amazonaws.com")
    assert (vpc.resource_name, vpc.region) == ("my-domain", "us-east-1")


def test_parse_serverless_endpoint():
    t = S.parse_endpoint("https://abc123xyz.us-east-1.aoss.amazonaws.com")
    assert (t.service, t.resource_name, t.region) == ("aoss", "abc123xyz", "us-east-1")
    assert S.parse_endpoint(t.endpoint, "aoss") == t


@pytest.mark.parametrize(("endpoint", "service", "needle"), [
    ("http://search-a-b1.us-east-1.es.amazonaws.com", None, "https"),
    ("https://abc.us-east-1.aoss.amazonaws.com", "es", "Serverless"),
    ("https://search-xyz-b1.us-east-1.es.amazonaws.com", "aoss", "managed domain"),
    ("https://search.example.com", None, "domain name"),
    ("https://search-xyz-b1.us-east-1.es.amazonaws.com", "solr", "es"),
])
def test_parse_endpoint_errors(endpoint, service, needle):
    with pytest.raises(ValueError, match=needle):
        S.parse_endpoint(endpoint, service)


def _sam(events: dict) -> dict:
    return {"Resources": {
        "Worker": {"Type": "AWS::Serverless::Function", "Properties": {"Events": events}},
        "Plain": {"Type": "AWS::Serverless::Function", "Properties": {}},
        "RestAPI": {"Type": "AWS::Serverless::Api", "Properties": {}},
    }}


TARGETS = Targets(queue_arn="QUEUE", stream_arn="STREAM", stream_failure_arn="FAILURES")
CHALICE_QUEUE = {"Fn::Sub": "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}"
                            ":annals-extract"}


def test_sqs_event_gets_the_stack_queue_and_partial_failures():
    sam = _sam({"WorkerSqsEventSource": {"Type": "SQS", "Properties": {
        "Queue": CHALICE_QUEUE, "BatchSize": 10}}})
    got = {(o.function, o.path): o.value for o in plan_overrides(sam, TARGETS)}
    assert got == {
        ("Worker", "Events.WorkerSqsEventSource.Properties.Queue"): "QUEUE",
        ("Worker", "Events.WorkerSqsEventSource.Properties.FunctionResponseTypes"):
            ["ReportBatchItemFailures"],
    }


def test_stream_event_gets_the_table_stream_retries_and_failure_queue():
    sam = _sam({"WorkerDynamodbEventSource": {"Type": "DynamoDB", "Properties": {
        "Stream": "arn:aws:dynamodb:us-east-1:0:table/annals/stream/x"}}})
    got = {o.path.rsplit(".", 1)[1]: o.value for o in plan_overrides(sam, TARGETS)}
    assert got == {"Stream": "STREAM", "FunctionResponseTypes": ["ReportBatchItemFailures"],
                   "MaximumRetryAttempts": 5,
                   "DestinationConfig": {"OnFailure": {"Destination": "FAILURES"}}}


def test_no_handlers_no_overrides_and_schedules_untouched():
    sam = _sam({"WorkerEvent": {"Type": "Schedule", "Properties": {"Schedule": "rate(5 minutes)"}}})
    assert plan_overrides(sam, TARGETS) == []
    assert function_ids(sam) == ["Plain", "Worker"]


def test_unknown_queue_is_an_error():
    sam = _sam({"WorkerSqsEventSource": {"Type": "SQS", "Properties": {
        "Queue": {"Fn::Sub": "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:other"}}}})
    with pytest.raises(ValueError, match="'other'"):
        plan_overrides(sam, TARGETS)

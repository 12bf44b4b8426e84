"""The plain-Python parts of infra/: user names, endpoint parsing, event-source overrides,
the limits (throttling, reserved concurrency). No aws-cdk-lib needed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "infra"))

from annals_infra import settings as S
from annals_infra.wiring import (
    Targets,
    function_ids,
    function_kinds,
    method_settings,
    plan_limits,
    plan_overrides,
    resource_path,
)


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


# ---------------------------------------------------------------------- limits


def _ctx(values: dict):
    return values.get


def test_limit_defaults():
    limits = S.limits_from(_ctx({}), {})
    assert limits == S.Limits()
    assert (limits.api_rate_limit, limits.api_burst_limit) == (50, 100)
    assert (limits.import_rate_limit, limits.import_burst_limit) == (2, 5)
    assert (limits.queue_concurrency, limits.stream_concurrency,
            limits.schedule_concurrency, limits.api_concurrency) == (3, 3, 1, 0)
    assert limits.retry_after_s == 1
    assert limits.problems() == []


def test_limits_from_context_then_environment():
    env = {"ANNALS_STACK_API_RATE_LIMIT": "20", "ANNALS_STACK_STREAM_CONCURRENCY": "0",
           "ANNALS_STACK_IMPORT_RATE_LIMIT": "1.5"}
    limits = S.limits_from(_ctx({"api_rate_limit": "30", "queue_concurrency": 2,
                                 "import_burst_limit": ""}), env)
    assert limits.api_rate_limit == 30  # context wins over the environment
    assert limits.import_rate_limit == 1.5 and limits.stream_concurrency == 0
    assert limits.queue_concurrency == 2
    assert limits.import_burst_limit == 5  # an empty value is no value
    assert S.Limits(import_rate_limit=0.25).retry_after_s == 4


@pytest.mark.parametrize(("values", "needle"), [
    ({"api_rate_limit": "fast"}, "api_rate_limit must be a number"),
    ({"api_burst_limit": "1.5"}, "api_burst_limit must be a whole number"),
    ({"api_burst_limit": 2.5}, "api_burst_limit must be a whole number"),
    ({"api_rate_limit": "0"}, "api_rate_limit must be above 0"),
    ({"api_rate_limit": "nan"}, "api_rate_limit must be above 0"),
    ({"import_rate_limit": "60"}, "at most api_rate_limit"),
    ({"import_burst_limit": "0"}, "import_burst_limit must be 1"),
    ({"queue_concurrency": "1"}, "queue_concurrency must be 0 (no limit) or 2 to 1000"),
    ({"stream_concurrency": "-1"}, "stream_concurrency must be 0"),
    ({"api_concurrency": "1001"}, "api_concurrency must be 0"),
])
def test_bad_limits(values, needle):
    with pytest.raises(ValueError, match=re.escape(needle)):
        S.limits_from(_ctx(values), {})


def _app_sam() -> dict:
    """Functions the way Chalice names them for the real app, and part of its swagger."""
    def fn(events: dict) -> dict:
        return {"Type": "AWS::Serverless::Function", "Properties": {"Events": events}}

    return {"Resources": {
        "APIHandler": fn({}),
        "ExtractWorker": fn({"ExtractWorkerSqsEventSource": {"Type": "SQS", "Properties": {
            "Queue": CHALICE_QUEUE, "BatchSize": 10}}}),
        "IndexStream": fn({"IndexStreamDynamodbEventSource": {"Type": "DynamoDB"}}),
        "QuietWindow": fn({"QuietWindowEvent": {"Type": "Schedule"}}),
        "Merge": fn({"MergeEvent": {"Type": "Schedule"}}),
        "Helper": fn({}),
        "RestAPI": {"Type": "AWS::Serverless::Api", "Properties": {"DefinitionBody": {
            "paths": {
                "/v1/health": {"get": {}, "head": {}},
                "/v1/spaces/{space}/sessions/{session}/messages": {"put": {}},
                "/v1/spaces/{space}/graph": {"get": {}, "head": {}, "post": {}},
                "/v1/spaces/{space}/extract": {"post": {}},
            }}}},
    }}


def test_function_kinds_by_what_invokes_them():
    assert function_kinds(_app_sam()) == {
        "APIHandler": "api", "ExtractWorker": "queue", "IndexStream": "stream",
        "QuietWindow": "schedule", "Merge": "schedule", "Helper": "other"}


def test_workers_get_reserved_concurrency_and_the_queue_a_maximum():
    got = {(o.function, o.path): o.value for o in plan_limits(_app_sam(), S.Limits())}
    assert got == {
        ("ExtractWorker", "ReservedConcurrentExecutions"): 3,
        ("ExtractWorker", "Events.ExtractWorkerSqsEventSource.Properties.ScalingConfig"):
            {"MaximumConcurrency": 3},
        ("IndexStream", "ReservedConcurrentExecutions"): 3,
        ("QuietWindow", "ReservedConcurrentExecutions"): 1,
        ("Merge", "ReservedConcurrentExecutions"): 1,
    }  # the API: none by default; a function nothing invokes: none


def test_zero_reserves_nothing_and_the_api_can_have_a_reservation():
    limits = S.Limits(queue_concurrency=0, stream_concurrency=0, schedule_concurrency=0,
                      api_concurrency=20)
    got = {(o.function, o.path): o.value for o in plan_limits(_app_sam(), limits)}
    assert got == {("APIHandler", "ReservedConcurrentExecutions"): 20}


def test_resource_paths_as_stage_method_settings_name_them():
    assert resource_path("/v1/keys") == "/~1v1~1keys"
    assert resource_path("/v1/spaces/{space}/graph") == "/~1v1~1spaces~1{space}~1graph"
    assert resource_path("/") == "/"


def test_method_settings_stage_default_and_the_import_routes_the_app_has():
    settings = method_settings(_app_sam(), S.Limits())
    assert settings[0] == {"ResourcePath": "/*", "HttpMethod": "*",
                           "ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100}
    routes = {(m["HttpMethod"], m["ResourcePath"]): (m["ThrottlingRateLimit"],
                                                     m["ThrottlingBurstLimit"])
              for m in settings[1:]}
    assert routes == {  # no …/consolidate in this app: no setting for it
        ("PUT", "/~1v1~1spaces~1{space}~1sessions~1{session}~1messages"): (2, 5),
        ("POST", "/~1v1~1spaces~1{space}~1extract"): (2, 5),
        ("POST", "/~1v1~1spaces~1{space}~1graph"): (2, 5),
    }
    assert method_settings({"Resources": {}}, S.Limits())[1:] == []

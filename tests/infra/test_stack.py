"""The synthesised `Annals-<user>` template, built from the fixture Chalice app (which has the
SQS worker, the stream indexer and the three schedules the real app will have)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import (
    INFRA_APP,
    NEEDS_CDK,
    SYNTH_TIMEOUT_S,
    Synth,
    copy_fixture_app,
    offline_env,
    synthesize,
)

pytestmark = [pytest.mark.infra, NEEDS_CDK]

ENV_KEYS = {"ANNALS_BACKEND", "ANNALS_TABLE", "ANNALS_QUEUE_URL", "ANNALS_QUEUE_NAME",
            "ANNALS_OPENSEARCH_ENDPOINT", "ANNALS_OPENSEARCH_INDEX",
            "ANNALS_OPENSEARCH_SERVICE", "ANNALS_API_KEY_SECRET", "POWERTOOLS_SERVICE_NAME",
            "ANNALS_SCHEDULE"}
FUNCTIONS = {"APIHandler", "ExtractWorker", "IndexStream", "QuietWindowJob", "MergeJob",
             "CooldownJob"}


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Synth:
    work = tmp_path_factory.mktemp("created-domain")
    app = copy_fixture_app(work / "app")
    return synthesize(work, {"user": "alice", "region": "us-east-1", "source_dir": str(app)})


@pytest.fixture(scope="module")
def limited(tmp_path_factory) -> Synth:
    """Limits changed by context and, as `annals deploy` passes them, by environment."""
    work = tmp_path_factory.mktemp("limited")
    app = copy_fixture_app(work / "app")
    return synthesize(work, {"user": "dave", "region": "us-east-1", "source_dir": str(app),
                             "api_rate_limit": "20", "queue_concurrency": "0",
                             "api_concurrency": "10"},
                      ANNALS_STACK_API_RATE_LIMIT="99", ANNALS_STACK_API_BURST_LIMIT="40",
                      ANNALS_STACK_STREAM_CONCURRENCY="2",
                      ANNALS_STACK_IMPORT_RATE_LIMIT="0.5")


@pytest.fixture(scope="module")
def aoss(tmp_path_factory) -> Synth:
    work = tmp_path_factory.mktemp("aoss")
    app = copy_fixture_app(work / "app")
    return synthesize(work, {
        "user": "carol", "region": "eu-west-1", "source_dir": str(app),
        "opensearch_endpoint": "https://coll123abc.eu-west-1.aoss.amazonaws.com"})


def ref(synth: Synth, prefix: str, kind: str) -> dict:
    return {"Ref": synth.logical_id(prefix, kind)}


def getatt(synth: Synth, prefix: str, kind: str, attr: str) -> dict:
    return {"Fn::GetAtt": [synth.logical_id(prefix, kind), attr]}


def statements(synth: Synth) -> dict[str, dict]:
    _, role = synth.one("AWS::IAM::Role")
    (policy,) = role["Properties"]["Policies"]
    return {s["Sid"]: s for s in policy["PolicyDocument"]["Statement"]}


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


# ---------------------------------------------------------------------- data


def test_table(synth):
    _, table = synth.one("AWS::DynamoDB::Table")
    p = table["Properties"]
    assert table["DeletionPolicy"] == "Retain" and table["UpdateReplacePolicy"] == "Retain"
    assert p["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                              {"AttributeName": "sk", "KeyType": "RANGE"}]
    assert {a["AttributeName"]: a["AttributeType"] for a in p["AttributeDefinitions"]} == {
        k: "S" for k in ("pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk")}
    assert p["BillingMode"] == "PAY_PER_REQUEST"
    assert p["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert p["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert p["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    gsis = {g["IndexName"]: g for g in p["GlobalSecondaryIndexes"]}
    assert set(gsis) == {"gsi1", "gsi2"}
    for name, gsi in gsis.items():
        assert gsi["KeySchema"] == [{"AttributeName": f"{name}pk", "KeyType": "HASH"},
                                    {"AttributeName": f"{name}sk", "KeyType": "RANGE"}]
        assert gsi["Projection"] == {"ProjectionType": "ALL"}


def test_queue_dlq_and_ssl(synth):
    queues = synth.of_type("AWS::SQS::Queue")
    qid = synth.logical_id("ExtractQueue", "AWS::SQS::Queue")
    dlq = synth.logical_id("ExtractDLQ", "AWS::SQS::Queue")
    q = queues[qid]["Properties"]
    assert q["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": [dlq, "Arn"]},
                                  "maxReceiveCount": 5}
    timeout = synth.resources["ExtractWorker"]["Properties"]["Timeout"]
    assert q["VisibilityTimeout"] >= 6 * timeout
    for queue in queues.values():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True
    # enforce_ssl=True: every queue has a policy denying non-TLS access
    policies = synth.of_type("AWS::SQS::QueuePolicy").values()
    covered = set()
    for policy in policies:
        (stmt,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert stmt["Effect"] == "Deny" and stmt["Action"] == "sqs:*"
        assert stmt["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        covered |= {q["Ref"] for q in policy["Properties"]["Queues"]}
    assert covered == set(queues)


def test_api_key_secret_is_generated(synth):
    _, secret = synth.one("AWS::SecretsManager::Secret")
    assert "GenerateSecretString" in secret["Properties"]
    assert "SecretString" not in secret["Properties"]


def test_created_domain(synth):
    _, domain = synth.one("AWS::OpenSearchService::Domain")
    p = domain["Properties"]
    assert p["DomainName"] == "annals-alice"
    assert p["ClusterConfig"]["InstanceType"] == "t3.small.search"
    assert p["ClusterConfig"]["InstanceCount"] == 1
    assert p["EncryptionAtRestOptions"] == {"Enabled": True}
    assert p["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert p["DomainEndpointOptions"]["EnforceHTTPS"] is True
    assert p["AdvancedSecurityOptions"] == {"Enabled": False}
    (stmt,) = p["AccessPolicies"]["Statement"]
    role = synth.one("AWS::IAM::Role")[0]
    assert stmt["Principal"] == {"AWS": {"Fn::GetAtt": [role, "Arn"]}}
    assert all(a.startswith("es:ESHttp") for a in stmt["Action"])


# ---------------------------------------------------------------------- the app


def test_chalice_functions_use_our_role_and_env(synth):
    functions = synth.of_type("AWS::Serverless::Function")
    assert set(functions) == FUNCTIONS
    role = synth.one("AWS::IAM::Role")[0]
    domain = synth.one("AWS::OpenSearchService::Domain")[0]
    expected = {
        "ANNALS_BACKEND": "aws",
        "ANNALS_TABLE": ref(synth, "Table", "AWS::DynamoDB::Table"),
        "ANNALS_QUEUE_URL": ref(synth, "ExtractQueue", "AWS::SQS::Queue"),
        "ANNALS_QUEUE_NAME": getatt(synth, "ExtractQueue", "AWS::SQS::Queue", "QueueName"),
        "ANNALS_OPENSEARCH_ENDPOINT": {"Fn::Join": ["", [
            "https://", {"Fn::GetAtt": [domain, "DomainEndpoint"]}]]},
        "ANNALS_OPENSEARCH_INDEX": "annals-alice",
        "ANNALS_OPENSEARCH_SERVICE": "es",
        "ANNALS_API_KEY_SECRET": ref(synth, "ApiKey", "AWS::SecretsManager::Secret"),
        "POWERTOOLS_SERVICE_NAME": "annals",
        "ANNALS_SCHEDULE": "off",
    }
    for name, fn in functions.items():
        p = fn["Properties"]
        assert p["Role"] == {"Fn::GetAtt": [role, "Arn"]}, name
        env = p["Environment"]["Variables"]
        assert {k: env[k] for k in ENV_KEYS} == expected, name
        assert p["Tracing"] == "Active"
    # Chalice manages no IAM: ours is the only role, and there is no separate policy
    assert not synth.of_type("AWS::IAM::Policy")
    groups = synth.of_type("AWS::Logs::LogGroup").values()
    assert {g["Properties"]["LogGroupName"]["Fn::Join"][1][1]["Ref"] for g in groups} == FUNCTIONS
    assert {g["Properties"]["RetentionInDays"] for g in groups} == {30}


def test_sqs_event_source_overridden(synth):
    event = synth.resources["ExtractWorker"]["Properties"]["Events"][
        "ExtractWorkerSqsEventSource"]
    assert event["Type"] == "SQS"
    p = event["Properties"]
    assert p["Queue"] == getatt(synth, "ExtractQueue", "AWS::SQS::Queue", "Arn")
    assert p["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert p["BatchSize"] == 10


def test_stream_event_source_overridden(synth):
    event = synth.resources["IndexStream"]["Properties"]["Events"][
        "IndexStreamDynamodbEventSource"]
    assert event["Type"] == "DynamoDB"
    p = event["Properties"]
    assert p["Stream"] == getatt(synth, "Table", "AWS::DynamoDB::Table", "StreamArn")
    assert p["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert p["MaximumRetryAttempts"] == 5
    assert p["DestinationConfig"] == {"OnFailure": {"Destination": getatt(
        synth, "IndexFailures", "AWS::SQS::Queue", "Arn")}}


def test_no_hard_coded_names_left(synth):
    text = json.dumps(synth.template)
    assert ":annals-extract" not in text  # Chalice's hard-coded queue ARN
    assert "table/annals/stream" not in text  # the fixture's placeholder stream ARN
    assert "${Token[" not in text


def test_schedules_and_api(synth):
    for fn in ("QuietWindowJob", "MergeJob", "CooldownJob"):
        (event,) = synth.resources[fn]["Properties"]["Events"].values()
        assert event["Type"] == "Schedule"
    api = synth.resources["RestAPI"]["Properties"]
    assert api["EndpointConfiguration"] == "REGIONAL"
    assert synth.template["Transform"] == "AWS::Serverless-2016-10-31"
    outputs = synth.template["Outputs"]
    assert {"ApiUrl", "ApiKeySecretArn", "ApiKeySecretName", "TableName", "QueueUrl"} <= set(
        outputs)
    responses = {r["Properties"]["ResponseType"]: r["Properties"]
                 for r in synth.resources.values()
                 if r["Type"] == "AWS::ApiGateway::GatewayResponse"}
    unknown_route = responses["MISSING_AUTHENTICATION_TOKEN"]
    assert unknown_route["StatusCode"] == "404"
    body = json.loads(unknown_route["ResponseTemplates"]["application/json"])
    assert body["error"]["code"] == "not_found"
    assert {"DEFAULT_4XX", "DEFAULT_5XX", "THROTTLED"} <= set(responses)


# ---------------------------------------------------------------------- limits


def gateway_responses(synth: Synth) -> dict[str, dict]:
    return {r["Properties"]["ResponseType"]: r["Properties"]
            for r in synth.of_type("AWS::ApiGateway::GatewayResponse").values()}


def reserved(synth: Synth) -> dict[str, int | None]:
    return {name: fn["Properties"].get("ReservedConcurrentExecutions")
            for name, fn in synth.of_type("AWS::Serverless::Function").items()}


def test_stage_throttling(synth):
    # the fixture app has none of the import routes, so only the stage default (the real
    # app's import routes: test_stack_real_app)
    assert synth.resources["RestAPI"]["Properties"]["MethodSettings"] == [{
        "ResourcePath": "/*", "HttpMethod": "*",
        "ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100}]


def test_throttled_is_a_429_rate_limited_with_retry_after(synth):
    throttled = gateway_responses(synth)["THROTTLED"]
    assert throttled["StatusCode"] == "429"
    assert throttled["RestApiId"] == {"Ref": "RestAPI"}
    assert throttled["ResponseParameters"] == {
        "gatewayresponse.header.Content-Type": "'application/json'",
        "gatewayresponse.header.Retry-After": "'1'"}
    body = json.loads(throttled["ResponseTemplates"]["application/json"])
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == "rate_limited"
    for kind, response in gateway_responses(synth).items():  # Retry-After only on the 429
        if kind != "THROTTLED":
            assert "gatewayresponse.header.Retry-After" not in response["ResponseParameters"]


def test_workers_have_reserved_concurrency_the_api_none(synth):
    assert reserved(synth) == {"ExtractWorker": 3, "IndexStream": 3, "QuietWindowJob": 1,
                               "MergeJob": 1, "CooldownJob": 1, "APIHandler": None}
    event = synth.resources["ExtractWorker"]["Properties"]["Events"][
        "ExtractWorkerSqsEventSource"]
    # polls no faster than it may run: no message is throttled back towards the DLQ
    assert event["Properties"]["ScalingConfig"] == {"MaximumConcurrency": 3}


def test_limits_from_context_and_environment(limited):
    (stage,) = limited.resources["RestAPI"]["Properties"]["MethodSettings"]
    assert (stage["ThrottlingRateLimit"], stage["ThrottlingBurstLimit"]) == (20, 40)
    assert reserved(limited) == {"ExtractWorker": None, "IndexStream": 2, "QuietWindowJob": 1,
                                 "MergeJob": 1, "CooldownJob": 1, "APIHandler": 10}
    event = limited.resources["ExtractWorker"]["Properties"]["Events"][
        "ExtractWorkerSqsEventSource"]
    assert "ScalingConfig" not in event["Properties"]
    throttled = gateway_responses(limited)["THROTTLED"]
    assert throttled["ResponseParameters"]["gatewayresponse.header.Retry-After"] == "'2'"
    assert limited.report["pluginReports"][0]["conclusion"] == "success"


def test_bad_limit_is_a_config_error(tmp_path):
    app = copy_fixture_app(tmp_path / "app")
    env = offline_env(CDK_OUTDIR=str(tmp_path / "out"), CDK_CONTEXT_JSON=json.dumps(
        {"user": "erin", "source_dir": str(app), "queue_concurrency": "1"}))
    proc = subprocess.run([sys.executable, str(INFRA_APP)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=SYNTH_TIMEOUT_S)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "queue_concurrency must be 0 (no limit) or 2 to 1000" in proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------- IAM


def test_role_is_least_privilege(synth):
    got = statements(synth)
    table = synth.logical_id("Table", "AWS::DynamoDB::Table")
    assert set(got) == {"Table", "TableStream", "TableStreamList", "ExtractQueue",
                        "IndexFailures", "ApiKey", "Search", "Logs", "Tracing"}
    for sid, stmt in got.items():
        assert stmt["Effect"] == "Allow", sid
        for action in as_list(stmt["Action"]):
            assert "*" not in action, (sid, action)
        resources = as_list(stmt["Resource"])
        if sid == "Tracing":
            assert resources == ["*"]
            assert set(stmt["Action"]) == {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
        else:
            assert "*" not in resources, sid
    assert set(got["Table"]["Action"]) == {
        "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
        "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem", "dynamodb:DescribeTable"}
    table_arn = {"Fn::GetAtt": [table, "Arn"]}
    assert got["Table"]["Resource"] == [table_arn] + [
        {"Fn::Join": ["", [table_arn, f"/index/{g}"]]} for g in ("gsi1", "gsi2")]
    assert got["TableStream"]["Resource"] == {"Fn::GetAtt": [table, "StreamArn"]}
    assert set(got["ExtractQueue"]["Action"]) == {
        "sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
    assert got["ApiKey"]["Resource"] == ref(synth, "ApiKey", "AWS::SecretsManager::Secret")
    search = json.dumps(got["Search"]["Resource"])
    assert ":domain/annals-alice" in search
    assert "/aws/lambda/Annals-alice-" in json.dumps(got["Logs"]["Resource"])


def test_cdk_nag_passes_with_documented_acknowledgements(synth):
    (plugin,) = synth.report["pluginReports"]
    assert plugin["pluginName"] == "AwsSolutions"
    assert plugin["conclusion"] == "success"
    assert plugin["violations"] == []
    acknowledged = {v["ruleName"].split("[")[0] for v in plugin.get("suppressedViolations", [])}
    assert acknowledged <= {"AwsSolutions-SMG4", "AwsSolutions-SQS3", "AwsSolutions-IAM5",
                            "AwsSolutions-OS1", "AwsSolutions-OS3", "AwsSolutions-OS4",
                            "AwsSolutions-OS7", "AwsSolutions-OS9"}


# ---------------------------------------------------------------------- aoss


def test_serverless_collection(aoss):
    assert not aoss.of_type("AWS::OpenSearchService::Domain")
    search = statements(aoss)["Search"]
    assert search["Action"] == "aoss:APIAccessAll"
    assert ":aoss:eu-west-1:" in json.dumps(search["Resource"])
    assert "collection/coll123abc" in json.dumps(search["Resource"])
    for fn in aoss.of_type("AWS::Serverless::Function").values():
        env = fn["Properties"]["Environment"]["Variables"]
        assert env["ANNALS_OPENSEARCH_SERVICE"] == "aoss"
        assert env["ANNALS_OPENSEARCH_ENDPOINT"] == "https://coll123abc.eu-west-1.aoss.amazonaws.com"
        assert env["ANNALS_OPENSEARCH_INDEX"] == "annals-carol"
    assert aoss.report["pluginReports"][0]["conclusion"] == "success"

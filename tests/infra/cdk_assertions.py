"""Run by test_stack_real_app in a subprocess (jsii starts Node; keep it out of pytest):
aws_cdk.assertions over a synthesised template. Prints "ok" or raises."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aws_cdk.assertions import Match, Template


def check(path: str) -> None:
    t = Template.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
    t.resource_count_is("AWS::DynamoDB::Table", 1)
    t.has_resource_properties("AWS::DynamoDB::Table", {
        "BillingMode": "PAY_PER_REQUEST",
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
        "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
    })
    t.resource_count_is("AWS::SQS::Queue", 3)  # extraction queue, its DLQ, index failures
    t.has_resource_properties("AWS::SQS::Queue", {
        "RedrivePolicy": Match.object_like({"maxReceiveCount": 5})})
    t.has_resource_properties("AWS::SQS::QueuePolicy", Match.object_like({
        "PolicyDocument": Match.object_like({"Statement": Match.array_with([
            Match.object_like({"Effect": "Deny", "Condition": {
                "Bool": {"aws:SecureTransport": "false"}}})])})}))
    t.resource_count_is("AWS::SecretsManager::Secret", 1)
    t.has_resource_properties("AWS::Serverless::Function", Match.object_like({
        "Events": Match.object_like({"ExtractWorkerSqsEventSource": Match.object_like({
            "Type": "SQS",
            "Properties": Match.object_like({
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
                "ScalingConfig": {"MaximumConcurrency": 3}})})}),
        "ReservedConcurrentExecutions": 3}))
    t.has_resource_properties("AWS::Serverless::Api", Match.object_like({
        "MethodSettings": Match.array_with([{
            "ResourcePath": "/*", "HttpMethod": "*",
            "ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100}])}))
    t.has_resource_properties("AWS::ApiGateway::GatewayResponse", {
        "ResponseType": "THROTTLED", "StatusCode": "429",
        "RestApiId": Match.any_value(),
        "ResponseParameters": Match.object_like({
            "gatewayresponse.header.Retry-After": "'1'"}),
        "ResponseTemplates": {"application/json": Match.string_like_regexp('"rate_limited"')},
    })
    print("ok")


if __name__ == "__main__":
    check(sys.argv[1])

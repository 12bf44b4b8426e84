"""`Annals-<user>`: one user's Annals on AWS.

DynamoDB table (+ stream) → the Chalice app (API, SQS extraction worker, stream indexer,
schedules) → OpenSearch (an existing endpoint, or a small domain created here). The Lambda
functions share one role created here with exactly the permissions they use; Chalice is told
not to manage IAM (`manage_iam_role: false`, `autogen_policy: false`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as aos
from aws_cdk import aws_secretsmanager as sm
from aws_cdk import aws_sqs as sqs
from chalice.cdk import Chalice
from constructs import Construct

from . import nag
from . import settings as S
from .wiring import (
    REST_API,
    Override,
    Targets,
    function_ids,
    method_settings,
    plan_limits,
    plan_overrides,
)

GSIS = ("gsi1", "gsi2")  # gsi1: events by time; gsi2: every session (quiet-window job)
DOMAIN_ENGINE = "OpenSearch_2_19"
DOMAIN_INSTANCE = "t3.small.search"
DOMAIN_VOLUME_GB = 10
OPENSEARCH_HTTP = ["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut",
                   "es:ESHttpDelete", "es:ESHttpPatch"]  # = es:ESHttp*, spelled out


# (API Gateway response type, status, code, message) for what API Gateway answers itself.
# THROTTLED is the stage / route throttling (settings.Limits): the app's own 429 code.
GATEWAY_RESPONSES = [
    ("MISSING_AUTHENTICATION_TOKEN", "404", "not_found", "no such route"),
    ("THROTTLED", "429", "rate_limited",
     "too many requests to this API; retry after Retry-After seconds"),
    ("REQUEST_TOO_LARGE", "413", "payload_too_large", "request too large"),
    ("DEFAULT_4XX", None, "bad_request", "the request was refused by the API gateway"),
    ("DEFAULT_5XX", None, "unavailable", "the service is unavailable; retry later"),
]


@dataclass(frozen=True)
class StackConfig:
    user: str
    source_dir: Path  # the Chalice project (app.py, chalicelib/, .chalice/config.json)
    search: S.SearchTarget | None = None  # None: create a domain for this user
    lambda_memory_mb: int = S.LAMBDA_MEMORY_MB
    limits: S.Limits = field(default_factory=S.Limits)  # throttling, reserved concurrency
    cors_origin: str | None = None  # the browser origin answered CORS (chalicelib/api/cors.py)


class AnnalsStack(cdk.Stack):
    def __init__(self, scope: Construct, config: StackConfig, **kwargs: Any) -> None:
        user = config.user
        super().__init__(scope, S.stack_name(user),
                         description=f"Annals long-term memory service for user {user}",
                         **kwargs)
        cdk.Tags.of(self).add("annals:user", user)

        self.table = self._table()
        self.dlq, self.queue, self.stream_failures = self._queues()
        self.secret = sm.Secret(
            self, "ApiKey",
            description=f"Annals API key ({user}); clients send it as 'Authorization: Bearer'",
            generate_secret_string=sm.SecretStringGenerator(
                password_length=48, exclude_punctuation=True, include_space=False))

        # the domain whose ARN the role names (created here, or the existing one's)
        self.search_domain_name = (S.domain_name(user) if config.search is None else
                                   config.search.resource_name
                                   if config.search.service == "es" else None)
        search_arns, service = self._search_arns(config)
        self.role = self._role(search_arns, service)
        self.domain = None if config.search else self._domain(S.domain_name(user),
                                                              search_arns[0])
        endpoint = (config.search.endpoint if config.search
                    else cdk.Fn.join("", ["https://", self.domain.attr_domain_endpoint]))

        self.chalice = Chalice(self, "Chalice", source_dir=str(config.source_dir),
                               stage_config=self._stage_config(service, config))
        sam = json.loads((Path(self.chalice._sam_package_dir) / "sam.json").read_text())
        self.function_ids = function_ids(sam)
        for fn_id in self.function_ids:
            for key, value in self._resource_environment(endpoint).items():
                self.chalice.add_environment_variable(key, value, fn_id)
        self.overrides = self._wire_event_sources(sam)
        self.log_groups = self._log_groups(sam)
        self.limits = config.limits
        self.cors_origin = config.cors_origin
        self.limit_overrides = self._limit_functions(sam)
        self._throttle_api(sam)
        self._json_gateway_responses(sam)
        if not (config.source_dir / "requirements.txt").is_file():
            cdk.Annotations.of(self).add_warning_v2(
                "annals:no-requirements",
                f"{config.source_dir}/requirements.txt is missing: Chalice bundles only the "
                "packages listed there, so the functions would lack their dependencies.")
        self._outputs(endpoint, user)
        nag.acknowledge_stack(self)

    # ------------------------------------------------------------------ data

    def _table(self) -> ddb.Table:
        string = ddb.AttributeType.STRING
        table = ddb.Table(
            self, "Table",
            partition_key=ddb.Attribute(name="pk", type=string),
            sort_key=ddb.Attribute(name="sk", type=string),
            billing_mode=ddb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=ddb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True),
            time_to_live_attribute="expires_at",
            stream=ddb.StreamViewType.NEW_AND_OLD_IMAGES,
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        for gsi in GSIS:
            table.add_global_secondary_index(
                index_name=gsi,
                partition_key=ddb.Attribute(name=f"{gsi}pk", type=string),
                sort_key=ddb.Attribute(name=f"{gsi}sk", type=string),
                projection_type=ddb.ProjectionType.ALL)
        return table

    def _queues(self) -> tuple[sqs.Queue, sqs.Queue, sqs.Queue]:
        common: dict[str, Any] = {"encryption": sqs.QueueEncryption.SQS_MANAGED,
                                  "enforce_ssl": True}
        dlq = sqs.Queue(self, "ExtractDLQ", retention_period=cdk.Duration.days(14), **common)
        queue = sqs.Queue(
            self, "ExtractQueue",
            visibility_timeout=cdk.Duration.seconds(S.VISIBILITY_TIMEOUT_S),
            retention_period=cdk.Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=S.MAX_RECEIVE_COUNT,
                                                  queue=dlq),
            **common)
        # Stream records the indexer gave up on (after retries) land here instead of
        # blocking their shard for 24 hours.
        failures = sqs.Queue(self, "IndexFailures", retention_period=cdk.Duration.days(14),
                             **common)
        return dlq, queue, failures

    # ------------------------------------------------------------------ search

    def _search_arns(self, config: StackConfig) -> tuple[list[str], S.Service]:
        """The OpenSearch resources the functions may call, and the SigV4 service name."""
        target = config.search
        if target is None:  # the domain _domain() creates
            domain_arn = self.format_arn(service="es", resource="domain",
                                         resource_name=S.domain_name(config.user))
            return [domain_arn, f"{domain_arn}/*"], "es"
        if target.service == "aoss":
            return [self.format_arn(service="aoss", resource="collection",
                                    resource_name=target.resource_name)], "aoss"
        domain_arn = self.format_arn(service="es", resource="domain",
                                     resource_name=target.resource_name)
        return [domain_arn, f"{domain_arn}/*"], "es"

    def _domain(self, name: str, domain_arn: str) -> aos.CfnDomain:
        # L1 on purpose: the L2 Domain sets access policies through a custom-resource Lambda;
        # here the policy is inline and names the domain by its (fixed) ARN, so no cycle.
        domain = aos.CfnDomain(
            self, "Search",
            domain_name=name,
            engine_version=DOMAIN_ENGINE,
            cluster_config=aos.CfnDomain.ClusterConfigProperty(
                instance_type=DOMAIN_INSTANCE, instance_count=1,
                dedicated_master_enabled=False, zone_awareness_enabled=False),
            ebs_options=aos.CfnDomain.EBSOptionsProperty(
                ebs_enabled=True, volume_size=DOMAIN_VOLUME_GB, volume_type="gp3"),
            encryption_at_rest_options=aos.CfnDomain.EncryptionAtRestOptionsProperty(
                enabled=True),
            node_to_node_encryption_options=aos.CfnDomain.NodeToNodeEncryptionOptionsProperty(
                enabled=True),
            domain_endpoint_options=aos.CfnDomain.DomainEndpointOptionsProperty(
                enforce_https=True, tls_security_policy="Policy-Min-TLS-1-2-2019-07"),
            advanced_security_options=aos.CfnDomain.AdvancedSecurityOptionsInputProperty(
                enabled=False),
            access_policies={
                "Version": "2012-10-17",
                "Statement": [{
                    "Effect": "Allow",
                    "Principal": {"AWS": self.role.role_arn},
                    "Action": OPENSEARCH_HTTP,
                    "Resource": f"{domain_arn}/*",
                }],
            },
        )
        # The index holds only derived data (rebuilt from the table), so it goes with the stack.
        domain.apply_removal_policy(cdk.RemovalPolicy.DESTROY)
        return domain

    # ------------------------------------------------------------------ IAM

    def _role(self, search_arns: list[str], service: S.Service) -> iam.Role:
        table_arn = self.table.table_arn
        stream_arn = self.table.table_stream_arn
        log_groups = self.format_arn(
            service="logs", resource="log-group",
            resource_name=f"/aws/lambda/{self.stack_name}-*",
            arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME)
        statements = [
            iam.PolicyStatement(
                sid="Table",
                actions=["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
                         "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
                         "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem",
                         "dynamodb:DescribeTable"],
                resources=[table_arn, *(f"{table_arn}/index/{gsi}" for gsi in GSIS)]),
            iam.PolicyStatement(
                sid="TableStream",
                actions=["dynamodb:DescribeStream", "dynamodb:GetRecords",
                         "dynamodb:GetShardIterator"],
                resources=[stream_arn]),
            iam.PolicyStatement(  # the event source mapping lists the table's streams
                sid="TableStreamList", actions=["dynamodb:ListStreams"],
                resources=[f"{table_arn}/stream/*"]),
            iam.PolicyStatement(
                sid="ExtractQueue",
                actions=["sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage",
                         "sqs:GetQueueAttributes"],
                resources=[self.queue.queue_arn]),
            iam.PolicyStatement(  # on-failure destination of the stream event source
                sid="IndexFailures", actions=["sqs:SendMessage"],
                resources=[self.stream_failures.queue_arn]),
            iam.PolicyStatement(
                sid="ApiKey",
                actions=["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                resources=[self.secret.secret_arn]),
            iam.PolicyStatement(
                sid="Search",
                actions=OPENSEARCH_HTTP if service == "es" else ["aoss:APIAccessAll"],
                resources=search_arns),
            iam.PolicyStatement(
                sid="Logs", actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_groups, f"{log_groups}:*"]),
            iam.PolicyStatement(  # X-Ray has no resource-level permissions
                sid="Tracing", actions=["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
                resources=["*"]),
        ]
        # Inline (AWS::IAM::Role Policies), not a separate AWS::IAM::Policy: the functions and
        # their event source mappings depend on the role, so the permissions exist before SQS
        # and the stream are polled (an SQS mapping checks them when it is created).
        return iam.Role(
            self, "FunctionRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Annals Lambda functions of {self.stack_name}",
            inline_policies={"annals": iam.PolicyDocument(statements=statements)})

    # ------------------------------------------------------------------ app

    def _stage_config(self, service: S.Service,
                      config: StackConfig) -> dict[str, Any]:
        return {
            "api_gateway_stage": "api",
            "api_gateway_endpoint_type": "REGIONAL",
            "autogen_policy": False,
            "manage_iam_role": False,
            "iam_role_arn": self.role.role_arn,
            "lambda_timeout": S.LAMBDA_TIMEOUT_S,
            "lambda_memory_size": config.lambda_memory_mb,
            "xray": True,
            # Literal values only: Chalice exports these into os.environ while it imports
            # app.py, and a CDK token read there (e.g. a queue name) would end up inside
            # Chalice's Fn::Sub expressions. Resource names/ARNs are added afterwards by
            # _resource_environment().
            "environment_variables": {
                "ANNALS_BACKEND": "aws",
                "ANNALS_OPENSEARCH_INDEX": S.index_name(config.user),
                "ANNALS_OPENSEARCH_SERVICE": service,
                "ANNALS_SCHEDULE": "off",
                "ANNALS_DATA_DIR": "/tmp/annals",  # the only writable path on Lambda
                "POWERTOOLS_SERVICE_NAME": "annals",
                # A created domain has one node: replicas could never be assigned (yellow).
                **({} if config.search else {"ANNALS_OPENSEARCH_REPLICAS": "0"}),
                # read by app.py at import (packaging and Lambda alike): Chalice's CORS
                **({"ANNALS_CORS_ORIGINS": config.cors_origin} if config.cors_origin else {}),
            },
        }

    def _resource_environment(self, endpoint: str) -> dict[str, str]:
        """Environment variables whose values are CloudFormation references."""
        return {
            "ANNALS_TABLE": self.table.table_name,
            "ANNALS_QUEUE_URL": self.queue.queue_url,
            "ANNALS_QUEUE_NAME": self.queue.queue_name,
            "ANNALS_OPENSEARCH_ENDPOINT": endpoint,
            "ANNALS_API_KEY_SECRET": self.secret.secret_arn,
        }

    def _wire_event_sources(self, sam: dict[str, Any]) -> list[Override]:
        targets = Targets(queue_arn=self.queue.queue_arn,
                          stream_arn=self.table.table_stream_arn,
                          stream_failure_arn=self.stream_failures.queue_arn)
        overrides = plan_overrides(sam, targets)
        for o in overrides:
            self.chalice.get_resource(o.function).add_property_override(o.path, o.value)
        return overrides

    def _log_groups(self, sam: dict[str, Any]) -> list[logs.CfnLogGroup]:
        """A log group with retention per function. (Chalice's own `log_retention_in_days`
        emits `${ApiHandler}` for the function it names `APIHandler` in SAM output, which
        CfnInclude rejects, so the stack makes them.)"""
        groups = []
        for fn_id in self.function_ids:
            fn = self.chalice.get_resource(fn_id)
            group = logs.CfnLogGroup(
                self, f"{fn_id}Logs",
                log_group_name=cdk.Fn.join("", ["/aws/lambda/", fn.ref]),
                retention_in_days=S.LOG_RETENTION_DAYS)
            group.apply_removal_policy(cdk.RemovalPolicy.DESTROY)
            groups.append(group)
        return groups

    def _limit_functions(self, sam: dict[str, Any]) -> list[Override]:
        """Reserved concurrency for the workers, MaximumConcurrency on the SQS event source
        (wiring.plan_limits): a flood of stream records or queued extractions runs at most
        that many at once and cannot take the account's concurrency from the API."""
        overrides = plan_limits(sam, self.limits)
        for o in overrides:
            self.chalice.get_resource(o.function).add_property_override(o.path, o.value)
        return overrides

    def _throttle_api(self, sam: dict[str, Any]) -> None:
        """The stage's request ceiling for every route, and a lower one for the import
        routes (wiring.method_settings): one user's API should never scale into a bill."""
        if REST_API in sam.get("Resources", {}):
            self.chalice.get_resource(REST_API).add_property_override(
                "MethodSettings", method_settings(sam, self.limits))

    def _json_gateway_responses(self, sam: dict[str, Any]) -> None:
        """What API Gateway answers itself (an unknown route, throttling, …) speaks the app's
        error shape. An unknown route is API Gateway's MISSING_AUTHENTICATION_TOKEN, a 403
        whose SigV4 message tells a client nothing: here it is a 404. Its throttling 429
        carries Retry-After, as the app's own 429 does. With a CORS origin each of them names
        it too: a browser shows a script no answer without it, so the SillyTavern extension
        would see a throttled call as a network failure rather than a 429 to wait out."""
        if REST_API not in sam.get("Resources", {}):
            return
        api_id = self.chalice.get_resource(REST_API).ref
        headers = {"gatewayresponse.header.Content-Type": "'application/json'"}
        if self.cors_origin:
            headers |= {"gatewayresponse.header.Access-Control-Allow-Origin":
                        f"'{self.cors_origin}'", "gatewayresponse.header.Vary": "'Origin'"}
        extra = {"THROTTLED": {
            "gatewayresponse.header.Retry-After": f"'{self.limits.retry_after_s}'"}}
        for kind, status, code, message in GATEWAY_RESPONSES:
            body = json.dumps({"error": {"code": code, "message": message}})
            apigw.CfnGatewayResponse(
                self, f"Gateway{kind.title().replace('_', '')}", rest_api_id=api_id,
                response_type=kind, status_code=status,
                response_parameters={**headers, **extra.get(kind, {})},
                response_templates={"application/json": body})

    def _outputs(self, endpoint: str, user: str) -> None:
        try:
            api_url = self.chalice.sam_template.get_output("EndpointURL").value
        except Exception:  # an app without routes has no REST API
            api_url = None
        if api_url is not None:
            cdk.CfnOutput(self, "ApiUrl", value=api_url, description="the Annals API")
        cdk.CfnOutput(self, "ApiKeySecretArn", value=self.secret.secret_arn)
        cdk.CfnOutput(self, "ApiKeySecretName", value=self.secret.secret_name)
        cdk.CfnOutput(self, "TableName", value=self.table.table_name)
        cdk.CfnOutput(self, "QueueUrl", value=self.queue.queue_url)
        cdk.CfnOutput(self, "DeadLetterQueueUrl", value=self.dlq.queue_url)
        cdk.CfnOutput(self, "IndexFailuresQueueUrl", value=self.stream_failures.queue_url)
        cdk.CfnOutput(self, "OpenSearchEndpoint", value=endpoint)
        cdk.CfnOutput(self, "OpenSearchIndex", value=S.index_name(user))
        cdk.CfnOutput(self, "FunctionRoleArn", value=self.role.role_arn,
                      description="list it in a Serverless collection's data access policy")

"""Point the Chalice app's event sources at this stack's resources.

Chalice packages the app as a SAM template in which every event source is an entry of its
function's `Events` property, e.g. `Resources.ExtractWorker.Properties.Events.
ExtractWorkerSqsEventSource` for `@app.on_sqs_message(queue="annals-extract")` on
`extract_worker`, and `Resources.IndexStream.Properties.Events.IndexStreamDynamodbEventSource`
for `@app.on_dynamodb_record(...)` on `index_stream`. Two things Chalice cannot express:

* the queue ARN: Chalice hard-codes `arn:…:sqs:<region>:<account>:annals-extract`, but each
  user's stack owns its own queue (queue names are unique per account and region);
* partial batch failures: `FunctionResponseTypes: [ReportBatchItemFailures]` (Powertools'
  BatchProcessor returns `batchItemFailures`), which Chalice has no option for.

`plan_overrides` walks the packaged SAM template and returns the property overrides to apply
(function logical id, property path, value). It is plain Python so it can be tested alone;
the stack applies the result with `chalice.get_resource(fn).add_property_override(...)`.
Handlers that do not exist yet produce no overrides, so the stack synthesises before and after
the handlers land. An SQS event on a queue other than `annals-extract` is an error: the stack
would otherwise deploy an event source pointing at a queue that does not exist.

`plan_limits` and `method_settings` do the same for the limits (settings.Limits): reserved
concurrency per function by what invokes it, the SQS event source's MaximumConcurrency, and
the API stage's throttling, the import routes' own only where the app has those routes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .settings import APP_QUEUE_NAME, IMPORT_ROUTES, Limits

PARTIAL_FAILURES = ["ReportBatchItemFailures"]
STREAM_MAX_RETRIES = 5  # then the record goes to the on-failure queue instead of blocking


@dataclass(frozen=True)
class Override:
    function: str  # logical id of the AWS::Serverless::Function
    event: str  # key under Properties.Events ("" for a property of the function itself)
    path: str  # property path for add_property_override
    value: Any


@dataclass(frozen=True)
class Targets:
    queue_arn: Any  # str or CDK token
    stream_arn: Any
    stream_failure_arn: Any  # on-failure destination of the stream event source (SQS)


def function_ids(sam: dict[str, Any]) -> list[str]:
    """Logical ids of the Lambda functions in Chalice's SAM template."""
    return sorted(k for k, r in sam.get("Resources", {}).items()
                  if r.get("Type") == "AWS::Serverless::Function")


def iter_events(sam: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(function logical id, event logical id, event) for every event source in `sam`."""
    for fn_id, resource in sorted(sam.get("Resources", {}).items()):
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        events = (resource.get("Properties") or {}).get("Events") or {}
        for ev_id, event in sorted(events.items()):
            yield fn_id, ev_id, event


def queue_name_of(queue: Any) -> str | None:
    """The queue name in Chalice's `{"Fn::Sub": "arn:…:<name>"}` (or a plain ARN string)."""
    if isinstance(queue, dict) and "Fn::Sub" in queue:
        queue = queue["Fn::Sub"]
    if isinstance(queue, str):
        return queue.rsplit(":", 1)[-1]
    return None


def plan_overrides(sam: dict[str, Any], targets: Targets) -> list[Override]:
    out: list[Override] = []
    for fn_id, ev_id, event in iter_events(sam):
        base = f"Events.{ev_id}.Properties"
        kind = event.get("Type")
        if kind == "SQS":
            name = queue_name_of((event.get("Properties") or {}).get("Queue"))
            if name != APP_QUEUE_NAME:
                raise ValueError(
                    f"{fn_id}.{ev_id} listens on SQS queue {name!r}; this stack only provides "
                    f"{APP_QUEUE_NAME!r} (add the queue to infra/ first)")
            out += [Override(fn_id, ev_id, f"{base}.Queue", targets.queue_arn),
                    Override(fn_id, ev_id, f"{base}.FunctionResponseTypes", PARTIAL_FAILURES)]
        elif kind == "DynamoDB":
            out += [
                Override(fn_id, ev_id, f"{base}.Stream", targets.stream_arn),
                Override(fn_id, ev_id, f"{base}.FunctionResponseTypes", PARTIAL_FAILURES),
                Override(fn_id, ev_id, f"{base}.MaximumRetryAttempts", STREAM_MAX_RETRIES),
                Override(fn_id, ev_id, f"{base}.DestinationConfig",
                         {"OnFailure": {"Destination": targets.stream_failure_arn}}),
            ]
    return out


# ---------------------------------------------------------------------- limits

API_FUNCTION = "APIHandler"  # Chalice's logical id for the function behind the REST API
REST_API = "RestAPI"


def function_kinds(sam: dict[str, Any]) -> dict[str, str]:
    """Each function's role, by what invokes it: "api", "queue" (SQS), "stream" (DynamoDB
    stream), "schedule" (EventBridge), or "other"."""
    kinds = {fn_id: "api" if fn_id == API_FUNCTION else "other" for fn_id in function_ids(sam)}
    by_event = {"SQS": "queue", "DynamoDB": "stream", "Schedule": "schedule"}
    for fn_id, _, event in iter_events(sam):
        kind = by_event.get(event.get("Type"))
        if kind and kinds[fn_id] == "other":
            kinds[fn_id] = kind
    return kinds


def plan_limits(sam: dict[str, Any], limits: Limits) -> list[Override]:
    """Reserved concurrency for the workers (and the API, when asked), and the SQS event
    source's MaximumConcurrency: the extraction worker polls no faster than it may run, so
    a message is never throttled back to the queue (and on towards the dead-letter queue)."""
    reserve = {"queue": limits.queue_concurrency, "stream": limits.stream_concurrency,
               "schedule": limits.schedule_concurrency, "api": limits.api_concurrency}
    out = [Override(fn_id, "", "ReservedConcurrentExecutions", reserve[kind])
           for fn_id, kind in sorted(function_kinds(sam).items())
           if reserve.get(kind, 0) > 0]
    if limits.queue_concurrency > 0:
        out += [Override(fn_id, ev_id, f"Events.{ev_id}.Properties.ScalingConfig",
                         {"MaximumConcurrency": limits.queue_concurrency})
                for fn_id, ev_id, event in iter_events(sam) if event.get("Type") == "SQS"]
    return out


def resource_path(path: str) -> str:
    """A route as a stage MethodSetting names it: a "/", then the path with every "/" as
    "~1" (`/v1/keys` → `/~1v1~1keys`); the root is "/"."""
    return "/" if path == "/" else "/" + path.replace("/", "~1")


def api_paths(sam: dict[str, Any]) -> dict[str, set[str]]:
    """The REST API's routes, {path: {METHOD, …}}, from Chalice's swagger definition."""
    api = sam.get("Resources", {}).get(REST_API) or {}
    paths = ((api.get("Properties") or {}).get("DefinitionBody") or {}).get("paths") or {}
    return {path: {m.upper() for m in methods} for path, methods in paths.items()}


def method_settings(sam: dict[str, Any], limits: Limits) -> list[dict[str, Any]]:
    """The stage's MethodSettings: the default for every route, then the import routes'."""
    out: list[dict[str, Any]] = [{
        "ResourcePath": "/*", "HttpMethod": "*",
        "ThrottlingRateLimit": limits.api_rate_limit,
        "ThrottlingBurstLimit": limits.api_burst_limit,
    }]
    routes = api_paths(sam)
    for method, path in IMPORT_ROUTES:
        if method in routes.get(path, ()):  # API Gateway refuses a setting for a method it lacks
            out.append({"ResourcePath": resource_path(path), "HttpMethod": method,
                        "ThrottlingRateLimit": limits.import_rate_limit,
                        "ThrottlingBurstLimit": limits.import_burst_limit})
    return out

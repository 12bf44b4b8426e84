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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .settings import APP_QUEUE_NAME

PARTIAL_FAILURES = ["ReportBatchItemFailures"]
STREAM_MAX_RETRIES = 5  # then the record goes to the on-failure queue instead of blocking


@dataclass(frozen=True)
class Override:
    function: str  # logical id of the AWS::Serverless::Function
    event: str  # key under Properties.Events
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

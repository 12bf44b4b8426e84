"""Powertools Logger, Metrics and Tracer, applied to every handler through one Chalice
middleware. Outside Lambda (annals serve, tests) tracing is off, metrics are not flushed and
the X-Ray SDK is never imported (it costs ~0.4 s of start-up), so nothing is printed or paid
that a local user did not ask for."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import cache
from typing import Any

IN_LAMBDA = bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))
SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "annals")


@cache
def logger():
    from aws_lambda_powertools import Logger

    return Logger(service=SERVICE)


@cache
def metrics():
    from aws_lambda_powertools import Metrics

    return Metrics(namespace="Annals", service=SERVICE)


@cache
def tracer():
    """The X-Ray tracer, in Lambda only."""
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE)


def handler_name(event: Any) -> str:
    """A stable metric name per kind of invocation: the route for HTTP, else the event type."""
    context = getattr(event, "context", None)
    path = context.get("resourcePath") if isinstance(context, dict) else None
    if path:
        return f"{event.method} {path}"
    return type(event).__name__


def observe(event: Any, get_response: Callable[[Any], Any]) -> Any:
    name = handler_name(event)
    start = time.perf_counter()
    failed = False
    try:
        if IN_LAMBDA:
            lambda_context = getattr(event, "lambda_context", None)
            if lambda_context is not None:
                logger().append_keys(request_id=getattr(lambda_context, "aws_request_id", None))
            with tracer().provider.in_subsegment(f"## {name}"):
                return get_response(event)
        return get_response(event)
    except Exception:
        failed = True
        logger().exception("handler failed", extra={"handler": name})
        raise
    finally:
        if IN_LAMBDA:  # Embedded Metric Format on stdout → CloudWatch
            elapsed_ms = (time.perf_counter() - start) * 1000
            flush_metrics(name, failed, elapsed_ms)


def job_metrics(job: str, failed: int, quarantined: int) -> None:
    """JobFailures / JobQuarantined per scheduled job (in Lambda; logged locally by the job)."""
    if not IN_LAMBDA:
        return
    from aws_lambda_powertools.metrics import MetricUnit

    m = metrics()
    m.add_dimension(name="job", value=job)
    m.add_metric(name="JobFailures", unit=MetricUnit.Count, value=failed)
    m.add_metric(name="JobQuarantined", unit=MetricUnit.Count, value=quarantined)
    m.flush_metrics()


def flush_metrics(name: str, failed: bool, elapsed_ms: float) -> None:
    from aws_lambda_powertools.metrics import MetricUnit

    m = metrics()
    m.add_dimension(name="handler", value=name)
    m.add_metric(name="Invocations", unit=MetricUnit.Count, value=1)
    m.add_metric(name="Errors", unit=MetricUnit.Count, value=int(failed))
    m.add_metric(name="LatencyMs", unit=MetricUnit.Milliseconds, value=elapsed_ms)
    m.flush_metrics()

"""Powertools Logger, Metrics and Tracer, applied to every handler through one Chalice
middleware. Outside Lambda (annals serve, tests) tracing is off and metrics are not flushed,
so nothing is printed that a local user did not ask for."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

IN_LAMBDA = bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))
SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "annals")

logger = Logger(service=SERVICE)
metrics = Metrics(namespace="Annals", service=SERVICE)
tracer = Tracer(service=SERVICE, disabled=not IN_LAMBDA)


def handler_name(event: Any) -> str:
    """A stable metric name per kind of invocation: the route for HTTP, else the event type."""
    context = getattr(event, "context", None)
    path = context.get("resourcePath") if isinstance(context, dict) else None
    if path:
        return f"{event.method} {path}"
    return type(event).__name__


def observe(event: Any, get_response: Callable[[Any], Any]) -> Any:
    name = handler_name(event)
    lambda_context = getattr(event, "lambda_context", None)
    if lambda_context is not None:
        logger.append_keys(request_id=getattr(lambda_context, "aws_request_id", None))
    start = time.perf_counter()
    failed = False
    try:
        if IN_LAMBDA:
            with tracer.provider.in_subsegment(f"## {name}"):
                return get_response(event)
        return get_response(event)
    except Exception:
        failed = True
        logger.exception("handler failed", extra={"handler": name})
        raise
    finally:
        elapsed_ms = (time.perf_counter() - start) * 1000
        metrics.add_dimension(name="handler", value=name)
        metrics.add_metric(name="Invocations", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="Errors", unit=MetricUnit.Count, value=int(failed))
        metrics.add_metric(name="LatencyMs", unit=MetricUnit.Milliseconds, value=elapsed_ms)
        if IN_LAMBDA:
            metrics.flush_metrics()  # Embedded Metric Format on stdout → CloudWatch
        else:
            metrics.clear_metrics()

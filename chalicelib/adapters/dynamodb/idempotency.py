"""Powertools idempotency for the SQS extraction worker, kept in the same DynamoDB table.

SQS delivers at least once; a redelivered message (same messageId) returns the stored result
instead of running the job again. Records live in their own partition (`IDEMPOTENCY#extract`)
and expire through the table's TTL attribute, so the single-table layout stays intact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)

from chalicelib.usecases.workers import run_extract_job
from chalicelib.wiring import Services

PARTITION = "IDEMPOTENCY#extract"


def idempotent_extract_runner(services: Services, *, client: Any = None,
                              expires_after_seconds: int = 24 * 3600,
                              lambda_context: Any = None) -> Callable[[Services, dict], dict]:
    """A `run` for workers.handle_extract_batch that records each job by its SQS message id."""
    persistence = DynamoDBPersistenceLayer(
        table_name=services.settings.table or "annals", key_attr="pk", sort_key_attr="sk",
        static_pk_value=PARTITION, expiry_attr="expires_at", boto3_client=client)
    config = IdempotencyConfig(event_key_jmespath="message_id",
                               expires_after_seconds=expires_after_seconds,
                               raise_on_no_idempotency_key=True)
    if lambda_context is not None:
        config.register_lambda_context(lambda_context)

    @idempotent_function(data_keyword_argument="job", config=config,
                         persistence_store=persistence)
    def run_once(job: dict) -> dict:
        return run_extract_job(services, job)

    return lambda _services, job: run_once(job=job)

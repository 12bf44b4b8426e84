"""Powertools idempotency kept in the stack's own DynamoDB table.

SQS delivers at least once; a redelivered message (same messageId) returns the stored result
instead of running the job again. Records live in their own partition (`IDEMPOTENCY#extract`)
and expire through the table's TTL attribute, so the single-table layout stays intact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PARTITION = "IDEMPOTENCY#extract"


def idempotent(run: Callable[[dict], dict], *, table: str, client: Any = None,
               expires_after_seconds: int = 24 * 3600, key: str = "message_id",
               lambda_context: Any = None) -> Callable[[dict], dict]:
    """`run(job)`, recorded by `job[key]`: a second call with the same key returns the first
    result without running again (until the record expires)."""
    from aws_lambda_powertools.utilities.idempotency import (
        DynamoDBPersistenceLayer,
        IdempotencyConfig,
        idempotent_function,
    )

    persistence = DynamoDBPersistenceLayer(
        table_name=table, key_attr="pk", sort_key_attr="sk", static_pk_value=PARTITION,
        expiry_attr="expires_at", boto3_client=client)
    config = IdempotencyConfig(event_key_jmespath=key,
                               expires_after_seconds=expires_after_seconds,
                               raise_on_no_idempotency_key=True)
    if lambda_context is not None:
        config.register_lambda_context(lambda_context)

    @idempotent_function(data_keyword_argument="job", config=config,
                         persistence_store=persistence)
    def run_once(job: dict) -> dict:
        return run(job)

    return lambda job: run_once(job=job)

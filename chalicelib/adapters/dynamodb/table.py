"""The table itself and the low-level calls that need care: creation, batch writes/reads that
retry unprocessed items, paginated queries, and reading why a transaction was cancelled.

Everything here uses the low-level boto3 client (wire-format items) — never the resource API.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.adapters.dynamodb import keys

BATCH_WRITE_MAX = 25
BATCH_GET_MAX = 100


class UnprocessedItemsError(RuntimeError):
    """A batch call still had unprocessed items after every retry."""


def create_table(client: Any, table_name: str, *, wait: bool = True) -> dict:
    """Create the Annals table: on-demand billing, stream NEW_AND_OLD_IMAGES, TTL on
    `expires_at`, GSIs gsi1 (events by time) and gsi2 (all sessions). Safe to re-run: an
    existing table is kept and only its TTL setting is ensured. Returns describe_table."""
    attrs = ["pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"]
    try:
        client.create_table(
            TableName=table_name,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in attrs],
            KeySchema=_key_schema("pk", "sk"),
            GlobalSecondaryIndexes=[
                {"IndexName": keys.EVENTS_BY_TIME, "KeySchema": _key_schema("gsi1pk", "gsi1sk"),
                 "Projection": {"ProjectionType": "ALL"}},
                {"IndexName": keys.SESSIONS_INDEX, "KeySchema": _key_schema("gsi2pk", "gsi2sk"),
                 "Projection": {"ProjectionType": "ALL"}},
            ],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
    except ClientError as exc:
        if error_code(exc) != "ResourceInUseException":
            raise
    if wait:
        client.get_waiter("table_exists").wait(
            TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    ttl = client.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        client.update_time_to_live(
            TableName=table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"})
    return client.describe_table(TableName=table_name)["Table"]


def _key_schema(hash_key: str, range_key: str) -> list[dict]:
    return [{"AttributeName": hash_key, "KeyType": "HASH"},
            {"AttributeName": range_key, "KeyType": "RANGE"}]


def error_code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


def cancellation_codes(exc: ClientError) -> list[str]:
    """Per-operation reasons of a TransactionCanceledException ('None' = that one was fine)."""
    return [r.get("Code", "None") for r in exc.response.get("CancellationReasons", [])]


class Backoff:
    """Bounded exponential backoff with full jitter."""

    def __init__(self, attempts: int = 8, base: float = 0.05, cap: float = 2.0,
                 sleep: Callable[[float], None] = time.sleep):
        self.attempts, self.base, self.cap, self.sleep = attempts, base, cap, sleep

    def pause(self, attempt: int) -> None:
        self.sleep(random.uniform(0, min(self.cap, self.base * 2**attempt)))


def batch_write(client: Any, table: str, requests: list[dict], backoff: Backoff) -> None:
    """BatchWriteItem in chunks of 25, re-sending UnprocessedItems with backoff; raises
    UnprocessedItemsError when items remain after `backoff.attempts` calls."""
    for i in range(0, len(requests), BATCH_WRITE_MAX):
        pending: dict = {table: requests[i:i + BATCH_WRITE_MAX]}
        for attempt in range(backoff.attempts):
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
            if attempt + 1 < backoff.attempts:
                backoff.pause(attempt)
        else:
            left = sum(len(v) for v in pending.values())
            raise UnprocessedItemsError(
                f"{left} write(s) still unprocessed after {backoff.attempts} attempts")


def batch_get(client: Any, table: str, key_list: list[dict], backoff: Backoff,
              projection: str | None = None, names: dict | None = None) -> list[dict]:
    """Strongly consistent BatchGetItem in chunks of 100, retrying UnprocessedKeys."""
    found: list[dict] = []
    for i in range(0, len(key_list), BATCH_GET_MAX):
        request: dict[str, Any] = {"Keys": key_list[i:i + BATCH_GET_MAX], "ConsistentRead": True}
        if projection:
            request["ProjectionExpression"] = projection
        if names:
            request["ExpressionAttributeNames"] = names
        pending: dict = {table: request}
        for attempt in range(backoff.attempts):
            resp = client.batch_get_item(RequestItems=pending)
            found.extend(resp.get("Responses", {}).get(table, []))
            pending = resp.get("UnprocessedKeys") or {}
            if not pending:
                break
            if attempt + 1 < backoff.attempts:
                backoff.pause(attempt)
        else:
            raise UnprocessedItemsError(
                f"{len(pending[table]['Keys'])} read(s) still unprocessed after"
                f" {backoff.attempts} attempts")
    return found


def query_all(client: Any, **request: Any) -> Iterator[dict]:
    """Every item of a Query, following LastEvaluatedKey."""
    while True:
        resp = client.query(**request)
        yield from resp.get("Items", [])
        last = resp.get("LastEvaluatedKey")
        if not last:
            return
        request["ExclusiveStartKey"] = last

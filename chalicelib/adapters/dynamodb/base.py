"""Shared plumbing of the DynamoDB store: the lazily created client and the few call shapes
(consistent get, transaction with cancellation reasons, optimistic retry) every part uses."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from botocore.exceptions import ClientError

from chalicelib.adapters.dynamodb.table import Backoff, cancellation_codes, error_code
from chalicelib.ports import ConflictError

TxResult = Literal["ok", "condition", "conflict"]


class Retry(Exception):
    """Raised inside an optimistic attempt: re-read and try again."""


def utcnow() -> datetime:
    return datetime.now(UTC)


class TableBase:
    def __init__(self, table_name: str, *, client: Any = None, region_name: str | None = None,
                 clock: Callable[[], datetime] = utcnow,
                 batch_backoff: Backoff | None = None,
                 contention_backoff: Backoff | None = None):
        self.table_name = table_name
        self._client = client
        self._region_name = region_name
        self._client_lock = threading.Lock()
        self.clock = clock
        # unprocessed batch items: a handful of patient retries, then raise
        self.batch_backoff = batch_backoff or Backoff(attempts=8, base=0.05, cap=2.0)
        # optimistic writes racing other writers: many short retries
        self.contention_backoff = contention_backoff or Backoff(attempts=30, base=0.005,
                                                                cap=0.25)

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    import boto3

                    self._client = boto3.client("dynamodb", region_name=self._region_name)
        return self._client

    # ------------------------------------------------------------ call shapes
    def _get(self, pk: str, sk: str) -> dict | None:
        resp = self.client.get_item(TableName=self.table_name, ConsistentRead=True,
                                    Key={"pk": {"S": pk}, "sk": {"S": sk}})
        return resp.get("Item")

    def _put(self, item: dict, **condition: Any) -> dict:
        return {"Put": {"TableName": self.table_name, "Item": item, **condition}}

    def _transact(self, operations: list[dict]) -> TxResult:
        """TransactWriteItems; a failed condition or a concurrent transaction on the same
        item is reported, anything else raised."""
        try:
            self.client.transact_write_items(TransactItems=operations)
            return "ok"
        except ClientError as exc:
            if error_code(exc) != "TransactionCanceledException":
                raise
            codes = cancellation_codes(exc)
            if "ConditionalCheckFailed" in codes:
                return "condition"
            if "TransactionConflict" in codes:
                return "conflict"
            raise

    def _optimistic(self, attempt: Callable[[], Any], what: str) -> Any:
        """Run `attempt` until it does not raise Retry (bounded, with jittered backoff)."""
        backoff = self.contention_backoff
        for n in range(backoff.attempts):
            try:
                return attempt()
            except Retry:
                if n + 1 < backoff.attempts:
                    backoff.pause(n)
        raise ConflictError(f"{what}: still contended after {backoff.attempts} attempts")

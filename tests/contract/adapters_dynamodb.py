"""DynamoDB Store adapter for the contract suite, on moto's in-process DynamoDB."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

TABLE = "annals-test"
REGION = "us-east-1"
FAKE_ENV = {
    "AWS_DEFAULT_REGION": REGION,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
}


class SerializedClient:
    """A boto3 client whose calls run one at a time.

    moto emulates TransactWriteItems by deep-copying the table and restoring the copy when
    a condition fails, so two threads inside moto at once can undo each other's writes —
    something real DynamoDB never does. Serialising whole calls keeps the service's
    per-call atomicity while the store's own read → decide → conditional-write races
    (which span several calls) still interleave freely across threads."""

    def __init__(self, client: Any):
        self._client = client
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return call


@contextmanager
def mocked_dynamodb() -> Iterator[Any]:
    """moto started with fake credentials; yields a raw client with the table created."""
    import boto3
    from moto import mock_aws

    from chalicelib.adapters.dynamodb import create_table

    with mock.patch.dict(os.environ, FAKE_ENV), mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_table(client, TABLE)
        yield client


def dynamodb_store(tmp_path) -> Iterator[Any]:
    from chalicelib.adapters.dynamodb import DynamoDBStore

    with mocked_dynamodb() as client:
        yield DynamoDBStore(TABLE, client=SerializedClient(client))


STORES = {"dynamodb": dynamodb_store}

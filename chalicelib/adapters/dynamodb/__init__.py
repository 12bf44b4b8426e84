"""DynamoDB adapter of the Store port: one table, generic keys (docs/dynamodb.md)."""

from chalicelib.adapters.dynamodb.store import DynamoDBStore
from chalicelib.adapters.dynamodb.table import Backoff, UnprocessedItemsError, create_table

__all__ = ["Backoff", "DynamoDBStore", "UnprocessedItemsError", "create_table"]

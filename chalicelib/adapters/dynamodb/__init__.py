"""DynamoDB adapter of the Store port: one table, generic keys (docs/dynamodb.md)."""

from .store import DynamoDBStore
from .table import Backoff, UnprocessedItemsError, create_table

__all__ = ["Backoff", "DynamoDBStore", "UnprocessedItemsError", "create_table"]

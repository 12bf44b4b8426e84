"""The table's stream records, as Lambda delivers them, turned into plain ChangeRecords."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chalicelib.adapters.dynamodb.codec import from_item
from chalicelib.ports import ChangeRecord


def change_records(records: Iterable[Any]) -> list[ChangeRecord]:
    """Chalice DynamoDBRecord objects (sequence_number, event_name, new_image and old_image in
    DynamoDB's typed JSON) → ChangeRecords with plain values."""
    return [ChangeRecord(id=r.sequence_number, event_name=r.event_name,
                         new_image=from_item(r.new_image) if r.new_image else None,
                         old_image=from_item(r.old_image) if r.old_image else None)
            for r in records]

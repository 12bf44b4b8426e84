"""DynamoDBStore: the Store port on one DynamoDB table (layout in docs/dynamodb.md).

Messages and sessions live in messages.py; this file adds events (head + one item per
version, optimistic versioning in a transaction), the time-ordered event listing, deliveries
(TTL + read-time expiry), the per-window recall counter and typed records (one item each).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.adapters.dynamodb import codec, keys
from chalicelib.adapters.dynamodb.base import Retry, utcnow
from chalicelib.adapters.dynamodb.messages import MessageOps
from chalicelib.adapters.dynamodb.table import (
    Backoff,
    batch_get,
    batch_write,
    error_code,
    query_all,
)
from chalicelib.domain.models import Delivery, Event
from chalicelib.domain.records import Record
from chalicelib.ports import ConflictError, Page, R

MAX_QUERY_PAGE = 1000


class DynamoDBStore(MessageOps):
    """Store port on DynamoDB. `client` is a low-level boto3 DynamoDB client (created lazily
    from `region_name` and the environment when omitted); `clock` is what read-time expiry
    compares `expires_at` with; deliveries are kept `delivery_ttl` after they are written."""

    def __init__(self, table_name: str, *, client: Any = None, region_name: str | None = None,
                 clock: Callable[[], datetime] = utcnow,
                 delivery_ttl: timedelta = timedelta(days=7),
                 batch_backoff: Backoff | None = None,
                 contention_backoff: Backoff | None = None):
        super().__init__(table_name, client=client, region_name=region_name, clock=clock,
                         batch_backoff=batch_backoff, contention_backoff=contention_backoff)
        self.delivery_ttl = delivery_ttl
        self._max_duration: dict[str, int] = {}  # space → a lower bound of the stored value

    # ------------------------------------------------------------ events
    def create_event(self, event: Event) -> Event:
        self._widen_max_duration(event)
        new = {"ConditionExpression": "attribute_not_exists(pk)"}
        result = self._transact([self._put(codec.event_item(event, head=True), **new),
                                 self._put(codec.event_item(event, head=False), **new)])
        if result != "ok":
            raise ConflictError(f"event {event.id} already exists in space {event.space}"
                                " (or is being created right now)")
        return event

    def update_event(self, event: Event, expected_version: int) -> Event:
        new = event.model_copy(update={"version": expected_version + 1})
        self._widen_max_duration(new)
        ops = [
            self._put(codec.event_item(new, head=True),
                      ConditionExpression="#v = :v",
                      ExpressionAttributeNames={"#v": "version"},
                      ExpressionAttributeValues={":v": {"N": str(expected_version)}}),
            self._put(codec.event_item(new, head=False),
                      ConditionExpression="attribute_not_exists(pk)"),
        ]

        def attempt() -> Event:
            result = self._transact(ops)
            if result == "condition":
                raise ConflictError(f"event {new.id} is not at version {expected_version}")
            if result == "conflict":  # another transaction on it right now: look again
                raise Retry
            return new

        return self._optimistic(attempt, f"update event {new.id}")

    def _widen_max_duration(self, event: Event) -> None:
        """Keep META.max_duration_us ≥ the duration of every event of the space, written
        *before* the event so a time-range query never misses it. Only grows."""
        duration = codec.event_duration_us(event)
        if self._max_duration.get(event.space, -1) >= duration:
            return
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key={"pk": {"S": keys.space_pk(event.space)}, "sk": {"S": keys.SPACE_META}},
                UpdateExpression="SET #d = :d, #e = :e, #sp = :sp",
                ConditionExpression="attribute_not_exists(#d) OR #d < :d",
                ExpressionAttributeNames={"#d": "max_duration_us", "#e": "entity",
                                          "#sp": "space"},
                ExpressionAttributeValues={":d": {"N": str(duration)},
                                           ":e": {"S": "space_meta"},
                                           ":sp": {"S": event.space}})
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise  # (a failed condition means the stored bound is already wide enough)
        self._max_duration[event.space] = max(duration, self._max_duration.get(event.space, -1))

    def _stored_max_duration(self, space: str) -> int:
        item = self._get(keys.space_pk(space), keys.SPACE_META)
        return int(item["max_duration_us"]["N"]) if item else 0

    def get_event(self, space: str, event_id: str) -> Event | None:
        item = self._get(keys.event_pk(space, event_id), keys.EVENT_HEAD)
        return codec.event_from(item) if item else None

    def load_events(self, space: str, ids: Sequence[str]) -> list[Event]:
        """BatchGetItem of the HEAD items (100 keys a call); missing ids are skipped."""
        key_list = [{"pk": {"S": keys.event_pk(space, event_id)}, "sk": {"S": keys.EVENT_HEAD}}
                    for event_id in dict.fromkeys(ids)]  # BatchGetItem refuses duplicates
        items = batch_get(self.client, self.table_name, key_list, self.batch_backoff)
        return [codec.event_from(i) for i in items]

    def event_history(self, space: str, event_id: str) -> list[Event]:
        items = query_all(
            self.client, TableName=self.table_name, ConsistentRead=True,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
            ExpressionAttributeValues={":pk": {"S": keys.event_pk(space, event_id)},
                                       ":lo": {"S": "V#"}, ":hi": {"S": "V$"}})
        return [codec.event_from(i) for i in items]

    def list_events(self, space: str, *, start: datetime | None = None,
                    end: datetime | None = None, statuses: Sequence[str] = ("active",),
                    limit: int = 50, cursor: str | None = None,
                    kinds: Sequence[str] | None = None) -> Page:
        """Events overlapping [start, end), ordered by (start, id), `limit` per page.

        One Query on gsi1 (space → start#id): the sort key is bounded above by `end` and
        below by `start - max event duration of the space`, so a long event that began
        before `start` is still found; the filter then keeps only events ending after
        `start` with a wanted status and kind. Pages of the Query are read until limit + 1 matches
        (or the end): a page is never short while more events exist, and the cursor is the
        position of the last event returned, not DynamoDB's LastEvaluatedKey."""
        after = codec.decode_cursor(cursor) if cursor else None
        limit = max(1, limit)
        hi = keys.time_key_of(end) if end is not None else keys.MAX_TIME_KEY + "$"
        lo = keys.MIN_TIME_KEY
        if start is not None:
            lowest = keys.epoch_us(start) - self._stored_max_duration(space)
            lo = keys.time_key(lowest)
        request: dict[str, Any] = {
            "TableName": self.table_name, "IndexName": keys.EVENTS_BY_TIME,
            "KeyConditionExpression": "gsi1pk = :p AND gsi1sk BETWEEN :lo AND :hi",
            "ExpressionAttributeValues": {":p": {"S": keys.events_gsi1pk(space)},
                                          ":lo": {"S": lo}, ":hi": {"S": hi}},
        }
        if after is not None and after >= hi:
            return Page(events=[], next_cursor=None)
        if after is not None and after >= lo:  # (a cursor below the range is simply passed)
            request["ExclusiveStartKey"] = codec.to_item(keys.event_cursor_key(space, after))
        if lo > hi:
            return Page(events=[], next_cursor=None)
        if kinds is not None and not kinds:
            return Page(events=[], next_cursor=None)
        _add_filter(request, start, statuses, kinds)
        matched = self._scan_matches(request, limit + 1)
        events = [codec.event_from(i) for i in matched[:limit]]
        next_cursor = None
        if len(matched) > limit:
            next_cursor = codec.encode_cursor(matched[limit - 1]["gsi1sk"]["S"])
        return Page(events=events, next_cursor=next_cursor)

    def _scan_matches(self, request: dict, wanted: int) -> list[dict]:
        """Follow Query pages until `wanted` filtered items are found or the range ends.
        DynamoDB applies Limit before the filter, so the page size doubles while the filter
        keeps discarding."""
        matched: list[dict] = []
        page_size = min(wanted, MAX_QUERY_PAGE)
        while True:
            resp = self.client.query(**request, Limit=page_size)
            for item in resp.get("Items", []):
                matched.append(item)
                if len(matched) >= wanted:
                    return matched
            last = resp.get("LastEvaluatedKey")
            if not last:
                return matched
            request["ExclusiveStartKey"] = last
            page_size = min(page_size * 2, MAX_QUERY_PAGE)

    # ------------------------------------------------------------ deliveries
    def add_deliveries(self, space: str, window: str, refs: Sequence[str],
                       at: datetime) -> list[Delivery]:
        counter = self._get(keys.window_pk(space, window), keys.WINDOW_COUNTER)
        count = int(counter["recalls"]["N"]) if counter else 0
        out = [Delivery(space=space, window=window, ref=ref, delivered_at=at,
                        recall_count=count) for ref in dict.fromkeys(refs)]
        # TTL counts from when the delivery is written (or its time, if later), so
        # back-dated deliveries are still stored for a while and not dropped on arrival.
        written = max(keys.epoch_us(at), keys.epoch_us(self.clock()))
        expires_at = math.ceil((written + self.delivery_ttl // timedelta(microseconds=1)) / 1e6)
        batch_write(self.client, self.table_name,
                    [{"PutRequest": {"Item": codec.delivery_item(d, expires_at)}} for d in out],
                    self.batch_backoff)
        return out

    def recent_deliveries(self, space: str, window: str, since: datetime) -> list[Delivery]:
        """Deliveries at or after `since`, oldest first. TTL deletion lags (up to ~48 h), so
        items whose `expires_at` has passed are filtered out here, at read time."""
        items = query_all(
            self.client, TableName=self.table_name, ConsistentRead=True,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
            FilterExpression="attribute_not_exists(expires_at) OR expires_at > :now",
            ExpressionAttributeValues={
                ":pk": {"S": keys.window_pk(space, window)},
                ":lo": {"S": "DLV#" + keys.time_key_of(since)},
                ":hi": {"S": keys.DELIVERIES_END},
                ":now": {"N": str(math.floor(self.clock().timestamp()))}})
        return [codec.delivery_from(i) for i in items]

    def purge_deliveries(self, before: datetime) -> int:
        """No-op: every delivery item carries `expires_at` and DynamoDB's TTL deletes it;
        reads already ignore expired items, so scanning the table here would only cost."""
        return 0

    def bump_recall_count(self, space: str, window: str) -> int:
        resp = self.client.update_item(
            TableName=self.table_name,
            Key={"pk": {"S": keys.window_pk(space, window)}, "sk": {"S": keys.WINDOW_COUNTER}},
            UpdateExpression="ADD recalls :one SET #e = :e, #sp = :sp, #w = :w",
            ExpressionAttributeNames={"#e": "entity", "#sp": "space", "#w": "window"},
            ExpressionAttributeValues={":one": {"N": "1"}, ":e": {"S": "recall_counter"},
                                       ":sp": {"S": space}, ":w": {"S": window}},
            ReturnValues="UPDATED_NEW")
        return int(resp["Attributes"]["recalls"]["N"])

    def recall_count(self, space: str, window: str) -> int:
        counter = self._get(keys.window_pk(space, window), keys.WINDOW_COUNTER)
        return int(counter["recalls"]["N"]) if counter else 0

    # ------------------------------------------------------------ typed records
    def put_record(self, record: Record) -> None:
        self.client.put_item(TableName=self.table_name, Item=codec.record_item(record))

    def get_record(self, kind: type[R], scope: str, key: str = "") -> R | None:
        item = self._get(keys.record_pk(kind.KIND, scope), keys.record_sk(key))
        return codec.record_from(kind, item) if item else None

    def list_records(self, kind: type[R], scope: str) -> list[R]:
        """One Query of the (kind, scope) partition, every page; sort key order is key order."""
        items = query_all(
            self.client, TableName=self.table_name, ConsistentRead=True,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :k)",
            ExpressionAttributeValues={":pk": {"S": keys.record_pk(kind.KIND, scope)},
                                       ":k": {"S": keys.RECORDS_BEGIN}})
        return [codec.record_from(kind, i) for i in items]

    def delete_records(self, kind: type[R], scope: str, keys: Sequence[str]) -> int:
        # One DeleteItem per key rather than BatchWriteItem: only DeleteItem says whether the
        # item was there, and the count must be of records actually deleted.
        return sum(self._delete_record(kind.KIND, scope, key) for key in dict.fromkeys(keys))

    def _delete_record(self, kind: str, scope: str, key: str) -> bool:
        resp = self.client.delete_item(
            TableName=self.table_name, ReturnValues="ALL_OLD",
            Key={"pk": {"S": keys.record_pk(kind, scope)}, "sk": {"S": keys.record_sk(key)}})
        return "Attributes" in resp


def _add_filter(request: dict, start: datetime | None, statuses: Sequence[str],
                kinds: Sequence[str] | None = None) -> None:
    parts: list[str] = []
    values = request["ExpressionAttributeValues"]
    names: dict[str, str] = {}
    if statuses:
        placeholders = []
        for i, status in enumerate(dict.fromkeys(statuses)):
            values[f":s{i}"] = {"S": status}
            placeholders.append(f":s{i}")
        parts.append(f"#st IN ({', '.join(placeholders)})")
        names["#st"] = "status"
    if kinds:  # every head item carries its kind (codec.event_item dumps the whole event)
        placeholders = []
        for i, kind in enumerate(dict.fromkeys(kinds)):
            values[f":k{i}"] = {"S": kind}
            placeholders.append(f":k{i}")
        wanted = f"#kd IN ({', '.join(placeholders)})"
        # an item written without one is an event (the model's default), as the SQLite
        # adapter reads it
        parts.append(f"({wanted} OR attribute_not_exists(#kd))" if "event" in kinds
                     else wanted)
        names["#kd"] = "kind"
    if names:
        request["ExpressionAttributeNames"] = names
    if start is not None:
        values[":start"] = {"N": str(keys.epoch_us(start))}
        parts.append("end_us > :start")
    if parts:
        request["FilterExpression"] = " AND ".join(parts)

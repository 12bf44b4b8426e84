"""Conversions between domain models and DynamoDB items (low-level client wire format).

Numbers: DynamoDB has one decimal number type (38 digits, magnitude 1e-130 … 1e126) and the
boto3 serializer refuses Python floats. Values go through JSON first (the same semantics
SQLite's JSON record bodies have: tuples become lists, keys become strings) and JSON floats
are parsed straight into Decimal from their shortest repr, so 0.1 stays exactly "0.1". On the
way back an integral number becomes an int and any other a float (DynamoDB itself may
normalise 1.0 to 1; the two compare equal in Python).
"""

from __future__ import annotations

import base64
import binascii
import json
from decimal import Decimal
from typing import Any, TypeVar

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from chalicelib.adapters.dynamodb import keys
from chalicelib.domain.models import Delivery, Event, Message
from chalicelib.domain.records import Record

R = TypeVar("R", bound=Record)
_ser = TypeSerializer()
_deser = TypeDeserializer()
_MAX_DIGITS = 38
_MAX_ADJUSTED_EXP = 125  # |x| < 1e126
_MIN_ADJUSTED_EXP = -130  # |x| >= 1e-130


def to_item(plain: dict[str, Any]) -> dict[str, dict]:
    """Plain Python values (str, int, bool, None, Decimal, list, dict) → wire attributes."""
    return {k: _ser.serialize(v) for k, v in plain.items()}


def from_item(item: dict[str, dict]) -> dict[str, Any]:
    return {k: _plain(_deser.deserialize(v)) for k, v in item.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, set):  # never written by this adapter, but be total
        return sorted(_plain(v) for v in value)
    return value


def json_value(value: Any) -> Any:
    """Any JSON-able value → a value the serializer accepts, floats as exact Decimals.

    ValueError for NaN/Infinity and numbers DynamoDB cannot hold, before any write."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f"DynamoDB cannot store this value: {exc}") from None
    decoded = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    _check_numbers(decoded)
    return decoded


def _check_numbers(value: Any) -> None:
    if isinstance(value, Decimal):
        if value.is_zero():
            return
        digits = len(value.normalize().as_tuple().digits)
        exp = value.adjusted()
        if digits > _MAX_DIGITS or not _MIN_ADJUSTED_EXP <= exp <= _MAX_ADJUSTED_EXP:
            raise ValueError(f"DynamoDB cannot store the number {value}")
    elif isinstance(value, list):
        for v in value:
            _check_numbers(v)
    elif isinstance(value, dict):
        for v in value.values():
            _check_numbers(v)


# ------------------------------------------------------------------ messages
def message_item(m: Message) -> dict[str, dict]:
    return to_item({
        "pk": keys.messages_pk(m.space, m.session), "sk": keys.seq_key(m.seq),
        "entity": "message", "space": m.space, "session": m.session, "seq": m.seq,
        "role": m.role, "speaker": m.speaker, "content": m.content,
        "at": m.at.isoformat(), "at_us": keys.epoch_us(m.at), "content_hash": m.content_hash,
    })


def message_from(item: dict[str, dict]) -> Message:
    return Message.model_validate(from_item(item))


# ------------------------------------------------------------------ events
def event_item(event: Event, *, head: bool) -> dict[str, dict]:
    """The current version (`head`, carrying the time-index keys) or a history record."""
    start_us, end_us = keys.epoch_us(event.when.start), keys.epoch_us(event.when.end)
    plain: dict[str, Any] = json_value(event.model_dump(mode="json"))
    plain.update(
        pk=keys.event_pk(event.space, event.id),
        sk=keys.EVENT_HEAD if head else keys.version_sk(event.version),
        entity="event" if head else "event_version",
        start_us=start_us, end_us=end_us,
    )
    if head:
        plain.update(gsi1pk=keys.events_gsi1pk(event.space),
                     gsi1sk=keys.event_gsi1sk(start_us, event.id))
    return to_item(plain)


def event_from(item: dict[str, dict]) -> Event:
    plain = from_item(item)
    return Event.model_validate({k: plain[k] for k in Event.model_fields if k in plain})


def event_duration_us(event: Event) -> int:
    return keys.epoch_us(event.when.end) - keys.epoch_us(event.when.start)


# ------------------------------------------------------------------ deliveries
def delivery_item(d: Delivery, expires_at: int) -> dict[str, dict]:
    return to_item({
        "pk": keys.window_pk(d.space, d.window),
        "sk": keys.delivery_sk(keys.epoch_us(d.delivered_at), d.ref),
        "entity": "delivery", "space": d.space, "window": d.window, "ref": d.ref,
        "delivered_at": d.delivered_at.isoformat(), "recall_count": d.recall_count,
        "expires_at": expires_at,
    })


def delivery_from(item: dict[str, dict]) -> Delivery:
    plain = from_item(item)
    return Delivery.model_validate({k: plain[k] for k in Delivery.model_fields if k in plain})


# ------------------------------------------------------------------ typed records
def record_item(record: Record) -> dict[str, dict]:
    """One item per record; `body` is the model's JSON (a map, floats as exact Decimals)."""
    return to_item({
        "pk": keys.record_pk(record.KIND, record.scope), "sk": keys.record_sk(record.key),
        "entity": "record", "kind": record.KIND, "scope": record.scope, "key": record.key,
        "body": json_value(record.model_dump(mode="json")),
    })


def record_from(kind: type[R], item: dict[str, dict]) -> R:
    return kind.model_validate(from_item(item)["body"])


# ------------------------------------------------------------------ cursors
def encode_cursor(gsi1sk: str) -> str:
    """Opaque cursor: base64url of the JSON LastEvaluatedKey, reduced to the one attribute
    the request does not already imply (the GSI sort key: start time + event id). The rest
    of the key is rebuilt from the space, which keeps cursors short (the API caps them at
    512 characters) and lets a cursor be used with other filters, as in SQLite."""
    raw = json.dumps({"gsi1sk": gsi1sk}, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str) -> str:
    """The gsi1sk inside a cursor; ValueError on anything this adapter did not write."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        value = data["gsi1sk"]
        if not isinstance(value, str) or len(data) != 1:
            raise ValueError
        keys.split_event_gsi1sk(value)
        return value
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeError) as exc:
        raise ValueError("invalid cursor") from exc

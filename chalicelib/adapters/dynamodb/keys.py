"""Key layout of the single DynamoDB table (see docs/dynamodb.md for the full table).

Every item has generic keys `pk`/`sk`; two sparse GSIs use `gsi1pk`/`gsi1sk` (events by
time) and `gsi2pk`/`gsi2sk` (every session of every space). Numbers inside sort keys are
zero-padded so that string order is numeric order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EVENTS_BY_TIME = "gsi1"
SESSIONS_INDEX = "gsi2"
SESSIONS_PARTITION = "SESSIONS"

SEQ_WIDTH = 16  # message seq is 0 ≤ seq ≤ 2**53 (the API bound) < 10**16
MAX_SEQ = 10**SEQ_WIDTH - 1
VERSION_WIDTH = 10

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
# Any datetime (year 1 … 9999) shifted by 10**17 µs is a positive 17-18 digit number.
_TIME_OFFSET_US = 10**17
TIME_WIDTH = 18

EVENT_HEAD = "HEAD"
SPACE_META = "META"
WINDOW_COUNTER = "COUNTER"


def esc(part: str) -> str:
    """Escape a caller-supplied id for use inside a key: `#` separates key parts."""
    return part.replace("%", "%25").replace("#", "%23")


# ------------------------------------------------------------------ time
def epoch_us(dt: datetime) -> int:
    """Exact epoch microseconds (naive datetimes are taken as UTC)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // _US


def from_epoch_us(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def time_key(us: int) -> str:
    """Fixed-width, sortable form of epoch microseconds (clamped to the key range, which
    covers every datetime; only computed bounds such as `start - max duration` can leave it)."""
    return f"{min(max(us + _TIME_OFFSET_US, 0), 10**TIME_WIDTH - 1):0{TIME_WIDTH}d}"


def time_key_of(dt: datetime) -> str:
    return time_key(epoch_us(dt))


MIN_TIME_KEY = "0" * TIME_WIDTH
MAX_TIME_KEY = "9" * TIME_WIDTH


# ------------------------------------------------------------------ spaces, sessions, messages
def space_pk(space: str) -> str:
    """Partition of a space's small items: its sessions and its META (max event duration)."""
    return f"SP#{esc(space)}"


def session_sk(session: str) -> str:
    return f"SES#{esc(session)}"


def session_gsi2sk(space: str, session: str) -> str:
    return f"{esc(space)}#{esc(session)}"


def messages_pk(space: str, session: str) -> str:
    return f"SP#{esc(space)}#SES#{esc(session)}"


def seq_key(seq: int) -> str:
    if not 0 <= seq <= MAX_SEQ:
        raise ValueError(f"message seq must be between 0 and {MAX_SEQ}, got {seq}")
    return f"MSG#{seq:0{SEQ_WIDTH}d}"


MESSAGES_END = "MSG$"  # just above every "MSG#…" sort key


# ------------------------------------------------------------------ events
def event_pk(space: str, event_id: str) -> str:
    return f"SP#{esc(space)}#EV#{esc(event_id)}"


def version_sk(version: int) -> str:
    return f"V#{version:0{VERSION_WIDTH}d}"


def events_gsi1pk(space: str) -> str:
    return f"SP#{esc(space)}#EVENTS"


def event_gsi1sk(start_us: int, event_id: str) -> str:
    # the id is the last part, so it needs no escaping: order is (start, id) like SQLite
    return f"{time_key(start_us)}#{event_id}"


def split_event_gsi1sk(value: str) -> tuple[str, str]:
    """(time key, event id) of a gsi1sk; ValueError if it is not one."""
    tkey, sep, event_id = value.partition("#")
    if len(tkey) != TIME_WIDTH or not tkey.isdigit() or sep != "#" or not event_id:
        raise ValueError("not an event time key")
    return tkey, event_id


def event_cursor_key(space: str, gsi1sk: str) -> dict[str, str]:
    """The full GSI LastEvaluatedKey of the event item with this gsi1sk."""
    _, event_id = split_event_gsi1sk(gsi1sk)
    return {"pk": event_pk(space, event_id), "sk": EVENT_HEAD,
            "gsi1pk": events_gsi1pk(space), "gsi1sk": gsi1sk}


# ------------------------------------------------------------------ deliveries
def window_pk(space: str, window: str) -> str:
    return f"SP#{esc(space)}#WIN#{esc(window)}"


def delivery_sk(delivered_us: int, ref: str) -> str:
    return f"DLV#{time_key(delivered_us)}#{ref}"


DELIVERIES_END = "DLV$"  # just above every "DLV#…" sort key


# ------------------------------------------------------------------ typed records
def record_pk(kind: str, scope: str) -> str:
    """Partition of one kind of record in one scope (a space, or `space/session`)."""
    return f"REC#{esc(kind)}#{esc(scope)}"


def record_sk(key: str) -> str:
    # The key is the last part, so it needs no escaping; left as is, DynamoDB's byte order
    # of sort keys is the key's own order (escaping '#' as '%23' would move it past '$').
    return f"K#{key}"


RECORDS_BEGIN = "K#"  # every record sort key starts with this

"""Memory refs: how a card, a delivery and an index document name what they point at.

>>> event_ref("ev_1")
'event:ev_1'
>>> message_ref("chat-1", 7)
'message:chat-1:7'
>>> parse_ref("message:chat:1:7")
MessageRef(session='chat:1', seq=7)
"""

from __future__ import annotations

from typing import NamedTuple


class EventRef(NamedTuple):
    id: str


class MessageRef(NamedTuple):
    session: str
    seq: int


def event_ref(event_id: str) -> str:
    return f"event:{event_id}"


def message_ref(session: str, seq: int) -> str:
    return f"message:{session}:{seq}"


EVENT_LABEL_CHARS = 6


def event_label(event_id: str) -> str:
    """How a reading prompt names an existing event, and how a reader's correction names it
    back: the tail of its id, stable between a reading task's hand-out and its answer (an
    index would shift with new events)."""
    return event_id[-EVENT_LABEL_CHARS:]


def parse_ref(ref: str) -> EventRef | MessageRef:
    """ValueError for anything that is not an event or message ref. A session may itself
    contain ':' (ids allow it), so the seq is what follows the last one."""
    kind, _, rest = ref.partition(":")
    if kind == "event" and rest:
        return EventRef(rest)
    if kind == "message":
        session, _, seq = rest.rpartition(":")
        if session and seq.isdigit():
            return MessageRef(session, int(seq))
    raise ValueError(f"not a memory ref: {ref!r}")

"""Domain models and API schemas (pydantic v2).

Everything that crosses a boundary — HTTP bodies, store rows, index documents — is one of
these models, so validation happens once, at the edge.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from chalicelib.domain.dates import when_label
from chalicelib.domain.errors import BadRequest
from chalicelib.domain.refs import event_ref, message_ref

Role = Literal["user", "assistant", "system"]
Granularity = Literal["minute", "hour", "part_of_day", "day", "week", "month", "year"]
EventKind = Literal["event", "note", "summary"]
EventStatus = Literal["active", "archived", "superseded"]
Verdict = Literal["hit", "expanded", "forgot", "unparsed", "none"]

# Space, session and window ids appear in URLs and in index keys; keep them to a safe set.
IdStr = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:@-]+$")]


_ID_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")


def check_id(value: str, name: str) -> str:
    """Path parameters are validated like body fields: a clear 400, never a stored oddity."""
    if not _ID_RE.match(value):
        raise BadRequest(f"{name} must be 1-128 characters of letters, digits and _ . : @ -",
                         code=f"invalid_{name}")
    return value


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("time must carry a timezone offset, e.g. 2026-06-15T10:00:00+08:00")
    return value


AwareDatetime = Annotated[datetime, AfterValidator(_aware)]


class Strict(BaseModel):
    """Request bodies reject unknown fields so typos fail loudly instead of being ignored."""

    model_config = ConfigDict(extra="forbid")


class StrictText(Strict):
    """Hand-written text (not evidence): surrounding whitespace is stripped, so a blank string
    fails its min_length instead of slipping in. Messages stay verbatim."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


# ---------------------------------------------------------------- messages


class MessageIn(Strict):
    seq: int = Field(ge=0, le=2**53)
    role: Role
    speaker: str | None = Field(default=None, max_length=100)
    content: str = Field(min_length=1, max_length=20_000)
    at: AwareDatetime


class Message(BaseModel):
    space: str
    session: str
    seq: int
    role: Role
    speaker: str
    content: str
    at: datetime
    content_hash: str

    @classmethod
    def from_input(cls, space: str, session: str, item: MessageIn) -> Message:
        """From a validated MessageIn. model_construct: the fields are already checked (and
        ingest builds one per message, so validating twice would be most of its cost)."""
        speaker = item.speaker or default_speaker(item.role)
        return cls.model_construct(
            space=space, session=session, seq=item.seq, role=item.role, speaker=speaker,
            content=item.content, at=item.at,
            content_hash=content_hash(item.role, speaker, item.content, item.at),
        )

    @property
    def ref(self) -> str:
        return message_ref(self.session, self.seq)


def default_speaker(role: str) -> str:
    return {"user": "user", "assistant": "assistant"}.get(role, "system")


def content_hash(role: str, speaker: str, content: str, at: datetime) -> str:
    """Hash of everything that makes a message the same piece of evidence."""
    raw = f"{role}\x1f{speaker}\x1f{content}\x1f{at.isoformat()}"  # the same bytes as a join
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


class PutMessagesRequest(Strict):
    messages: list[MessageIn] = Field(min_length=1, max_length=1000)

    @field_validator("messages")
    @classmethod
    def _unique_seq(cls, messages: list[MessageIn]) -> list[MessageIn]:
        seqs = [m.seq for m in messages]
        if len(seqs) != len(set(seqs)):
            raise ValueError("each seq may appear only once per request")
        return messages


class PutMessagesResponse(BaseModel):
    accepted: int
    unchanged: int
    changed: int
    seqs: dict[str, list[int]] = Field(
        default_factory=dict, description="seqs per outcome: accepted / unchanged / changed"
    )


# ---------------------------------------------------------------- events


class When(BaseModel):
    start: datetime
    end: datetime  # exclusive
    granularity: Granularity = "day"

    @model_validator(mode="after")
    def _ordered(self) -> When:
        _aware(self.start)
        _aware(self.end)
        if self.end <= self.start:
            raise ValueError("when.end must be after when.start")
        return self

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return self.start < end and start < self.end

    @property
    def label(self) -> str:
        """Human date label: a day, a month, or a range (chalicelib.domain.dates)."""
        return when_label(self)


class Source(BaseModel):
    session: str
    seq_start: int
    seq_end: int  # inclusive
    preview: str = ""

    def covers(self, session: str, seq: int) -> bool:
        return self.session == session and self.seq_start <= seq <= self.seq_end


class Event(BaseModel):
    id: str
    space: str
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=4000)
    when: When
    importance: int = Field(default=5, ge=1, le=10)
    participants: list[str] = Field(default_factory=list)
    location: str | None = None
    tags: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    kind: EventKind = "event"
    status: EventStatus = "active"
    plan: bool = False  # the event is something planned for `when`, not yet happened
    version: int = 1
    created_at: datetime
    updated_at: datetime

    @property
    def ref(self) -> str:
        return event_ref(self.id)


class EventDraft(BaseModel):
    """What an extractor proposes; the use-case gives it an id, a space and a version."""

    title: str
    summary: str
    when: When
    importance: int = Field(default=5, ge=1, le=10)
    participants: list[str] = Field(default_factory=list)
    location: str | None = None
    tags: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    kind: EventKind = "event"
    plan: bool = False


class SaveEventRequest(StrictText):
    """memory_save: a memory written by hand."""

    summary: str = Field(min_length=1, max_length=4000)
    title: str | None = Field(default=None, max_length=200)
    happened_at: AwareDatetime | None = None
    details: str | None = Field(default=None, max_length=4000)
    tags: list[str] = Field(default_factory=list, max_length=20)
    importance: int = Field(default=6, ge=1, le=10)
    participants: list[str] = Field(default_factory=list, max_length=20)


class EventFields(StrictText):
    """The editable fields of an event, all optional: absent means unchanged."""

    title: str | None = Field(default=None, min_length=1, max_length=200)
    summary: str | None = Field(default=None, min_length=1, max_length=4000)
    when: When | None = None
    importance: int | None = Field(default=None, ge=1, le=10)
    participants: list[str] | None = None
    location: str | None = None
    tags: list[str] | None = None


class PatchEventRequest(EventFields):
    version: int = Field(ge=1, description="the version you read; 409 if it changed since")
    status: Literal["active", "archived"] | None = None


class ExtractRequest(Strict):
    session: IdStr | None = None


class EventListQuery(BaseModel):
    """Query string of GET …/events."""

    model_config = ConfigDict(extra="forbid")

    start: AwareDatetime | None = Field(default=None, alias="from")
    end: AwareDatetime | None = Field(default=None, alias="to")
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Field(default=None, max_length=512)
    status: Literal["active", "archived", "superseded", "all"] = "active"

    @property
    def statuses(self) -> tuple[str, ...]:
        if self.status == "all":
            return ("active", "archived", "superseded")
        return (self.status,)


class EventList(BaseModel):
    events: list[Event]
    next_cursor: str | None = None


# ---------------------------------------------------------------- recall


class Card(BaseModel):
    ref: str
    kind: Literal["event", "message"]
    title: str
    text: str
    when: When | None = None
    sources: list[Source] = Field(default_factory=list)
    importance: int | None = None
    speaker: str | None = None  # who said it (a message) or whom it is about (an event)
    score: float
    score_parts: dict[str, float] = Field(default_factory=dict)


class Layer(BaseModel):
    layer: int
    start: datetime
    end: datetime
    candidates: int
    hits: int


class RecallRequest(Strict):
    query: str = Field(min_length=1, max_length=4000)
    time_hint: str | None = Field(default=None, max_length=200)
    window: IdStr | None = None
    limit: int | None = Field(default=None, ge=1, le=50, description="alias of max_cards")
    max_cards: int | None = Field(default=None, ge=1, le=50)
    now: AwareDatetime | None = None
    format: Literal["blocks", "timeline", "compact"] = "blocks"
    recipe: str | None = Field(default=None, max_length=64)

    @property
    def card_limit(self) -> int | None:
        return self.max_cards or self.limit


class RecallResponse(BaseModel):
    verdict: Verdict
    layers: list[Layer] = Field(default_factory=list)
    cards: list[Card]
    context: str
    context_tokens: int = 0
    recalled_ids: list[str]
    injected: bool = False
    trace: list[str]


# ---------------------------------------------------------------- deliveries


class DeliveryRequest(Strict):
    window: IdStr
    ids: list[str] = Field(min_length=1, max_length=50)
    at: AwareDatetime | None = None


class Delivery(BaseModel):
    space: str
    window: str
    ref: str
    delivered_at: datetime
    recall_count: int = 0  # the window's recall counter at delivery time


# ---------------------------------------------------------------- sessions and jobs


class SessionState(BaseModel):
    space: str
    session: str
    extracted_upto: int = -1  # highest seq already extracted
    dirty_from: int | None = None  # lowest seq changed/deleted since extraction
    last_message_at: datetime | None = None
    # The time of the oldest message not yet extracted (its own `at`, so an imported old
    # conversation counts as having waited long enough).
    pending_since: datetime | None = None
    message_count: int = 0


# ---------------------------------------------------------------- index documents


class IndexDoc(BaseModel):
    """One searchable unit (an event or a message) as both indexes see it."""

    id: str  # the card ref: "event:ID" or "message:SESSION:SEQ"
    space: str
    kind: Literal["event", "message"]
    text: str  # what is tokenized for keywords (and embedded, unless embed_text is given)
    embed_text: str | None = Field(default=None, exclude=True)  # what the embedder reads
    start: float  # epoch seconds of `when`
    end: float
    status: EventStatus = "active"
    importance: int = 5
    vector: list[float] | None = None

    def model_post_init(self, __context: Any) -> None:
        if self.end < self.start:
            raise ValueError("end before start")


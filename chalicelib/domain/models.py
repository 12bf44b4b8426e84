"""Domain models and API schemas (pydantic v2).

Everything that crosses a boundary — HTTP bodies, store rows, index documents — is one of
these models, so validation happens once, at the edge.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

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
from chalicelib.domain.names import real_names
from chalicelib.domain.refs import event_ref, message_ref

_Model = TypeVar("_Model", bound=BaseModel)
Role = Literal["user", "assistant", "system"]
Granularity = Literal["minute", "hour", "part_of_day", "day", "week", "month", "year"]
EventKind = Literal["event", "note", "summary"]
EventStatus = Literal["active", "archived", "superseded"]
Verdict = Literal["hit", "expanded", "forgot", "unparsed", "none", "cooled"]
VERDICT_TEXT = ("hit / expanded: memories found (expanded: after widening a named time); "
                "forgot: a named time holds no memory (say you do not remember); unparsed: "
                "the time hint was not understood; none: nothing relevant enough; cooled: what "
                "was found was sent to this window lately (it is in the chat already). none and "
                "cooled both mean: add nothing")

# Space, session and window ids appear in URLs and in index keys; keep them to a safe set.
# Dots alone ("." and "..") are refused: they read as paths wherever an id becomes one.
ID_PATTERN = r"^[A-Za-z0-9_.:@-]{1,128}$"
_ID_RE = re.compile(ID_PATTERN)


def _not_only_dots(value: str) -> str:
    if not value.strip("."):
        raise ValueError("an id may not be only dots")
    return value


IdStr = Annotated[str, Field(min_length=1, max_length=128, pattern=ID_PATTERN),
                  AfterValidator(_not_only_dots)]

# Every time Annals accepts lies in [MIN_TIME, MAX_TIME): wide enough for any chat history
# or plan, narrow enough that windows widened ×9 and calendar arithmetic never overflow
# (year 1 and year 9999 did, as 500s). docs/api-limits.md lists every bound.
MIN_TIME = datetime(1900, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(2200, 1, 1, tzinfo=UTC)
MAX_SEQ = 2**53  # the largest integer every JSON client keeps exactly
# Short labels (tags, participants, speakers, refs) and their lists.
LABEL_CHARS = 100
REF_CHARS = 300
MAX_LABELS = 20


def check_id(value: str, name: str) -> str:
    """Path parameters are validated like body fields: a clear 400, never a stored oddity."""
    if not _ID_RE.match(value) or not value.strip("."):
        raise BadRequest(f"{name} must be 1-128 characters of letters, digits and _ . : @ - "
                         "(not only dots)", code=f"invalid_{name}")
    return value


# Session ids also come from chat file names ("沈砚 - 2026-11-02@20h05m00s.jsonl"), so they
# take letters, marks and digits of any script besides _ . : @ -. They stay safe where an id
# goes: no separator of a URL path, a query or a store key (`#`, `%`, `/`, `?`, `|`, spaces);
# a ref `message:SESSION:SEQ` is read from its last ':' (domain.refs); and at most 256 bytes
# of UTF-8 keep an OpenSearch `_id` ("<space>|message:<session>:<seq>") within its 512.
SESSION_CHARS = 128
SESSION_BYTES = 256
SESSION_RULE = (f"session must be 1-{SESSION_CHARS} letters or digits (any script) and "
                f"_ . : @ -, at most {SESSION_BYTES} bytes of UTF-8, not only dots")


def _session_char(ch: str) -> bool:
    return ch in "_.:@-" or unicodedata.category(ch)[0] in "LMN"


def session_ok(value: str) -> bool:
    """Whether `value` is a valid session id (SESSION_RULE)."""
    return (0 < len(value) <= SESSION_CHARS and all(_session_char(ch) for ch in value)
            and len(value.encode("utf-8")) <= SESSION_BYTES and bool(value.strip(".")))


def check_session(value: str) -> str:
    """A session path parameter, as check_id checks the others: a clear 400."""
    if not session_ok(value):
        raise BadRequest(SESSION_RULE, code="invalid_session")
    return value


def _valid_session(value: str) -> str:
    if not session_ok(value):
        raise ValueError(SESSION_RULE)
    return value


SessionId = Annotated[str, Field(min_length=1, max_length=SESSION_CHARS, description=(
    SESSION_RULE.capitalize())), AfterValidator(_valid_session)]


def session_id_from_file_name(name: str) -> str:
    """The session id of a chat file imported without one — the one rule of `annals import`
    (usecases.importing.read_file) and the web importer (chalicelib/web/importer.js
    `sessionName`, kept in step by tests/data/session_names.json): the name without its
    extension, in NFC; every run of other characters becomes one '-', none at either end;
    cut to SESSION_CHARS characters and SESSION_BYTES bytes; "imported" if nothing is left.
    "Mika - 2026-11-24@20h05m00s.jsonl" → "Mika-2026-11-24@20h05m00s"."""
    stem = unicodedata.normalize("NFC", re.sub(r"\.[^.]+$", "", name))
    dashed = re.sub(r"-{2,}", "-", "".join(ch if _session_char(ch) else "-" for ch in stem))
    kept, size = [], 0
    for ch in dashed.strip("-"):
        size += len(ch.encode("utf-8"))
        if len(kept) == SESSION_CHARS or size > SESSION_BYTES:
            break
        kept.append(ch)
    session = "".join(kept).rstrip("-")
    return session if session.strip(".") else "imported"


def check_seq(value: str) -> int:
    if not value.isdigit() or len(value) > 17 or int(value) > MAX_SEQ:
        raise BadRequest(f"seq must be an integer from 0 to {MAX_SEQ}", code="invalid_seq")
    return int(value)


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("time must carry a timezone offset, e.g. 2026-06-15T10:00:00+08:00")
    # An offset is under a day, so a year strictly inside the range is inside it whatever the
    # offset: only the edge years need the (dearer) aware comparison. Every message passes here.
    if not MIN_TIME.year < value.year < MAX_TIME.year - 1 and not MIN_TIME <= value < MAX_TIME:
        raise ValueError(f"time must be from {MIN_TIME:%Y-%m-%d} to before {MAX_TIME:%Y-%m-%d}")
    return value


def _one_line(value: str) -> str:
    """Titles, speakers and labels are single-line: runs of whitespace (newlines, tabs, Unicode
    line and paragraph separators) become one space; other control characters go."""
    if value.isprintable() and "  " not in value and value.strip(" ") == value:
        return value  # nothing to fold (printable rules out every space but " ")
    value = "".join(ch for ch in value if ch.isprintable() or ch.isspace())
    return " ".join(value.split())


AwareDatetime = Annotated[datetime, AfterValidator(_aware)]
OneLine = Annotated[str, AfterValidator(_one_line)]
Label = Annotated[str, AfterValidator(_one_line), Field(min_length=1, max_length=LABEL_CHARS)]
Labels = Annotated[list[Label], Field(max_length=MAX_LABELS)]


class Strict(BaseModel):
    """Request bodies reject unknown fields so typos fail loudly instead of being ignored."""

    model_config = ConfigDict(extra="forbid")


_set = object.__setattr__


def trusted(cls: type[_Model], **values: Any) -> _Model:
    """`cls.model_construct(**values)` for values that are every field of a plain model (no
    aliases or private attributes; post-init runs), in a fraction of its time: ingest builds
    two models per message and model_construct's per-field loop was ~14% of a PUT's Python
    (py-spy). tests/unit/test_models_trusted.py checks it builds what model_construct builds."""
    obj = cls.__new__(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    if cls.__pydantic_post_init__:
        obj.model_post_init(None)
    return obj


class StrictText(Strict):
    """Hand-written text (not evidence): surrounding whitespace is stripped, so a blank string
    fails its min_length instead of slipping in. Messages stay verbatim."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


# ---------------------------------------------------------------- messages


class MessageIn(Strict):
    seq: int = Field(ge=0, le=MAX_SEQ)
    role: Role
    speaker: OneLine | None = Field(default=None, max_length=LABEL_CHARS)
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
        return trusted(
            cls, space=space, session=session, seq=item.seq, role=item.role, speaker=speaker,
            content=item.content, at=item.at,
            content_hash=content_hash(item.role, speaker, item.content, item.at),
        )

    @property
    def ref(self) -> str:
        return message_ref(self.session, self.seq)


def default_speaker(role: str) -> str:
    """The speaker of a message that names none: its role, a placeholder
    (chalicelib.domain.names.is_placeholder) that stays the speaker of the evidence but is
    never a person, a participant or an entity."""
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


class MessageListQuery(BaseModel):
    """Query string of GET …/sessions/{session}/messages."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Field(default=None, max_length=512,
                               description="next_cursor of the page before")


class MessageList(BaseModel):
    messages: list[Message] = Field(description="in seq order")
    next_cursor: str | None = None


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
        if self.end != MAX_TIME:
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


EVENT_TEXT_CHARS = 4000  # an event's summary (and so a note's summary and details together)


class Event(BaseModel):
    id: str
    space: str
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=EVENT_TEXT_CHARS)
    when: When
    importance: int = Field(default=5, ge=1, le=10)
    participants: list[str] = Field(default_factory=list)
    location: str | None = None
    tags: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    kind: EventKind = "event"
    status: EventStatus = "active"
    plan: bool = False  # the event is something planned for `when`, not yet happened
    # who read the turns when it was not Annals' own extractor: "host" (a reading task a
    # host's model answered) or "gateway" (the chat gateway's upstream model, in the quiet
    # window; chalicelib.usecases.reading); None: Annals (its rules or ANNALS_LLM)
    read_by: Literal["host", "gateway"] | None = None
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
    read_by: Literal["host", "gateway"] | None = None  # see Event.read_by
    # Named things an LLM extractor saw in the event, (name, kind): the graph linker keeps
    # those found verbatim (usecases/graph/entities.py). Not stored on the event itself.
    mentions: list[tuple[str, str]] = Field(default_factory=list, exclude=True)

    @field_validator("participants")
    @classmethod
    def _people_only(cls, names: list[str]) -> list[str]:
        """Whatever an extractor proposes, a role word or placeholder ("user", "assistant",
        "{{char}}", "AI", "用户") is never a participant: only people are."""
        return real_names(names)


class SaveEventRequest(StrictText):
    """memory_save: a memory written by hand."""

    summary: str = Field(min_length=1, max_length=EVENT_TEXT_CHARS)
    title: OneLine | None = Field(default=None, max_length=200)
    happened_at: AwareDatetime | None = None
    details: str | None = Field(
        default=None, max_length=EVENT_TEXT_CHARS,
        description="more text, stored after the summary and a newline: the two together at "
                    f"most {EVENT_TEXT_CHARS:,} characters (what one memory holds)")
    tags: Labels = Field(default_factory=list)
    importance: int = Field(default=6, ge=1, le=10)
    participants: Labels = Field(default_factory=list)

    @model_validator(mode="after")
    def _fits_one_memory(self) -> SaveEventRequest:
        """The note is one event: its summary is this summary, a newline and the details.
        Each within its own limit could still make more than an event holds, which escaped
        as a 500 when the event refused it. Refused here, naming both lengths: cutting the
        text would drop words the caller wrote, and no field keeps the rest."""
        if self.details:
            joined = len(self.summary) + 1 + len(self.details)
            if joined > EVENT_TEXT_CHARS:
                raise ValueError(
                    f"summary ({len(self.summary):,}) and details ({len(self.details):,}) "
                    f"are {joined:,} characters with the newline that joins them, over the "
                    f"{EVENT_TEXT_CHARS:,} one memory holds: shorten them by "
                    f"{joined - EVENT_TEXT_CHARS:,}")
        return self


class EventFields(StrictText):
    """The editable fields of an event, all optional: absent means unchanged."""

    title: OneLine | None = Field(default=None, min_length=1, max_length=200)
    summary: str | None = Field(default=None, min_length=1, max_length=4000)
    when: When | None = None
    importance: int | None = Field(default=None, ge=1, le=10)
    participants: Labels | None = None
    location: OneLine | None = Field(default=None, max_length=200)
    tags: Labels | None = None


class PatchEventRequest(EventFields):
    version: int = Field(ge=1, description="the version you read; 409 if it changed since")
    status: Literal["active", "archived"] | None = None


class ExtractRequest(Strict):
    session: SessionId | None = None


EVENT_KINDS: tuple[str, ...] = ("event", "note", "summary")
TIMELINE_KINDS: tuple[str, ...] = ("event", "note")  # what happened; summaries retell it
KIND_LIST_PATTERN = r"^\s*(all|(event|note|summary)(\s*,\s*(event|note|summary))*)\s*$"


def event_kinds(value: str) -> tuple[str, ...]:
    """`?kind=` as kinds: "event,summary" → ("event", "summary"); "all" → every kind.
    ValueError for anything else."""
    if not re.fullmatch(KIND_LIST_PATTERN, value):
        raise ValueError("kind must be event, note, summary (or a comma list of them) or all")
    parts = [p.strip() for p in value.split(",")]
    return EVENT_KINDS if parts == ["all"] else tuple(dict.fromkeys(parts))


class EventListQuery(BaseModel):
    """Query string of GET …/events."""

    model_config = ConfigDict(extra="forbid")

    start: AwareDatetime | None = Field(default=None, alias="from")
    end: AwareDatetime | None = Field(default=None, alias="to")
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Field(default=None, max_length=512)
    status: Literal["active", "archived", "superseded", "all"] = "active"
    kind: str = Field(
        default=",".join(TIMELINE_KINDS), max_length=64,
        json_schema_extra={"pattern": KIND_LIST_PATTERN},
        description="which kinds: event, note (saved by hand), summary (session summaries "
                    "and their folds), a comma list of them (event,summary) or all; by "
                    "default the timeline: event,note")

    @field_validator("kind")
    @classmethod
    def _known_kinds(cls, value: str) -> str:
        event_kinds(value)
        return value

    @property
    def statuses(self) -> tuple[str, ...]:
        if self.status == "all":
            return ("active", "archived", "superseded")
        return (self.status,)

    @property
    def kinds(self) -> tuple[str, ...]:
        return event_kinds(self.kind)


class EventList(BaseModel):
    events: list[Event]
    next_cursor: str | None = None


# ---------------------------------------------------------------- recall


class ThreadMaterial(BaseModel):
    """One material of a thread, as a card lists it: an event or a summary about the arc."""

    ref: str
    title: str
    date: str | None = None  # the material's date label


class CardThread(BaseModel):
    """The thread (arc) a card's event belongs to, with a few of its other materials."""

    id: str
    title: str
    materials: list[ThreadMaterial] = Field(default_factory=list)


class Card(BaseModel):
    ref: str
    kind: Literal["event", "message"]
    title: str
    text: str
    when: When | None = None
    sources: list[Source] = Field(default_factory=list)
    importance: int | None = None
    speaker: str | None = None  # who said it (a message) or whom it is about (an event)
    # a message's role: "user" (a person), "assistant" (the AI, a character); None: an event
    role: Literal["user", "assistant", "system"] | None = None
    tags: list[str] = Field(default_factory=list)  # an event's tags ("quoted", "plan", …)
    score: float
    score_parts: dict[str, float] = Field(default_factory=dict)
    thread: CardThread | None = None  # the event's thread and its materials (recall/graph.py)


class Layer(BaseModel):
    layer: int
    start: datetime
    end: datetime
    candidates: int
    hits: int


class RecentTurn(Strict):
    """A turn before the new message: the last reply, the previous user message."""

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=4000)


class InContext(Strict):
    """The turns a host sends its model with this request: `session`'s from `from_seq` on."""

    session: SessionId
    from_seq: int = Field(ge=0)

    def holds(self, card: Card) -> bool:
        """Is all the card says in those turns (a message among them, an event citing only
        them)? The model reads them anyway: such a card repeats the prompt."""
        return bool(card.sources) and all(
            s.session == self.session and s.seq_start >= self.from_seq for s in card.sources)


class RecallRequest(Strict):
    query: str = Field(min_length=1, max_length=4000)
    recent: list[RecentTurn] = Field(
        default_factory=list, max_length=4,
        description="the turns before the query, oldest first (e.g. the previous user message "
                    "and the last reply): they help read a short follow-up")
    time_hint: str | None = Field(default=None, max_length=200)
    in_context: InContext | None = Field(
        default=None, description="the turns the host sends its model with this request "
                                  "(its session, from this seq on): never a card")
    window: IdStr | None = None
    limit: int | None = Field(default=None, ge=1, le=50, description="alias of max_cards")
    max_cards: int | None = Field(default=None, ge=1, le=50)
    now: AwareDatetime | None = None
    format: Literal["blocks", "timeline", "compact"] = "blocks"
    recipe: str | None = Field(default=None, max_length=64)
    # The admission gate's threshold for this recall (usecases/recall/gate.py): None = the
    # recipe's, applied when at most the recipe's max_cards cards are asked for; a number
    # applies whatever the card limit; 0 switches the gate off.
    min_relevance: float | None = Field(default=None, ge=0, le=1)
    trace_lang: Literal["en", "zh"] | None = Field(
        default=None,
        description="the language of the trace lines (e.g. a UI's language); by default "
                    "the query's. The context keeps the query's language")

    @property
    def card_limit(self) -> int | None:
        return self.max_cards or self.limit


class RecallResponse(BaseModel):
    verdict: Verdict = Field(description=VERDICT_TEXT)
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
    ids: list[Annotated[str, Field(min_length=1, max_length=REF_CHARS)]] = Field(
        min_length=1, max_length=50)
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

    @property
    def has_unread(self) -> bool:
        """Messages wait to be extracted: new ones, or ones edited since."""
        return self.pending_since is not None or self.dirty_from is not None

    @property
    def unread_from(self) -> int:
        """The first seq extraction has still to read: after the last one read, or the first
        one edited since, whichever comes first."""
        upto = self.extracted_upto + 1
        return upto if self.dirty_from is None else min(upto, self.dirty_from)


# ---------------------------------------------------------------- index documents


class IndexDoc(BaseModel):
    """One searchable unit (an event or a message) as both indexes see it."""

    id: str  # the card ref: "event:ID" or "message:SESSION:SEQ"
    space: str
    kind: Literal["event", "message"]
    text: str  # what is tokenized for keywords and embedded
    # The other party's turn before it, whose embedding joins this one's (indexing.embed):
    # never stored, never tokenized.
    context_text: str | None = Field(default=None, exclude=True)
    start: float  # epoch seconds of `when`
    end: float
    status: EventStatus = "active"
    importance: int = 5
    vector: list[float] | None = None

    def model_post_init(self, __context: Any) -> None:
        if self.end < self.start:
            raise ValueError("end before start")


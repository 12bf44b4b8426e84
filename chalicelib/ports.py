"""Ports: the interfaces every use-case talks to, and `Services`, which bundles one adapter per
port. `chalicelib.wiring` picks the adapters once; a use-case never knows which it talks to.

Each port has an embedded adapter (SQLite / numpy / bundled e5 / in-memory) and an AWS one
(DynamoDB / OpenSearch / SQS / Bedrock). One contract test suite runs against every adapter.
"""

from __future__ import annotations

import contextvars
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from chalicelib.config import Settings
from chalicelib.domain.cleaning import clean as clean_text
from chalicelib.domain.models import (
    Delivery,
    Event,
    EventDraft,
    IndexDoc,
    Message,
    SessionState,
)
from chalicelib.domain.records import Record
from chalicelib.domain.salience import SMALL_TALK

if TYPE_CHECKING:  # numpy and pydantic types only for annotations: no import cost at start
    import numpy as np
    from pydantic import BaseModel

    from chalicelib.domain.merge import MergeInstruction

R = TypeVar("R", bound=Record)
M = TypeVar("M", bound="BaseModel")


# ------------------------------------------------------------------ errors


class ConflictError(Exception):
    """An optimistic-concurrency check failed (stale `version`, or the id exists)."""


class LLMError(Exception):
    """The model could not give a usable answer; callers fall back to the offline path."""


class LLMTimeout(LLMError):
    """The provider did not answer within the timeout."""


class LLMUnavailable(LLMError):
    """Transport or HTTP error (after the SDK's own retries), e.g. 429, 5xx, refused."""


class LLMInvalidOutput(LLMError):
    """The reply was not valid JSON for the schema, twice."""


# ------------------------------------------------------------------ store


@dataclass(frozen=True)
class UpsertOutcome:
    accepted: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Page:
    events: list[Event]
    next_cursor: str | None


@runtime_checkable
class Store(Protocol):
    """Messages, events with versions, deliveries and typed records for many spaces."""

    # messages --------------------------------------------------------------
    def upsert_messages(self, space: str, session: str, messages: Sequence[Message],
                        now: datetime) -> UpsertOutcome: ...
    def get_messages(self, space: str, session: str, seq_from: int | None = None,
                     seq_to: int | None = None) -> list[Message]: ...
    def get_message(self, space: str, session: str, seq: int) -> Message | None: ...
    def load_messages(self, space: str, keys: Sequence[tuple[str, int]]) -> list[Message]:
        """The messages at (session, seq) keys that exist, in one read where the backend
        allows; order is not guaranteed."""
        ...
    def delete_message(self, space: str, session: str, seq: int, now: datetime) -> Message | None: ...

    # sessions --------------------------------------------------------------
    def get_session(self, space: str, session: str) -> SessionState | None: ...
    def list_sessions(self, space: str | None = None) -> list[SessionState]: ...
    def mark_extracted(self, space: str, session: str, upto: int) -> None: ...

    # events ----------------------------------------------------------------
    def create_event(self, event: Event) -> Event:
        """Write a new event (version 1 record included); ConflictError if the id exists."""
        ...
    def update_event(self, event: Event, expected_version: int) -> Event:
        """Write `event` as version expected_version + 1; ConflictError if stale."""
        ...
    def get_event(self, space: str, event_id: str) -> Event | None: ...
    def load_events(self, space: str, ids: Sequence[str]) -> list[Event]:
        """The events with these ids that exist, in one read where the backend allows."""
        ...
    def list_events(self, space: str, *, start: datetime | None = None,
                    end: datetime | None = None, statuses: Sequence[str] = ("active",),
                    limit: int = 50, cursor: str | None = None,
                    kinds: Sequence[str] | None = None) -> Page:
        """Events overlapping [start, end) with one of `statuses` and (unless None: every
        kind) one of `kinds`, ordered by (when.start, id), `limit` a page. The filters apply
        before the page is cut, so a page is never short while more matching events exist,
        and `next_cursor` (None at the end) continues after the last event returned."""
        ...
    def event_history(self, space: str, event_id: str) -> list[Event]: ...

    # deliveries ------------------------------------------------------------
    def add_deliveries(self, space: str, window: str, refs: Sequence[str],
                       at: datetime) -> list[Delivery]: ...
    def recent_deliveries(self, space: str, window: str, since: datetime) -> list[Delivery]: ...
    def bump_recall_count(self, space: str, window: str) -> int:
        """Count one recall in a window; returns the new count."""
        ...
    def recall_count(self, space: str, window: str) -> int:
        """The recalls counted in a window so far (0 for a window never counted); a read:
        nothing is created, nothing is counted."""
        ...
    def purge_deliveries(self, before: datetime) -> int:
        """Delete deliveries made before `before`; returns how many (0 where TTL does it)."""
        ...

    # typed records (chalicelib.domain.records) -----------------------------
    def put_record(self, record: Record) -> None: ...
    def get_record(self, kind: type[R], scope: str, key: str = "") -> R | None: ...
    def list_records(self, kind: type[R], scope: str) -> list[R]:
        """Every record of this kind in the scope, ordered by key."""
        ...
    def delete_records(self, kind: type[R], scope: str, keys: Sequence[str]) -> int: ...


def iter_events(store: Store, space: str, statuses: Sequence[str] = ("active",), *,
                start: datetime | None = None, end: datetime | None = None,
                page_size: int = 500, kinds: Sequence[str] | None = None) -> Iterator[Event]:
    """Every event of a space in timeline order (of `kinds`, or every kind), page by page."""
    cursor = None
    while True:
        page = store.list_events(space, start=start, end=end, statuses=statuses,
                                 limit=page_size, cursor=cursor, kinds=kinds)
        yield from page.events
        if not page.next_cursor:
            return
        cursor = page.next_cursor


# ------------------------------------------------------------------ search indexes


@dataclass(frozen=True)
class SearchFilter:
    """Which documents a search may return. Times are epoch seconds; a doc matches a
    window when its [start, end) overlaps [start, end)."""

    kinds: tuple[str, ...] = ("event", "message")
    statuses: tuple[str, ...] = ("active",)
    start: float | None = None
    end: float | None = None
    exclude_ids: frozenset[str] = frozenset()


ACTIVE = SearchFilter()  # the default filter: active events and messages, any time


@dataclass(frozen=True)
class Hit:
    id: str
    score: float


@runtime_checkable
class KeywordIndex(Protocol):
    """BM25 over text tokenized by chalicelib.domain.textproc.tokenize (same on every adapter)."""

    def upsert(self, docs: Sequence[IndexDoc]) -> None: ...
    def delete(self, space: str, ids: Sequence[str]) -> None: ...
    def keyword_search(self, space: str, query: str, k: int,
                       flt: SearchFilter = ACTIVE) -> list[Hit]: ...
    def count(self, space: str, flt: SearchFilter = ACTIVE) -> int: ...
    def held_terms(self, space: str, terms: Sequence[str]) -> set[str]:
        """The terms (query_terms tokens) some document of the space holds, in one call."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Cosine similarity over L2-normalised float32 vectors."""

    def upsert(self, docs: Sequence[IndexDoc]) -> None: ...
    def delete(self, space: str, ids: Sequence[str]) -> None: ...
    def vector_search(self, space: str, vector: np.ndarray, k: int,
                      flt: SearchFilter = ACTIVE) -> list[Hit]: ...


@runtime_checkable
class Embedder(Protocol):
    """Passages and queries to L2-normalised float32 vectors. A query longer than the model's
    window is cut to it by the adapter (the model would only average windows of it)."""

    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, rows L2-normalised."""
        ...
    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised."""
        ...

    # Optional, for a multilingual embedder: `language_means() -> LanguageMeans`, where each
    # language sits in its space (recall searches across languages with it).
    # Optional: `small_talk_means() -> {lang: vector}`, domain.salience.SMALL_TALK's mean
    # passage vectors shipped with the model (small_talk_vector then embeds none of them).


@runtime_checkable
class Glossary(Protocol):
    """Words of one language as the other's (a bilingual dictionary), in the form recall
    compares terms in (domain.textproc.tokenize: stemmed English words, Chinese as written)."""

    name: str

    def in_chinese(self, term: str) -> frozenset[str]:
        """An English term as Chinese words (empty: none known)."""
        ...
    def in_english(self, word: str) -> frozenset[str]:
        """A Chinese word as English terms (empty: none known)."""
        ...


@dataclass(frozen=True)
class LanguageMeans:
    """Per language ("en", "zh"), the mean query vector and the mean passage vector of the
    same sentences (chalicelib.domain.parallel): a multilingual embedder's language parts."""

    query: dict[str, np.ndarray]
    passage: dict[str, np.ndarray]


# ------------------------------------------------------------------ getting memories indexed

Lane = Literal["keyword", "vector"]


_small_talk: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # embedder → {lang: vec}


def small_talk_vector(embedder: Embedder, lang: str) -> np.ndarray:
    """The mean passage vector of the small talk in `lang` (domain.salience.SMALL_TALK), once
    per embedder object: what chatter about nothing looks like to the recall gate and to the
    salience judge's same-topic baselines alike."""
    import numpy as np  # lazily: ports is imported at start, numpy only when embedding

    try:
        cache = _small_talk.setdefault(embedder, {})
    except TypeError:  # an embedder that cannot be weakly referenced: no cache
        cache = {}
    vec = cache.get(lang)
    if vec is None:
        shipped = getattr(embedder, "small_talk_means", None)
        vec = shipped().get(lang) if shipped is not None else None
        if vec is None:
            vec = np.asarray(embedder.embed_passages(list(SMALL_TALK[lang])),
                             np.float32).mean(axis=0)
        cache[lang] = vec
    return vec


@dataclass(frozen=True)
class Freshness:
    """How far the search indexes are behind the store for one space: messages stored but not
    yet searchable by keyword, and not yet by meaning (embedded)."""

    keyword_pending: int = 0
    vector_pending: int = 0
    indexed_now: int = 0  # entries the caller's own budget indexed


@dataclass(frozen=True)
class OutboxEntry:
    id: int
    space: str
    session: str
    seq: int


@runtime_checkable
class IndexOutbox(Protocol):
    """Messages stored but not yet indexed, queued by the store in the same transaction as the
    message (SQLite: a trigger), per lane: keyword and vector."""

    def take(self, lane: Lane, limit: int, space: str | None = None,
             after: str | None = None) -> list[OutboxEntry]:
        """Entries not yet done in `lane`: the oldest of `space`. Without one, the vector
        lane's batch is shared round-robin by the spaces with entries (each one's oldest in
        turn), starting with the first space after `after` (the one the caller served last),
        so one space's backlog never keeps another's new entries out of the next batch; in
        the order served, so the last space to appear in it is the one served last. The
        keyword lane, which a PUT writes itself, may give the oldest entries of all."""
        ...
    def done(self, lane: Lane, ids: Sequence[int]) -> None:
        """Mark entries done in a lane; an entry done in both lanes leaves the queue."""
        ...
    def pending(self, space: str | None = None) -> Freshness: ...
    def backlog(self, lane: Lane) -> int:
        """How many entries a lane has queued, all spaces (an upper bound; cheap)."""
        ...


@runtime_checkable
class MessageIngest(Protocol):
    """Stores messages and their keyword rows in one transaction (the embedded backend), so an
    acknowledged message is stored and findable by keyword together, or not at all; only
    the vector lane is left queued."""

    def put(self, space: str, session: str, messages: Sequence[Message],
            keyword_docs: Sequence[IndexDoc]) -> UpsertOutcome:
        """Upsert `messages` by seq (like Store.upsert_messages) and write the keyword doc
        (ids = message refs) of each one written, accepted or changed."""
        ...


@runtime_checkable
class IndexWriter(Protocol):
    """How memories reach the search indexes, chosen once at wiring: inline (in the request),
    through the local outbox (after the write, by lanes), or by the AWS table stream."""

    name: str

    def put_messages(self, space: str, session: str, messages: Sequence[Message],
                     now: datetime) -> UpsertOutcome:
        """Store messages (idempotently by seq) and see to their indexing."""
        ...
    def index_events(self, events: Sequence[Event]) -> None:
        """Index active events; take the others (archived, superseded) out."""
        ...
    def remove(self, space: str, refs: Sequence[str]) -> None: ...
    def freshen(self, space: str, budget_seconds: float) -> Freshness:
        """Before a search: spend at most `budget_seconds` catching the space's keyword index
        up, and say what is still pending. Never waits for the backlog as a whole."""
        ...


@dataclass(frozen=True)
class ChangeRecord:
    """One change of the AWS table, as its stream delivers it (images already decoded)."""

    id: str  # stream sequence number
    event_name: str  # INSERT | MODIFY | REMOVE
    new_image: dict[str, Any] | None
    old_image: dict[str, Any] | None


@runtime_checkable
class WorkQueue(Protocol):
    """Background work (AWS: SQS). Jobs are small JSON objects; delivery is at least once."""

    def send(self, job: dict, delay_seconds: int = 0) -> None: ...


# ------------------------------------------------------------------ extraction and merging


@dataclass(frozen=True)
class ExtractionContext:
    """What a reader may look at besides the new messages."""

    space: str
    session: str
    earlier: list[Message] = field(default_factory=list)  # a few messages before, for context
    nearby_events: list[Event] = field(default_factory=list)


@dataclass
class Correction:
    """A turn of the batch that corrects an event already in the chronicle ("哦不对，是1月2号
    出发"): `event` is the label the reading prompt showed for it (the tail of its id),
    `words` the turn's words that say the change (may be empty)."""

    seq: int
    event: str
    words: str = ""


@dataclass
class Reading:
    """What one reader made of a batch of turns, in one answer: the events it proposes, the
    lasting facts each turn it read states about its speaker (seq → statements; a turn it
    did not read is the rules', chalicelib.usecases.facts.learn, which also keeps the rules'
    floor under a model's reading), and the turns that correct an earlier event (linked as
    `updates` by chalicelib.usecases.graph.updates.corrected). Every reader — the offline
    rules, a model (OpenAI-compatible, Bedrock, local), a host's model through a reading
    task — answers with one."""

    events: list[EventDraft] = field(default_factory=list)
    facts: dict[int, list[Any]] = field(default_factory=dict)
    corrections: list[Correction] = field(default_factory=list)


@runtime_checkable
class Reader(Protocol):
    """The one seam where turns are read (issue 37): the extraction asks it once per batch."""

    name: str

    def read(self, messages: Sequence[Message], ctx: ExtractionContext) -> Reading: ...


@dataclass(frozen=True)
class Salience:
    """How likely each text is to say something worth remembering (0..1), with the vectors
    the judgement was made from (rows L2-normalised; the extractor compares turns by them)."""

    scores: np.ndarray  # (n,)
    vectors: np.ndarray  # (n, dim)
    threshold: float  # a score at or above it is worth an event
    # Each text's cosine to small talk in its own language (domain.salience.SMALL_TALK): how
    # close two turns about nothing in common sit, which e5 puts far higher in Chinese
    # (~0.85) than in English (~0.75). None: the judge has no vectors to compare.
    baselines: np.ndarray | None = None  # (n,)


@runtime_checkable
class SalienceJudge(Protocol):
    """Judges statements a chat turn kept after the small-talk rules
    (chalicelib.domain.salience): does it tell a happening, plan, change, preference or fact?"""

    name: str

    def assess(self, texts: Sequence[str]) -> Salience: ...


@runtime_checkable
class Merger(Protocol):
    """Instructions that tidy a window of events (oldest first; `new_ids` were just added).
    May raise LLMError; the merge pass then falls back to the offline merger."""

    name: str

    def instructions(self, window: Sequence[Event],
                     new_ids: set[str] | frozenset[str] = frozenset()) -> list[MergeInstruction]: ...


# ------------------------------------------------------------------ LLM


@dataclass
class LLMUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0

    def add(self, other: LLMUsage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {**asdict(self), "total_tokens": self.total_tokens}


_usage_scopes: contextvars.ContextVar[tuple[LLMUsage, ...]] = contextvars.ContextVar(
    "annals_llm_usage_scopes", default=())


@contextmanager
def track_usage() -> Iterator[LLMUsage]:
    """Collect the usage of every LLM call made inside the block (in this thread/context),
    e.g. to attribute one extraction batch to its space. Scopes nest."""
    scope = LLMUsage()
    token = _usage_scopes.set((*_usage_scopes.get(), scope))
    try:
        yield scope
    finally:
        _usage_scopes.reset(token)


def count_usage(delta: LLMUsage) -> None:
    """Adapters call this for every completion (and failure): every open scope counts it."""
    for scope in _usage_scopes.get():
        scope.add(delta)


@runtime_checkable
class LLMClient(Protocol):
    """One call that returns a validated pydantic model (chalicelib.adapters.llm.base)."""

    name: str
    model: str
    usage: LLMUsage  # process-wide totals of this client

    def complete_json(self, system: str, user: str, schema: type[M], *,
                      max_tokens: int = 4000) -> M: ...


# ------------------------------------------------------------------ chat gateway upstream


class UpstreamError(Exception):
    """The upstream chat endpoint refused or failed a request (chalicelib.usecases.gateway).
    `status` and `body` are what it answered — an OpenAI error object passes through as it
    came — or, when it never answered, 502/504 with an OpenAI-shaped error made here."""

    def __init__(self, status: int, body: bytes, message: str = "",
                 headers: dict[str, str] | None = None):
        super().__init__(message or f"upstream answered {status}")
        self.status = status
        self.body = body
        self.headers = headers or {}

    @classmethod
    def made(cls, status: int, message: str, kind: str = "upstream_error",
             code: str | None = None) -> UpstreamError:
        """An error the gateway writes itself (no answer, a cut stream): OpenAI's shape, with
        a `code` so it is Annals' {"error": {"code", "message"}} shape too."""
        import json

        body = {"error": {"message": message, "type": kind, "param": None,
                          "code": code or kind}}
        return cls(status, json.dumps(body).encode(), message)

    def error_object(self) -> dict[str, Any]:
        """The body's `error` object (for an SSE error event), whatever the body was."""
        import json

        try:
            parsed = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            return parsed["error"]
        text = self.body.decode("utf-8", "replace")[:1000] if self.body else str(self)
        return {"message": text, "type": "upstream_error", "param": None,
                "code": str(self.status)}


@runtime_checkable
class ChatStream(Protocol):
    """The chunks of one streamed completion (OpenAI `chat.completion.chunk` objects, as
    dicts), in order. Iterating raises UpstreamError when the stream breaks; `close` lets
    the upstream connection go (a client that left)."""

    def __iter__(self) -> Iterator[dict[str, Any]]: ...
    def close(self) -> None: ...


@runtime_checkable
class ChatUpstream(Protocol):
    """Chat completions in OpenAI's wire format, whatever the provider speaks (the gateway,
    chalicelib.usecases.gateway). `request` is an OpenAI chat-completions body; the model
    and every field the provider takes are passed on. Errors raise UpstreamError."""

    name: str
    default_model: str | None  # used when a request names no model

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """A `chat.completion` object."""
        ...
    def stream(self, request: dict[str, Any]) -> ChatStream:
        """Open a streamed completion; an error before the first chunk raises here."""
        ...
    def models(self) -> dict[str, Any]:
        """OpenAI's model list ({"object": "list", "data": [...]})."""
        ...


# ------------------------------------------------------------------ sharing one process


@runtime_checkable
class Traffic(Protocol):
    """How concurrent requests in one process take turns (chalicelib.usecases.traffic)."""

    def reading(self, key: str | None = None) -> AbstractContextManager[None]: ...
    def writing(self) -> AbstractContextManager[None]: ...


class OpenTraffic:
    """No gate: one request per process (Lambda), or where nothing competes."""

    def reading(self, key: str | None = None) -> AbstractContextManager[None]:
        return nullcontext()

    def writing(self) -> AbstractContextManager[None]:
        return nullcontext()


@runtime_checkable
class Limiter(Protocol):
    """Limits per key and per space (chalicelib.usecases.limits): `admit` raises
    TooManyRequests (429) over one, else holds a place for the request until it ends."""

    refused: int

    def admit(self, key: str, space: str | None,
              write: bool = False) -> AbstractContextManager[None]: ...


class OpenLimiter:
    """No limits: tests, the CLI in-process, and Lambda (API Gateway throttles there)."""

    refused = 0

    def admit(self, key: str, space: str | None,
              write: bool = False) -> AbstractContextManager[None]:
        return nullcontext()


# ------------------------------------------------------------------ services


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class Services:
    """One adapter per port, chosen by chalicelib.wiring."""

    settings: Settings
    store: Store
    keywords: KeywordIndex
    vectors: VectorIndex
    embedder: Embedder
    extractor: Reader  # the space's reader (the rules, or a model with the rules beneath)
    merger: Merger
    # Set by wiring right after construction: a writer indexes through these same services.
    index: IndexWriter = field(default=None)  # type: ignore[assignment]
    queue: WorkQueue | None = None  # AWS: extraction work goes through SQS
    llm: LLMClient | None = None  # ANNALS_LLM=openai|bedrock; None: offline extractor/merger
    # English and Chinese words in each other's language, for the recall gate's judgement of a
    # card told in the other language (adapters/glossary_cedict.py); None: not read so
    glossary: Glossary | None = None
    chat: ChatUpstream | None = None  # the chat gateway's upstream; None: not configured
    traffic: Traffic = field(default_factory=OpenTraffic)  # local server: recall first
    limits: Limiter = field(default_factory=OpenLimiter)  # annals serve: per key and space
    # Message text as memories, indexes and queries see it (chalicelib.domain.cleaning).
    clean: Callable[[str], str] = field(default=clean_text)
    clock: Callable[[], datetime] = field(default=utcnow)

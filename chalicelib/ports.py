"""Ports: the interfaces every use-case talks to.

Each port has an embedded adapter (SQLite / numpy / bundled e5) and, later, an AWS one
(DynamoDB / OpenSearch / Bedrock). One contract test suite runs against every adapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np

from chalicelib.domain.models import Delivery, Event, EventDraft, IndexDoc, Message, SessionState


class ConflictError(Exception):
    """An optimistic-concurrency check failed (stale `version`)."""


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
    """Messages, events with versions, deliveries and job state for many spaces."""

    # messages --------------------------------------------------------------
    def upsert_messages(self, space: str, session: str, messages: Sequence[Message],
                        now: datetime) -> UpsertOutcome: ...
    def get_messages(self, space: str, session: str, seq_from: int | None = None,
                     seq_to: int | None = None) -> list[Message]: ...
    def get_message(self, space: str, session: str, seq: int) -> Message | None: ...
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
    def list_events(self, space: str, *, start: datetime | None = None,
                    end: datetime | None = None, statuses: Sequence[str] = ("active",),
                    limit: int = 50, cursor: str | None = None) -> Page: ...
    def event_history(self, space: str, event_id: str) -> list[Event]: ...

    # deliveries ------------------------------------------------------------
    def add_deliveries(self, space: str, window: str, refs: Sequence[str],
                       at: datetime) -> list[Delivery]: ...
    def recent_deliveries(self, space: str, window: str, since: datetime) -> list[Delivery]: ...
    def bump_recall_count(self, space: str, window: str) -> int:
        """Count one recall in a window; returns the new count."""
        ...
    def purge_deliveries(self, before: datetime) -> int:
        """Delete deliveries made before `before`; returns how many (0 where TTL does it)."""
        ...

    # job state -------------------------------------------------------------
    def get_job_state(self, job: str, key: str) -> dict | None: ...
    def put_job_state(self, job: str, key: str, state: dict) -> None: ...


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


@runtime_checkable
class VectorIndex(Protocol):
    """Cosine similarity over L2-normalised float32 vectors."""

    def upsert(self, docs: Sequence[IndexDoc]) -> None: ...
    def delete(self, space: str, ids: Sequence[str]) -> None: ...
    def vector_search(self, space: str, vector: np.ndarray, k: int,
                      flt: SearchFilter = ACTIVE) -> list[Hit]: ...


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, rows L2-normalised."""
        ...
    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised."""
        ...


@runtime_checkable
class WorkQueue(Protocol):
    """Background work (AWS: SQS). Jobs are small JSON objects; delivery is at least once."""

    def send(self, job: dict, delay_seconds: int = 0) -> None: ...


@dataclass(frozen=True)
class ExtractionContext:
    """What an extractor may look at besides the new messages."""

    space: str
    session: str
    earlier: list[Message] = field(default_factory=list)  # a few messages before, for context
    nearby_events: list[Event] = field(default_factory=list)


@runtime_checkable
class Extractor(Protocol):
    name: str

    def extract(self, messages: Sequence[Message], ctx: ExtractionContext) -> list[EventDraft]: ...

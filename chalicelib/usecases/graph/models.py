"""What the graph routes take and answer (pydantic): entities, threads, relations, and the
whole graph as one JSON document (export and import)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, model_validator

from chalicelib.domain.errors import BadRequest
from chalicelib.domain.models import (
    REF_CHARS,
    Event,
    IdStr,
    Labels,
    OneLine,
    Strict,
    check_id,
)
from chalicelib.domain.records import (
    Entity,
    EntityKind,
    Relation,
    RelationKind,
    SummaryFold,
    Thread,
)

MAX_THREAD_EVENTS = 500  # events one PATCH or POST may name


class EntitySummary(BaseModel):
    id: str
    name: str
    kind: EntityKind
    aliases: list[str] = Field(default_factory=list)
    event_count: int

    @classmethod
    def of(cls, entity: Entity) -> EntitySummary:
        return cls(id=entity.key, name=entity.name, kind=entity.kind,
                   aliases=entity.aliases, event_count=len(entity.events))


class EntityList(BaseModel):
    entities: list[EntitySummary]


class EntityDetail(EntitySummary):
    events: list[Event] = Field(description="the events that name it, oldest first")


class EntityQuery(BaseModel):
    """Query string of GET …/entities."""

    kind: EntityKind | None = Field(default=None, description="only entities of this kind")


class EventRelation(BaseModel):
    """A link between two events: `src` <kind> `dst` (the newer booking updates the older;
    an event follows, or is caused by, the one before it; two events of one thread)."""

    src: str
    dst: str
    kind: RelationKind
    note: str = ""
    created_at: datetime

    @classmethod
    def of(cls, relation: Relation) -> EventRelation:
        return cls(src=relation.src, dst=relation.dst, kind=relation.kind,
                   note=relation.note, created_at=relation.created_at)


class ThreadView(BaseModel):
    id: str
    title: str
    aliases: list[str] = Field(default_factory=list)
    events: list[str] = Field(description="event ids, oldest first")
    summaries: list[str] = Field(default_factory=list, description="summary event ids")
    manual: bool = Field(description="created or edited by hand")
    version: int = Field(description="give it to PATCH")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, thread: Thread) -> ThreadView:
        return cls(id=thread.key, **thread.model_dump(
            include={"title", "aliases", "events", "summaries", "manual", "version",
                     "created_at", "updated_at"}))


class ThreadList(BaseModel):
    threads: list[ThreadView]


class ThreadDetail(ThreadView):
    materials: list[Event] = Field(description="its events, oldest first")


class CreateThreadRequest(Strict):
    title: OneLine = Field(min_length=1, max_length=200)
    aliases: Labels = Field(default_factory=list)
    events: list[IdStr] = Field(default_factory=list, max_length=MAX_THREAD_EVENTS)


class PatchThreadRequest(Strict):
    version: int = Field(ge=1, description="the version you read; 409 if it changed since")
    title: OneLine | None = Field(default=None, min_length=1, max_length=200)
    aliases: Labels | None = None
    add_events: list[IdStr] = Field(default_factory=list, max_length=MAX_THREAD_EVENTS)
    remove_events: list[IdStr] = Field(default_factory=list, max_length=MAX_THREAD_EVENTS)
    merge_into: IdStr | None = Field(
        default=None, description="move everything into this thread and delete this one")


class GraphDocument(BaseModel):
    """A space's whole memory graph: events (every status) with the entities, threads and
    relations between them. GET …/graph answers it; POST …/graph takes it."""

    space: str = ""
    events: list[Event] = Field(default_factory=list)
    entities: list[Entity] = Field(default_factory=list)
    threads: list[Thread] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    # which summaries each fold summarises: without them an import would fold them again
    folds: list[SummaryFold] = Field(default_factory=list)

    @model_validator(mode="after")
    def _bounded_ids(self) -> GraphDocument:
        """An imported document is outside input: every id and key within the bounds the
        stores take (a DynamoDB sort key holds 1 KB; an event id is a path segment)."""
        for event in self.events:
            try:
                check_id(event.id, "event_id")
            except BadRequest as exc:
                raise ValueError(str(exc)) from None
        for group in (self.entities, self.threads, self.relations, self.folds):
            for record in group:
                if not record.key or len(record.key) > REF_CHARS:
                    raise ValueError(f"a {record.KIND} key must be 1-{REF_CHARS} characters")
        return self


class GraphImport(BaseModel):
    space: str
    events_created: int
    events_existing: int
    entities: int
    threads: int
    relations: int
    folds: int = 0
    job: Any = Field(default=None, description=(
        "a large import's indexing, as a background job (JobView; the answer is then 202 "
        "with Location: …/jobs/{id}); null: indexed in the request"))


__all__ = ["EntityDetail", "EntityList", "EntitySummary", "EventRelation", "GraphDocument",
           "GraphImport", "ThreadDetail", "ThreadList", "ThreadView"]

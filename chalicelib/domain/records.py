"""Typed records: the small bookkeeping the use-cases keep besides messages and events.

Each record kind is a pydantic model with a `KIND`, stored by (kind, scope, key): one row
(or DynamoDB item) per record, so a write touches one person, one memory's use, one journal
batch — never a whole dictionary of them. Scopes are a space, or `space/session` for what
belongs to one chat window.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field


class Record(BaseModel):
    KIND: ClassVar[str]
    scope: str
    key: str = ""


class Person(Record):
    """A speaker seen at ingest (key = the name), so recall can tell a name in a query, and
    whether they spoke as the user (role "user"): whom "I" in a query means."""

    KIND: ClassVar[str] = "person"
    user: bool = False
    # the role placeholders ("user", "{{user}}") the user spoke as when they told this name
    # ("我叫阿梅"): their turns are this person's (chalicelib.usecases.people.named_users)
    aliases: list[str] = Field(default_factory=list)
    named_at: datetime | None = None  # when they told it: the latest told is their name


class MemoryUse(Record):
    """Real injections of one memory (key = its ref), reported through deliveries."""

    KIND: ClassVar[str] = "use"
    count: int = 0
    last: datetime


class JournalBatch(Record):
    """One extraction batch of a session (scope = space/session, key = batch id): what it
    created, revived and superseded, with the versions those events had before it."""

    KIND: ClassVar[str] = "journal"
    at: datetime
    created: list[str] = Field(default_factory=list)
    revived: list[tuple[str, int]] = Field(default_factory=list)
    superseded: list[tuple[str, int]] = Field(default_factory=list)
    rolled_back: bool = False

    @property
    def empty(self) -> bool:
        return not (self.created or self.revived or self.superseded)


class LLMUsageRecord(Record):
    """LLM calls and tokens of one space for one task (key = "extract" | "merge")."""

    KIND: ClassVar[str] = "llm-usage"
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    model: str = ""


class MergeState(Record):
    """Where the merge pass of a space stands (key = "")."""

    KIND: ClassVar[str] = "merge"
    marker: datetime | None = None  # events created after this are new to the pass
    last_merged_at: datetime | None = None
    pending: int = 0
    runs: int = 0
    fingerprint: str | None = None
    # Events a pass is about to write, noted first: if it fails part-way, the next pass
    # indexes them again (a retried pass finds those writes done, so it would not).
    reindex: list[str] = Field(default_factory=list)


KEYS_SCOPE = "global"  # the scope of records that belong to no one space (API keys)


class ApiKey(Record):
    """An API key (scope = KEYS_SCOPE, key = its id): the sha256 of the whole key, never the
    key itself. `spaces` None: every space. Written at creation and at revocation only."""

    KIND: ClassVar[str] = "api-key"
    key_hash: str
    access: Literal["read", "write", "admin"]
    spaces: list[str] | None = None
    label: str = ""
    created_at: datetime
    revoked_at: datetime | None = None


class ApiKeyUse(Record):
    """When an API key was last used (scope = KEYS_SCOPE, key = its id); apart from ApiKey so
    that noting a use can never overwrite a revocation."""

    KIND: ClassVar[str] = "api-key-use"
    last_used_at: datetime


class KnownSpace(Record):
    """A space that may hold events but no sessions (scope = KEYS_SCOPE, key = the space),
    so GET /v1/spaces can list it and the merge job visits it (usecases.spaces)."""

    KIND: ClassVar[str] = "space"
    # When a write outside the sessions (a hand save, a graph import) last added events:
    # part of the merge job's fingerprint of the space.
    events_at: datetime | None = None


class JobFailure(Record):
    """A unit of background work that failed (scope = the job: quiet-window, merge, cooldown,
    index; key = the unit: a space, space/session or space/ref). After QUARANTINE_AFTER
    failures in a row it is quarantined — skipped until its state (fingerprint) changes —
    instead of failing every run; a success removes the record."""

    KIND: ClassVar[str] = "job-failure"
    space: str
    error: str
    failures: int = 1
    first_at: datetime
    last_at: datetime
    fingerprint: str | None = None
    quarantined: bool = False


# ------------------------------------------------------------------ background jobs
# Long work a request hands off and a client follows (chalicelib.usecases.background).

JobStatus = Literal["queued", "running", "done", "failed"]
JOB_QUEUE_SCOPE = "local-job-queue"  # the scope of JobTickets (the local worker's queue)


class JobProgress(BaseModel):
    """How far a job is: `done` of `total` `unit`s (extraction: messages), and the events it
    has written so far."""

    done: int = 0
    total: int = 0
    unit: str = "messages"
    events: int = 0


class Job(Record):
    """A background job (scope = its space, key = its id, "job_…", in time order): its kind
    ("extract", …), what was asked (`params`), where it stands and what came of it. `state`
    is the kind's own note of the steps it has done, so a job that stopped part-way resumes;
    `attempts` counts the starts since it last finished a step."""

    KIND: ClassVar[str] = "job"
    kind: str
    status: JobStatus = "queued"
    progress: JobProgress = Field(default_factory=JobProgress)
    params: dict[str, Any] = Field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)
    attempts: int = 0
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    updated_at: datetime

    @property
    def id(self) -> str:
        return self.key

    @property
    def space(self) -> str:
        return self.scope


class JobTicket(Record):
    """A job waiting for the worker of `annals serve` (scope = JOB_QUEUE_SCOPE, key = the
    job's id); removed once the job is done or failed. On AWS, SQS holds this instead."""

    KIND: ClassVar[str] = "job-ticket"
    space: str


# ------------------------------------------------------------------ the memory graph
# Entities, threads (arcs) and relations between events (docs/graph.md). All scoped to a
# space; ids are deterministic so a retried extraction writes the same records again.

EntityKind = Literal["person", "place", "pet", "work", "organisation", "project", "thing"]
RelationKind = Literal["updates", "same_thread", "follows", "causes"]


class Entity(Record):
    """Someone or something the events name (key = its id, "en_…"). Every name and alias
    occurs verbatim in the text or evidence of an event it links to."""

    KIND: ClassVar[str] = "entity"
    name: str
    kind: EntityKind = "thing"
    aliases: list[str] = Field(default_factory=list)
    events: list[str] = Field(default_factory=list)  # event ids, oldest first
    updated_at: datetime | None = None


class Thread(Record):
    """An arc (key = its id, "th_…"): a trip, a months-long plan. Its materials are its
    events and the summaries written about them."""

    KIND: ClassVar[str] = "thread"
    title: str
    aliases: list[str] = Field(default_factory=list)
    events: list[str] = Field(default_factory=list)  # oldest first
    summaries: list[str] = Field(default_factory=list)
    manual: bool = False  # created or edited by hand: never renamed by the linker
    # What the linker compares a new event with (docs/graph.md): the named things (entity
    # ids, people left out) and the words of its events.
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    version: int = 1
    created_at: datetime
    updated_at: datetime


class Relation(Record):
    """A link between two events (key = "src|kind|dst"), with the messages that show it."""

    KIND: ClassVar[str] = "relation"
    src: str
    dst: str
    kind: RelationKind
    note: str = ""  # why: the words that said so, or the rule that linked them
    created_at: datetime


class SummaryFold(Record):
    """A summary that folds others (key = its event id): the summaries of the level below
    it folds. A fold counts while its summary stands (usecases/extract/summaries.py)."""

    KIND: ClassVar[str] = "summary-fold"
    level: int
    folds: list[str] = Field(default_factory=list)


class Fact(Record):
    """A lasting fact about a person (key = person|attribute|value|valid_from), with the time
    it held: open (`valid_to` None) while it is current, closed by a later statement that
    changed or ended it (`closed_by`: that statement's message ref). Nothing is deleted: a
    changed fact stays, closed (chalicelib.usecases.facts)."""

    KIND: ClassVar[str] = "fact"
    person: str
    attribute: str
    value: str
    kind: str = ""  # a pet's kind beside its name
    # told only in passing so far ("Bristol traffic is murder"): in the profile, but the core
    # layer waits for a plain statement or a second mention before it says it every turn
    in_passing: bool = False
    valid_from: datetime | None = None  # None: held before anything said (an ended "used to")
    valid_to: datetime | None = None
    learned_at: datetime
    sources: list[str] = Field(default_factory=list)  # message refs that state it
    closed_by: str | None = None
    version: int = 1
    # the versions before a hand edit: {"version", "value", "valid_to", "edited_at"}
    history: list[dict[str, Any]] = Field(default_factory=list)


class Plan(Record):
    """A move the user spoke of before it happened (key = person|place): the later turn that
    names the place as where they are makes it their home (chalicelib.domain.fact_plans).
    Dropped when it comes true or a home is told plainly after it."""

    KIND: ClassVar[str] = "plan"
    person: str
    place: str
    said_at: datetime
    source: str  # the message ref that told it


class CoreDelivery(Record):
    """The core block a chat window was last sent (scope = space, key = window): its
    fingerprint and the window's recall count then (chalicelib.usecases.facts.core_for)."""

    KIND: ClassVar[str] = "core-delivery"
    fingerprint: str
    recall_count: int = 0
    at: datetime


class ArchivedTurns(Record):
    """The turns an event archived by hand cites (scope = space, key = the event id, refs =
    message refs): what the user archived stays out of recall, its turns as message cards
    and the facts told only there (chalicelib.usecases.events.hidden_turns). Deleted when
    the event is made active again."""

    KIND: ClassVar[str] = "archived-turns"
    refs: list[str] = Field(default_factory=list)


RECORD_KINDS: dict[str, type[Record]] = {
    cls.KIND: cls for cls in (Person, MemoryUse, JournalBatch, LLMUsageRecord, MergeState,
                              ApiKey, ApiKeyUse, KnownSpace, JobFailure, Job, JobTicket,
                              Entity, Thread, Relation, SummaryFold, Fact, Plan,
                              CoreDelivery, ArchivedTurns)}

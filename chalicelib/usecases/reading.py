"""Reading tasks: a host lends its model to read a space (issue 37, item 5).

A host that already has a chat model (the SillyTavern extension, a developer's chat app)
reads for Annals instead of Annals calling a model of its own:

- `hand_out` — GET /v1/spaces/{space}/reading?limit=N: for each session with pending turns
  (not edited, not leased), its first batch (up to `MAX_BATCH_CHARS`) becomes a task: a
  lease (a `ReadingLease` record, `LEASE_SECONDS`) and a ready chat-completions request —
  the LLM extractor's own instructions and prompt (nearby events, earlier turns, each turn's
  time phrases resolved by Annals) and its JSON schema. The host adds its `model` and sends
  `request` as it is.
- `answer` — POST /v1/spaces/{space}/reading/{lease} `{"answer": "<the reply's content>"}`:
  the same checks as the LLM extractor's (the object parses and validates; its events cite
  turns of the batch only; dates from Annals' time parser; fact values in the user's own
  turns), then the batch is extracted with that answer as its reading (events marked
  `read_by: "host"`). An answer that fails is refused (422, the reasons) and the batch is
  read by the rules at once; a lease that expired or was used answers 409 and changes
  nothing; turns edited or added inside the batch since the lease answer 409 too (the
  batch is handed out again).
- While a session's lease is out, the quiet window does not read that session with the
  rules (`leased`): its batch waits for the host until the lease expires, then it is read as
  any other (the rules, or Annals' model).

Nothing is half-written: an answer is checked whole before anything is stored, and the
extraction it feeds is the journalled one every reading goes through.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from chalicelib.domain.errors import Conflict, NotFound, Unprocessable
from chalicelib.domain.jsontext import parse_json_object
from chalicelib.domain.models import Message, SessionState
from chalicelib.domain.records import Record
from chalicelib.ports import ExtractionContext, LLMUsage, Reading, Services, UpstreamError
from chalicelib.usecases.extract import (
    attempt_id,
    cleaned,
    extract_session_result,
    pending_sessions,
    turns_before,
)
from chalicelib.usecases.extract.llm import (
    MAX_BATCH_CHARS,
    SYSTEM_PROMPT,
    ExtractionOut,
    build_prompt,
    cited_outside,
    nearby_events,
    split_batches,
    to_corrections,
    to_drafts,
    to_facts,
)
from chalicelib.usecases.extract.offline import OfflineExtractor
from chalicelib.usecases.llm_usage import persist_usage
from chalicelib.usecases.people import named_users, with_names

log = logging.getLogger("annals.reading")

LEASE_SECONDS = 600  # ten minutes: a slow local model reads a batch in one or two
MAX_TASKS = 10
MAX_TOKENS = 4000
KEEP_LEASES = timedelta(days=1)


class ReadingLease(Record):
    """One batch handed to a host (scope = the space, key = the lease id)."""

    KIND: ClassVar[str] = "reading-lease"
    session: str
    seq_from: int
    seq_to: int
    attempt: str  # the batch as handed out (extract.attempt_id): changed turns change it
    handed_at: datetime
    expires_at: datetime
    status: Literal["out", "answered", "refused"] = "out"


class ChatModel(Record):
    """The model a space's gateway chats last asked the upstream for (scope = the space):
    what the gateway reads that space with (`read_with_upstream`)."""

    KIND: ClassVar[str] = "chat-model"
    model: str


class ChatRequest(BaseModel):
    messages: list[dict[str, str]]
    response_format: dict[str, Any]
    temperature: float = 0.0
    max_tokens: int = MAX_TOKENS


class ReadingTask(BaseModel):
    lease: str
    expires_at: datetime
    session: str
    seq_from: int
    seq_to: int
    request: ChatRequest


class ReadingTasks(BaseModel):
    tasks: list[ReadingTask]


class ReadingQuery(BaseModel):
    limit: int = Field(default=1, ge=1, le=MAX_TASKS, description="tasks to hand out at most")


class ReadingAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=200_000,
                        description="the model's reply (the message content), as it came")


class ReadingResult(BaseModel):
    lease: str
    read_by: Literal["host", "gateway", "rules"]
    events: int
    facts: int = 0
    reasons: list[str] = Field(default_factory=list)  # why the answer was refused


# ------------------------------------------------------------------ handing out


def hand_out(services: Services, space: str, limit: int = 1,
             now: datetime | None = None) -> ReadingTasks:
    now = now or services.clock()
    out = leased_sessions(services, space, now)
    tasks: list[ReadingTask] = []
    for state in pending_sessions(services, space):
        if len(tasks) >= limit:
            break
        if state.dirty_from is not None or state.session in out:
            continue  # an edited session is rolled back and read by Annals itself
        task = task_for(services, state, now)
        if task is not None:
            tasks.append(task)
    return ReadingTasks(tasks=tasks)


def task_for(services: Services, state: SessionState, now: datetime) -> ReadingTask | None:
    """The session's first pending batch as a task, under a new lease (None: nothing pending)."""
    space, session = state.space, state.session
    start = state.extracted_upto + 1
    pending = services.store.get_messages(space, session, seq_from=start)
    if not pending:
        return None
    batch = split_batches(pending, MAX_BATCH_CHARS)[0]
    names = named_users(services, space)
    shown = with_names(cleaned(services, batch), names)
    prompt = build_prompt(shown, turns_before(services, space, session, start, names),
                          nearby_events(services.store, space, shown))
    lease = ReadingLease(scope=space, key="rl_" + secrets.token_hex(10), session=session,
                         seq_from=batch[0].seq, seq_to=batch[-1].seq,
                         attempt=attempt_id(state, start, batch), handed_at=now,
                         expires_at=now + timedelta(seconds=LEASE_SECONDS))
    services.store.put_record(lease)
    request = ChatRequest(
        messages=[{"role": "system", "content": SYSTEM_PROMPT},
                  {"role": "user", "content": prompt}],
        response_format={"type": "json_schema", "json_schema": {
            "name": "reading", "schema": ExtractionOut.model_json_schema()}})
    return ReadingTask(lease=lease.key, expires_at=lease.expires_at, session=session,
                       seq_from=lease.seq_from, seq_to=lease.seq_to, request=request)


def leased_sessions(services: Services, space: str, now: datetime) -> set[str]:
    """The space's sessions out with a host (a lease neither answered nor expired), read in one
    listing; leases a day past their expiry are forgotten on the way (a late answer to one is
    a 404 rather than a 409)."""
    leases = services.store.list_records(ReadingLease, space)
    old = [lease.key for lease in leases if lease.expires_at < now - KEEP_LEASES]
    if old:
        services.store.delete_records(ReadingLease, space, old)
    return {lease.session for lease in leases
            if lease.status == "out" and lease.expires_at > now}


# ------------------------------------------------------------------ answers


def answer(services: Services, space: str, lease_id: str, body: ReadingAnswer,
           now: datetime | None = None, read_by: Literal["host", "gateway"] = "host"
           ) -> ReadingResult:
    now = now or services.clock()
    lease = services.store.get_record(ReadingLease, space, lease_id)
    if lease is None:
        raise NotFound(f"no reading lease {lease_id!r} in space {space!r}",
                       code="unknown_lease")
    if lease.status != "out":
        raise Conflict(f"lease {lease_id!r} was already {lease.status}", code="lease_used")
    if lease.expires_at <= now:
        raise Conflict(f"lease {lease_id!r} expired at {lease.expires_at.isoformat()}; "
                       "its batch is read by Annals (or handed out again)",
                       code="lease_expired")
    batch = _batch(services, lease)
    if batch is None:
        _close(services, lease, "refused")
        raise Conflict(f"the turns of lease {lease_id!r} changed since it was handed "
                       "out; lease the batch again", code="lease_stale")
    try:
        reading = _check(body.answer, batch)
    except ValueError as exc:
        reasons = [str(exc)]
        log.warning("reading %s/%s: the host's answer was refused (%s); the rules read it",
                    space, lease.session, reasons[0])
        events = _extract(services, lease, OfflineExtractor(), now)
        _close(services, lease, "refused")
        result = ReadingResult(lease=lease_id, read_by="rules", events=events, reasons=reasons)
        raise Unprocessable("the answer failed the checks: " + "; ".join(reasons)
                            + ". The batch was read by the rules.", code="invalid_answer",
                            details=result.model_dump()) from None
    host = HostReading(reading, read_by)
    events = _extract(services, lease, host, now)
    _close(services, lease, "answered")
    return ReadingResult(lease=lease_id, read_by=read_by, events=events,
                         facts=sum(len(v) for v in host.told.values()))


def _batch(services: Services, lease: ReadingLease) -> list[Message] | None:
    """The lease's turns as they are now, or None when they changed since it was handed out
    (edited, read meanwhile, or turns added inside its range)."""
    state = services.store.get_session(lease.scope, lease.session)
    if state is None or state.dirty_from is not None:
        return None
    start = state.extracted_upto + 1  # in the attempt: a batch read meanwhile changes it
    batch = services.store.get_messages(lease.scope, lease.session, seq_from=start,
                                        seq_to=lease.seq_to)
    return batch if batch and attempt_id(state, start, batch) == lease.attempt else None


def _check(text: str, batch: Sequence[Message]) -> ExtractionOut:
    """The answer parsed and validated whole, as the LLM extractor checks a model's reply;
    ValueError with the reason when it fails."""
    try:
        reading = ExtractionOut.model_validate(parse_json_object(text))
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}"
                           for e in exc.errors()[:5])
        raise ValueError(f"the answer does not match the schema ({errors})") from None
    except ValueError:
        raise ValueError("the answer holds no JSON object") from None
    if outside := cited_outside(reading, batch):
        raise ValueError(f"the answer cites turns outside the batch: {outside}")
    return reading


def _extract(services: Services, lease: ReadingLease, extractor: Any, now: datetime) -> int:
    result = extract_session_result(services, lease.scope, lease.session, now,
                                    seq_to=lease.seq_to, extractor=extractor)
    return len(result.events)


def _close(services: Services, lease: ReadingLease, status: str) -> None:
    services.store.put_record(lease.model_copy(update={"status": status}))


class HostReading:
    """A reader whose reading is a host's checked answer (the batch's turns as the
    extraction passes them: cleaned and named, the same the prompt showed)."""

    name = "host"

    def __init__(self, reading: ExtractionOut, read_by: Literal["host", "gateway"] = "host"):
        self.reading = reading
        self.read_by = read_by
        self.told: dict[int, list] = {}  # the facts the answer told, as extraction took them

    def read(self, messages: Sequence[Message], ctx: ExtractionContext) -> Reading:
        # as the LLM extractor: the turns it told facts of are its, the others the rules'
        self.told = to_facts(self.reading, messages)
        return Reading(events=[d.model_copy(update={"read_by": self.read_by})
                               for d in to_drafts(self.reading, messages)], facts=self.told,
                       corrections=to_corrections(self.reading, messages))


# ------------------------------------------------------------------ the gateway reads


def note_chat_model(services: Services, space: str, model: str | None) -> None:
    """The gateway saw a chat ask for `model` (with ANNALS_GATEWAY_READS on): the model its
    space is read with."""
    if not model:
        return
    known = services.store.get_record(ChatModel, space)
    if known is None or known.model != model:
        services.store.put_record(ChatModel(scope=space, model=model[:200]))


def read_with_upstream(services: Services, state: SessionState, now: datetime) -> int | None:
    """ANNALS_GATEWAY_READS=on: the session's pending batches read by the chat gateway's
    upstream, with the model the space's chats use — in the quiet window, never in a user's
    request. Returns the events written, or None when the upstream cannot read (no
    upstream, no model known, an edited session); a batch the upstream fails or answers
    wrongly is the rules' (refused: at once; failed: by the caller, which reads the rest)."""
    if services.settings.gateway_reads != "on" or services.chat is None \
            or state.dirty_from is not None:
        return None
    known = services.store.get_record(ChatModel, state.space)
    model = known.model if known else services.chat.default_model
    if not model:
        return None
    events = 0
    while (task := task_for(services, state, now)) is not None:
        reply = _upstream_reply(services, state.space, task, model)
        if reply is None:  # the upstream failed: this lease goes, the caller reads the rest
            lease = services.store.get_record(ReadingLease, state.space, task.lease)
            if lease is not None:
                _close(services, lease, "refused")
            return events or None
        try:
            events += answer(services, state.space, task.lease, ReadingAnswer(answer=reply),
                             now, read_by="gateway").events
        except Unprocessable as exc:  # refused: the rules read that batch already
            events += (exc.details or {}).get("events", 0)
        state = services.store.get_session(state.space, state.session) or state
    return events


def _upstream_reply(services: Services, space: str, task: ReadingTask, model: str) -> str | None:
    try:
        reply = services.chat.complete({"model": model, **task.request.model_dump()})
    except UpstreamError as exc:
        log.warning("gateway reading of %s/%s failed upstream (%s): the rules read it",
                    space, task.session, exc.status)
        persist_usage(services.store, space, LLMUsage(failures=1), "reading", model)
        return None
    usage = reply.get("usage") or {}
    persist_usage(services.store, space, LLMUsage(
        calls=1, prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0)), "reading", model)
    choices = reply.get("choices") or [{}]
    return str(((choices[0] or {}).get("message") or {}).get("content") or "")

"""The MCP tools: plain functions over the use-cases, one per tool, typed so the SDK derives
each input schema from the signature (and the output schema from the return model).

Every tool acts on the caller's space (chalicelib.mcp.caller). A failure the model can act on
(an unknown id, a stale version, a bad date, a key that may only read) is raised as the SDK's
ToolError: the call answers `isError: true` with a message that says what to do next.

Containment: what a tool answers is read by a model, so every stored text in it (titles,
summaries, card and message texts, speakers, tags, participants, locations, thread titles and
aliases, source previews) goes through recall's context containment
(chalicelib.usecases.recall.context, "Containment"): `clean_text` for texts that may hold lines,
`clean_line` for the one-line fields. No invisible or bidi character, square bracket, tag
opener (`</system>`, `<|im_start|>`) or fence reaches the model; recall_memory's `context` is
the recall context itself, and the resource annals://{space}/timeline.md is the Markdown export
(chalicelib.usecases.export), contained the same way. What is stored stays verbatim (the REST
API's JSON answers it as it is); ids, refs and dates are the service's own.
"""

from __future__ import annotations

import functools
import keyword
from collections.abc import Callable
from datetime import date, datetime, timedelta, tzinfo
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import quote

from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import BaseModel, Field, ValidationError

from chalicelib.api.http import transient
from chalicelib.domain.dates import when_label
from chalicelib.domain.errors import AnnalsError, Conflict, validation_error
from chalicelib.domain.models import (
    ID_PATTERN,
    KIND_LIST_PATTERN,
    TIMELINE_KINDS,
    Card,
    DeliveryRequest,
    Event,
    Message,
    PatchEventRequest,
    RecallRequest,
    SaveEventRequest,
    Source,
    Verdict,
    When,
    event_kinds,
)
from chalicelib.domain.refs import EventRef, MessageRef, event_ref, parse_ref
from chalicelib.mcp.caller import Caller, current_caller
from chalicelib.usecases import deliveries as deliveries_uc
from chalicelib.usecases import events as events_uc
from chalicelib.usecases import export as export_uc
from chalicelib.usecases import facts as facts_uc
from chalicelib.usecases.graph import threads as threads_uc
from chalicelib.usecases.recall import recall_hook_sized
from chalicelib.usecases.recall.context import clean_line, clean_text

F = TypeVar("F", bound=Callable[..., Any])

READ_TOOLS = ("recall_memory", "read_memory", "timeline", "find_thread",
              "read_thread_materials", "read_profile")
WRITE_TOOLS = ("save_memory", "edit_memory", "forget_memory", "report_delivery")
MAX_IDS = 50
PAGE = 10  # memories per read_memory call (5 with evidence)
PAGE_WITH_EVIDENCE = 5
TIMELINE_URI = "annals://{space}/timeline.md"


# ------------------------------------------------------------------ result shapes


class RecalledCard(BaseModel):
    ref: str = Field(description="event:ID or message:SESSION:SEQ — for read_memory and "
                                 "report_delivery")
    id: str | None = Field(description="the event id (edit_memory, "
                                                     "forget_memory); none for a raw message")
    kind: Literal["event", "message"]
    date: str | None = Field(description="when it happened, e.g. 2026-06-14")
    title: str
    text: str
    importance: int | None = None
    speaker: str | None = None
    tags: list[str] = Field(default_factory=list)
    score: float


class RecallResult(BaseModel):
    verdict: Verdict = Field(description="hit / expanded: found; forgot: a named time has no "
                                         "memory (say you do not remember); none: nothing "
                                         "relevant enough; unparsed: the time was not "
                                         "understood; cooled: what was found was given in this "
                                         "window lately (use what you were told)")
    cards: list[RecalledCard]
    context: str = Field(description="the cards as text, ready to use in your answer")
    recalled_ids: list[str]


class EvidenceMessage(BaseModel):
    ref: str
    session: str
    seq: int
    role: str
    speaker: str
    content: str
    at: datetime


class Memory(BaseModel):
    """An event of the chronicle, as read_memory, save_memory, edit_memory and forget_memory
    return it. `version` is what edit_memory needs."""

    id: str
    ref: str = Field(description="event:ID, for report_delivery")
    version: int = Field(description="give it to edit_memory")
    status: str = Field(description="active; archived: forgotten (edit_memory can restore it)")
    date: str = Field(description="when it happened, as a label (a day, a month, a range)")
    when: When
    title: str
    summary: str
    importance: int
    participants: list[str] = Field(default_factory=list)
    location: str | None = None
    tags: list[str] = Field(default_factory=list)
    kind: str = Field(description="event (drawn from chats), note (saved by hand), summary")
    plan: bool = Field(default=False, description="something planned for `when`, not done yet")
    sources: list[Source] = Field(default_factory=list,
                                  description="the chat messages it cites (session, seqs)")
    created_at: datetime
    updated_at: datetime
    evidence: list[EvidenceMessage] | None = Field(
        default=None, description="the messages it cites, with with_evidence=true")


class ReadResult(BaseModel):
    memories: list[Memory]
    messages: list[EvidenceMessage] = Field(
        default_factory=list, description="raw messages asked for by message:SESSION:SEQ ref")
    missing: list[str] = Field(default_factory=list, description="ids that were not found")
    next_cursor: str | None = Field(
        default=None, description="more ids remain: call again with this cursor")


class TimelineEntry(BaseModel):
    id: str
    ref: str
    version: int
    date: str
    title: str
    summary: str
    importance: int
    tags: list[str]
    kind: str
    plan: bool
    status: str


class TimelineResult(BaseModel):
    memories: list[TimelineEntry]
    next_cursor: str | None = Field(description="more memories: pass it back")


class ThreadFound(BaseModel):
    id: str = Field(description="give it to read_thread_materials")
    title: str
    aliases: list[str] = Field(default_factory=list)
    events: int = Field(description="how many memories it holds")
    first: str | None = Field(default=None, description="when its first memory happened")
    last: str | None = Field(default=None, description="when its latest memory happened")


class FindThreadResult(BaseModel):
    threads: list[ThreadFound]


class Material(BaseModel):
    id: str
    ref: str = Field(description="event:ID, for read_memory and report_delivery")
    date: str
    title: str
    summary: str
    kind: str
    status: str = Field(description="active; superseded: replaced by a later memory")
    sources: list[str] = Field(default_factory=list,
                               description="the messages it cites, as message:SESSION:SEQ")


class ThreadMaterials(BaseModel):
    id: str
    title: str
    aliases: list[str] = Field(default_factory=list)
    materials: list[Material] = Field(description="its memories, oldest first")
    summaries: list[str] = Field(default_factory=list, description="ids of its summaries")


class ProfileFact(BaseModel):
    attribute: str = Field(description="lives_in, works_at, works_as, studies, pet, partner, "
                                       "child, allergic_to, likes, dislikes, owns, learning")
    value: str
    kind: str = ""
    since: str | None = Field(default=None, description="when it was first told (a date)")
    until: str | None = Field(default=None, description="when it changed or ended; null: "
                                                        "true now")
    current: bool
    status: Literal["current", "unconfirmed", "ended"] = Field(
        default="current", description="unconfirmed: a role told at a job that has ended "
        "since, with no job known now (it may have ended with it)")
    sources: list[str] = Field(description="message refs that state it, for read_memory")


class ProfileResult(BaseModel):
    name: str
    facts: list[ProfileFact] = Field(description="current facts first, then the ended ones, "
                                                 "latest first")


class DeliveryResult(BaseModel):
    window: str
    recorded: list[str] = Field(description="the refs now cooling down in this window")


# ------------------------------------------------------------------ helpers


def tool_errors(fn: F) -> F:
    """Errors the model can act on become ToolError (isError results); a transient backend
    failure says to retry; anything else stays a crash (logged; the model sees no detail)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # A parameter named after a Python keyword (`from`) is `from_` in the signature,
        # with the keyword as its alias; the SDK passes it by alias.
        kwargs = {f"{k}_" if keyword.iskeyword(k) else k: v for k, v in kwargs.items()}
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except AnnalsError as err:
            raise ToolError(describe(err)) from None
        except ValidationError as exc:
            raise ToolError(describe(validation_error(exc))) from None
        except Exception as exc:
            unavailable = transient(exc)
            if unavailable is None:
                raise
            raise ToolError(describe(unavailable)) from None

    return wrapper  # type: ignore[return-value]


def describe(err: AnnalsError) -> str:
    text = f"{err.code}: {err.message}"
    if isinstance(err, Conflict):
        current = (err.details or {}).get("current_version") \
            if isinstance(err.details, dict) else None
        retry = f" and retry with version {current}" if current else " and retry"
        text += (". The memory changed since you read it: read it again with read_memory, "
                 f"check the change{retry} if your edit still applies.")
    elif err.code == "unavailable":
        text += " (nothing was written; call the tool again)"
    return text


def reader() -> Caller:
    caller = current_caller()
    if not caller.may_read:
        raise ToolError(f"forbidden: this key may not use space {caller.space!r}")
    return caller


def writer(tool: str) -> Caller:
    caller = current_caller()
    if not caller.may_write:
        raise ToolError(f"forbidden: this key may only read space {caller.space!r}; "
                        f"{tool} writes")
    return caller


def local_zone(caller: Caller) -> tzinfo:
    """ANNALS_TZ, else the zone of this process (the desktop's, for `annals mcp`)."""
    if caller.services.settings.tz:
        from zoneinfo import ZoneInfo

        return ZoneInfo(caller.services.settings.tz)
    return datetime.now().astimezone().tzinfo  # type: ignore[return-value]


def parse_when(text: str, name: str, caller: Caller) -> When:
    """An ISO date or time, or a time expression (昨天, 上周二下午, last Friday) read against
    now in the caller's zone."""
    text = text.strip()
    zone = local_zone(caller)
    try:
        day = date.fromisoformat(text)
    except ValueError:
        pass
    else:
        start = datetime(day.year, day.month, day.day, tzinfo=zone)
        return When(start=start, end=start + timedelta(days=1), granularity="day")
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    else:
        at = at if at.tzinfo else at.replace(tzinfo=zone)
        return When(start=at, end=at + timedelta(minutes=1), granularity="minute")
    from chalicelib.domain.timeparse import parse_time

    span = parse_time(text, caller.services.clock().astimezone(zone), zone)
    if span is None:
        raise ToolError(f"bad_time: {name}={text!r} is neither an ISO date/time (2026-06-14, "
                        "2026-06-14T20:00+08:00) nor a time expression (昨天, 上周二, "
                        "last Friday)")
    return When(start=span.start, end=span.end, granularity=span.granularity)


def as_ref(value: str) -> str:
    """event:ID and message:SESSION:SEQ as given; a bare id is an event id."""
    value = value.strip()
    if value.startswith(("event:", "message:")):
        return value
    return event_ref(value)


def event_id(value: str) -> str:
    try:
        ref = parse_ref(as_ref(value))
    except ValueError:
        ref = None
    if not isinstance(ref, EventRef):
        raise ToolError(f"not_an_event: {value!r} is not an event id (a raw message "
                        "cannot be edited or forgotten; save a memory about it instead)")
    return ref.id


def labels(values: list[str]) -> list[str]:
    """One-line stored labels (tags, participants, aliases) contained; empty ones dropped."""
    return [v for v in map(clean_line, values) if v]


def optional_line(value: str | None) -> str | None:
    return None if value is None else clean_line(value)


def memory(event: Event, evidence: list[Message] | None = None,
           clean: Callable[[str], str] | None = None) -> Memory:
    data = event.model_dump(include=set(Memory.model_fields))
    data.update(title=clean_line(event.title), summary=clean_text(event.summary),
                participants=labels(event.participants), tags=labels(event.tags),
                location=optional_line(event.location),
                sources=[s.model_copy(update={"preview": clean_line(s.preview)})
                         for s in event.sources])
    cited = None if evidence is None else [evidence_message(m, clean) for m in evidence]
    return Memory(**data, ref=event.ref, date=when_label(event.when), evidence=cited)


def evidence_message(msg: Message, clean: Callable[[str], str] | None = None) -> EvidenceMessage:
    """A stored message as the model reads it: cleaned (`services.clean`: no <think> block,
    no status panel) when `clean` is given, then contained; the stored message keeps its
    text."""
    content = clean(msg.content) if clean else msg.content
    return EvidenceMessage(ref=msg.ref, session=msg.session, seq=msg.seq, role=msg.role,
                           speaker=clean_line(msg.speaker), content=clean_text(content),
                           at=msg.at)


def card(c: Card) -> RecalledCard:
    ref = parse_ref(c.ref)
    return RecalledCard(ref=c.ref, id=ref.id if isinstance(ref, EventRef) else None,
                        kind=c.kind, date=when_label(c.when) if c.when else None,
                        title=clean_line(c.title), text=clean_text(c.text),
                        importance=c.importance, speaker=optional_line(c.speaker),
                        tags=labels(c.tags), score=round(c.score, 4))


def timeline_uri(space: str) -> str:
    return TIMELINE_URI.format(space=quote(space, safe=""))


# ------------------------------------------------------------------ parameter types

Query = Annotated[str, Field(min_length=1, max_length=4000, description=(
    "what to remember, in the user's words, e.g. 奶糖体检的结果 / 上周二我们聊了什么 / "
    "what did Sam book?"))]
TimeHint = Annotated[str | None, Field(max_length=200, description=(
    "a time to search first when the query names none: 2026-06-14, 上周二, 国庆节, "
    "last weekend"))]
Window = Annotated[str | None, Field(pattern=ID_PATTERN, description=(
    "your chat window/conversation id: cards you reported as delivered in this window "
    "are not shown again for a while"))]
MaxCards = Annotated[int | None, Field(ge=1, le=50, description=(
    "at most this many cards (default 2: only cards relevant enough pass)"))]
Ids = Annotated[list[Annotated[str, Field(min_length=1, max_length=300)]], Field(
    min_length=1, max_length=MAX_IDS, description=(
        "event ids (ev_…) or refs from recall_memory / timeline: event:ID, "
        "message:SESSION:SEQ"))]
When_ = Annotated[str | None, Field(max_length=200, description=(
    "when it happened: an ISO date or time (2026-06-14, 2026-06-14T20:00+08:00) or an "
    "expression such as 昨天, 上周二, 去年国庆, last Friday; default: now"))]
Title = Annotated[str | None, Field(max_length=200, description=(
    "a short title, e.g. 奶糖体检; default: the start of the summary"))]
Tags = Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]] | None, Field(
    max_length=20, description="labels, e.g. [\"宠物\", \"健康\"]")]
Importance = Annotated[int | None, Field(ge=1, le=10, description=(
    "1 (trivia) to 10 (life event); default 6. ≥ 8 is never faded out"))]
EventId = Annotated[str, Field(min_length=1, max_length=300, description=(
    "the event id (ev_…) or its ref event:ID"))]
Cursor = Annotated[str | None, Field(max_length=512, description=(
    "next_cursor of the previous call, for the next page"))]


# ------------------------------------------------------------------ the tools


@tool_errors
def recall_memory(query: Query, time_hint: TimeHint = None, window: Window = None,
                  max_cards: MaxCards = None) -> RecallResult:
    caller = reader()
    result = recall_hook_sized(caller.services, caller.space, RecallRequest(
        query=query, time_hint=time_hint, window=window, max_cards=max_cards),
        may_write=caller.may_write)  # a read key's recall is not counted in the window
    return RecallResult(verdict=result.verdict, cards=[card(c) for c in result.cards],
                        context=result.context, recalled_ids=result.recalled_ids)


@tool_errors
def read_memory(ids: Ids, with_evidence: Annotated[bool, Field(description=(
        "also return the chat messages each memory cites (its evidence)"))] = False,
                cursor: Cursor = None) -> ReadResult:
    caller = reader()
    services, space = caller.services, caller.space
    page = PAGE_WITH_EVIDENCE if with_evidence else PAGE
    start = _offset(cursor, len(ids))
    out = ReadResult(memories=[])
    for raw in ids[start:start + page]:
        try:
            ref = parse_ref(as_ref(raw))
        except ValueError:
            out.missing.append(raw)
            continue
        if isinstance(ref, MessageRef):
            msg = services.store.get_message(space, ref.session, ref.seq)
            if msg is None:
                out.missing.append(raw)
            else:
                out.messages.append(evidence_message(msg, services.clean))
            continue
        event = services.store.get_event(space, ref.id)
        if event is None:
            out.missing.append(raw)
            continue
        out.memories.append(memory(event, events_uc.evidence(services, event)
                                   if with_evidence else None, services.clean))
    if start + page < len(ids):
        out.next_cursor = str(start + page)
    return out


def _offset(cursor: str | None, total: int) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit() or int(cursor) >= total:
        raise ToolError(f"invalid_cursor: {cursor!r} is not a next_cursor of these ids")
    return int(cursor)


@tool_errors
def timeline(
    from_: Annotated[str | None, Field(alias="from", max_length=200, description=(
        "the earliest time: 2026-06-01, 2026-06, 上个月, last week; default: the beginning"))] = None,
    to: Annotated[str | None, Field(max_length=200, description=(
        "the latest time (its whole day/month counts): 2026-06-30, 昨天; default: no end"))] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="memories per page")] = 20,
    cursor: Cursor = None,
    kind: Annotated[str | None, Field(max_length=64, pattern=KIND_LIST_PATTERN, description=(
        "what to list: event,note (the default: what happened, and notes saved by hand), "
        "summary (session summaries, which retell events), or all"))] = None,
) -> TimelineResult:
    caller = reader()
    start = parse_when(from_, "from", caller).start if from_ else None
    end = parse_when(to, "to", caller).end if to else None
    page = events_uc.list_events(caller.services, caller.space, start=start, end=end,
                                 limit=limit, cursor=cursor,
                                 kinds=event_kinds(kind) if kind else TIMELINE_KINDS)
    return TimelineResult(memories=[TimelineEntry(
        id=e.id, ref=e.ref, version=e.version, date=when_label(e.when),
        title=clean_line(e.title), summary=clean_text(e.summary), importance=e.importance,
        tags=labels(e.tags), kind=e.kind, plan=e.plan, status=e.status)
        for e in page.events], next_cursor=page.next_cursor)


@tool_errors
def save_memory(
    summary: Annotated[str, Field(min_length=1, max_length=4000, description=(
        "the memory in one or two sentences, e.g. 小明的猫奶糖6月14日体检，一切正常 / "
        "Sam's sister gets married in Lisbon on 2026-09-12"))],
    happened_at: When_ = None, title: Title = None, tags: Tags = None,
    importance: Importance = None,
) -> Memory:
    caller = writer("save_memory")
    at = parse_when(happened_at, "happened_at", caller).start if happened_at else None
    fields: dict[str, Any] = {"summary": summary, "title": title, "happened_at": at,
                              "tags": tags, "importance": importance}
    request = SaveEventRequest(**{k: v for k, v in fields.items() if v is not None})
    event = events_uc.save_event(caller.services, caller.space, request, local_zone(caller))
    return memory(event)


@tool_errors
def edit_memory(
    id: EventId,
    version: Annotated[int, Field(ge=1, description=(
        "the version you read (read_memory / timeline); if the memory changed since, "
        "the edit is refused: read it again"))],
    summary: Annotated[str | None, Field(min_length=1, max_length=4000,
                                         description="the new text")] = None,
    title: Title = None,
    happened_at: Annotated[str | None, Field(max_length=200, description=(
        "the corrected time: 2026-06-14, 上周二, last Friday"))] = None,
    importance: Importance = None, tags: Tags = None,
    participants: Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
                            Field(max_length=20,
                                  description="who took part, e.g. [\"小明\"]")] = None,
    location: Annotated[str | None, Field(max_length=200,
                                          description="where, e.g. 宠物医院")] = None,
    status: Annotated[Literal["active", "archived"] | None, Field(description=(
        "\"active\" brings a forgotten (archived) memory back"))] = None,
) -> Memory:
    caller = writer("edit_memory")
    when = parse_when(happened_at, "happened_at", caller) if happened_at else None
    fields: dict[str, Any] = {"summary": summary, "title": title, "when": when,
                              "importance": importance, "tags": tags,
                              "participants": participants, "location": location,
                              "status": status}
    request = PatchEventRequest(version=version,
                                **{k: v for k, v in fields.items() if v is not None})
    return memory(events_uc.patch_event(caller.services, caller.space, event_id(id), request))


@tool_errors
def forget_memory(id: EventId) -> Memory:
    caller = writer("forget_memory")
    return memory(events_uc.archive_event(caller.services, caller.space, event_id(id)))


@tool_errors
def report_delivery(
    window: Annotated[str, Field(pattern=ID_PATTERN, description=(
        "your chat window/conversation id, the same you give recall_memory"))],
    ids: Annotated[list[Annotated[str, Field(min_length=1, max_length=300)]], Field(
        min_length=1, max_length=50, description=(
            "the refs (or event ids) of the cards you actually used in your answer"))],
) -> DeliveryResult:
    caller = writer("report_delivery")
    recorded = deliveries_uc.record_deliveries(
        caller.services, caller.space,
        DeliveryRequest(window=window, ids=[as_ref(i) for i in ids]))
    return DeliveryResult(window=window, recorded=[d.ref for d in recorded])


@tool_errors
def find_thread(query: Annotated[str, Field(min_length=1, max_length=400, description=(
        "words of the arc: a trip, a plan, a project, e.g. 京都旅行 / the Kyoto trip"))],
                ) -> FindThreadResult:
    caller = reader()
    found = threads_uc.find_threads(caller.services, caller.space, query)
    out = []
    for thread in found:
        events = threads_uc.ordered(caller.services.store.load_events(caller.space,
                                                                      thread.events))
        out.append(ThreadFound(
            id=thread.key, title=clean_line(thread.title), aliases=labels(thread.aliases),
            events=len(events),
            first=when_label(events[0].when) if events else None,
            last=when_label(events[-1].when) if events else None))
    return FindThreadResult(threads=out)


@tool_errors
def read_thread_materials(id: Annotated[str, Field(pattern=ID_PATTERN, description=(
        "the thread id (th_…) from find_thread"))]) -> ThreadMaterials:
    caller = reader()
    detail = threads_uc.get_thread(caller.services, caller.space, id)
    return ThreadMaterials(
        id=detail.id, title=clean_line(detail.title), aliases=labels(detail.aliases),
        summaries=detail.summaries,
        materials=[Material(id=e.id, ref=e.ref, date=when_label(e.when),
                            title=clean_line(e.title), summary=clean_text(e.summary),
                            kind=e.kind, status=e.status,
                            sources=[f"message:{s.session}:{q}" for s in e.sources
                                     for q in range(s.seq_start, s.seq_end + 1)][:50])
                   for e in detail.materials])


@tool_errors
def read_profile(name: Annotated[str, Field(min_length=1, max_length=100, description=(
        "the person's name as they speak in the chat, e.g. 小明 or Mia"))]) -> ProfileResult:
    caller = reader()
    found = facts_uc.profile(caller.services, caller.space, name)
    return ProfileResult(name=clean_line(found.name), facts=[ProfileFact(
        attribute=f.attribute, value=clean_line(f.value), kind=clean_line(f.kind),
        since=f.valid_from.date().isoformat() if f.valid_from else None,
        until=f.valid_to.date().isoformat() if f.valid_to else None, current=f.current,
        status=f.status, sources=f.sources[:20]) for f in found.facts])


def timeline_markdown(space: str) -> str:
    """The resource annals://{space}/timeline.md: the space's chronicle as Markdown, its
    stored text contained like recall's context (chalicelib.usecases.export; the SDK has
    percent-decoded `space`)."""
    caller = current_caller()
    if space != caller.space or not caller.may_read:
        raise ResourceError(f"this server serves space {caller.space!r}, not {space!r}: "
                            f"read {timeline_uri(caller.space)}")
    services = caller.services
    return export_uc.export_markdown(services, caller.space,
                                     services.settings.highlight_threshold)


# ------------------------------------------------------------------ descriptions

DESCRIPTIONS = {
    "recall_memory": (
        "Recall long-term memories about the user and your shared past before you answer. "
        "Call it whenever the user refers to something earlier (a person, a pet, a plan, "
        "\"上次\", \"还记得…吗\", \"last time\") or names a time (昨天, 上周二, 国庆节, "
        "last weekend). A named time is searched first and widened twice; if nothing is "
        "there the verdict is \"forgot\": then say you do not remember rather than invent. "
        "Verdict \"none\": nothing relevant enough, answer without memories; "
        "\"cooled\": what it found was given in this window lately, use what you were told. "
        "Examples: {\"query\": \"奶糖体检的结果怎么样\"}, "
        "{\"query\": \"我们上周二聊了什么\"}, {\"query\": \"what did Sam book?\", "
        "\"max_cards\": 3}. After you use cards in a reply, call report_delivery with "
        "their refs so they are not repeated."),
    "read_memory": (
        "Read memories in full by id: the event (title, summary, when, importance, tags, "
        "version) and, with with_evidence=true, the chat messages it was drawn from. Use "
        "it to check details, or to get the version edit_memory needs. Accepts event ids "
        "(ev_…) and refs from recall_memory/timeline (event:ID, message:SESSION:SEQ). "
        "E.g. the user asks \"我当时原话是怎么说的？\" → read the card with its evidence. "
        "Answers at most 10 memories per call (5 with evidence); next_cursor pages on. "
        "Example: {\"ids\": [\"event:ev_3f…\"], \"with_evidence\": true}."),
    "timeline": (
        "List the chronicle, oldest first: what happened between two times. Use it for "
        "\"我们认识以来发生了什么\", \"六月份都有什么事\", \"what happened last month?\". "
        "from/to take ISO dates or expressions (2026-06, 上个月, last week). Events and "
        "notes by default; kind=summary lists the session summaries instead. Page with "
        "next_cursor. Example: {\"from\": \"2026-06-01\", \"to\": \"2026-06-30\", "
        "\"limit\": 20}."),
    "save_memory": (
        "Save a memory by hand when the user tells you something worth remembering or asks "
        "you to remember it (\"记住…\", \"别忘了…\", \"remember that…\"). One fact or event "
        "per memory, written so it is clear later without the chat: who, what, when. "
        "Examples: {\"summary\": \"小明的猫奶糖体检一切正常\", \"happened_at\": \"昨天\", "
        "\"tags\": [\"宠物\"]}, {\"summary\": \"用户对花生过敏\", \"importance\": 9}, "
        "{\"summary\": \"Sam booked a flight to Lisbon for his sister's wedding\", "
        "\"happened_at\": \"2026-06-20\"}."),
    "edit_memory": (
        "Correct a memory: give its id, the version you read (read_memory or timeline) and "
        "only the fields to change. If it changed since you read it the edit is refused "
        "with the current version: read it again and retry. Example: the user says "
        "\"奶糖是前天体检的，不是昨天\" → {\"id\": \"ev_3f…\", \"version\": 1, "
        "\"happened_at\": \"前天\"}; {\"id\": \"ev_3f…\", \"version\": 2, "
        "\"importance\": 8}. status \"active\" restores a forgotten memory."),
    "forget_memory": (
        "Forget a memory the user wants gone or that is wrong (\"忘掉这件事\", \"那不是真的\", "
        "\"forget that\"): it is archived, no longer recalled, and can be restored with "
        "edit_memory status \"active\"; nothing is deleted for good. "
        "Example: {\"id\": \"ev_3f…\"}."),
    "report_delivery": (
        "Report which recalled cards you actually used in your reply, with the same window "
        "id you gave recall_memory. They cool down in that window (not shown again for a "
        "few recalls or half an hour) and count as used, so they do not fade. You "
        "recalled 奶糖体检 and mentioned it in your reply → report that card. "
        "Example: {\"window\": \"chat-1\", \"ids\": [\"event:ev_3f…\"]}."),
    "find_thread": (
        "Find a thread: an arc of memories that belong together — a trip planned, booked, "
        "taken and remembered; a months-long project. Use it when the user asks about a "
        "whole story (\"京都那次旅行从计划到回来是怎样的\", \"how did the move go?\"). "
        "Returns thread ids and titles, best match first; read one with "
        "read_thread_materials. Example: {\"query\": \"京都旅行\"}."),
    "read_profile": (
        "Read what is true about a person now, and what was: where they live, work, what "
        "they study or learn, their pets, partner and children, allergies, likes and "
        "dislikes, what they own — each with when it was told and, if it changed, when it "
        "ended. Use it before answering \"我现在住哪来着\", \"what's my cat called?\", or to "
        "avoid suggesting what they cannot eat. Example: {\"name\": \"小明\"}."),
    "read_thread_materials": (
        "Read a thread's materials: its memories oldest first (date, title, summary, the "
        "messages each cites) and its summaries. A memory with status \"superseded\" was "
        "replaced by a later one (e.g. a changed booking, 换了酒店): tell the story with the "
        "later. Use it after find_thread for \"把京都旅行从头讲一遍\". "
        "Example: {\"id\": \"th_3f…\"}."),
}

TOOLS: dict[str, Callable[..., Any]] = {
    "recall_memory": recall_memory, "read_memory": read_memory, "timeline": timeline,
    "find_thread": find_thread, "read_thread_materials": read_thread_materials,
    "read_profile": read_profile,
    "save_memory": save_memory, "edit_memory": edit_memory, "forget_memory": forget_memory,
    "report_delivery": report_delivery,
}

"""The OpenAPI 3.1 document of the HTTP API (GET /v1/openapi.json), generated from the
pydantic models: nothing here is a hand-written schema dump.

`OPERATIONS` is the one table of routes: method, path, operationId (the view's name in
app.py), summary and the models in and out. tests/unit/test_openapi.py checks it against
the routes registered on the Chalice app, both ways, so the two cannot drift apart.

Error statuses follow from an operation's shape (`Operation.statuses`): every route but the
public ones can answer 401 (no or a wrong key), 403 (a key outside its scope) and 503 (a
backend failing for now, with Retry-After: chalicelib.api.http.transient); a checked path
id, a query string or a body can be refused with 400 (and a body with 413, 415 and 422, a
query with 422); route-specific ones (404, 409) are listed in the table. Every error has
the body {"error": {"code", "message", "details"?}}.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.json_schema import models_json_schema

from chalicelib import __version__
from chalicelib.domain.models import (
    VERDICT_TEXT,
    Delivery,
    DeliveryRequest,
    Event,
    EventList,
    EventListQuery,
    IdStr,
    Message,
    MessageIn,
    MessageList,
    MessageListQuery,
    PatchEventRequest,
    PutMessagesRequest,
    PutMessagesResponse,
    RecallRequest,
    RecallResponse,
    SaveEventRequest,
    SessionId,
    Verdict,
)
from chalicelib.usecases.background import (
    ExtractJobRequest,
    JobList,
    JobListQuery,
    JobQuery,
    JobView,
)
from chalicelib.usecases.facts import FactView, PatchFactRequest, Profile, ProfileList
from chalicelib.usecases.gateway import ChatCompletion, ChatCompletionRequest, ModelList
from chalicelib.usecases.graph.models import (
    CreateThreadRequest,
    EntityDetail,
    EntityList,
    EntityQuery,
    EventRelation,
    GraphDocument,
    GraphImport,
    PatchThreadRequest,
    ThreadDetail,
    ThreadList,
    ThreadView,
)
from chalicelib.usecases.keys import CreateKeyRequest, KeyInfo, KeyList, NewKey, SpaceList
from chalicelib.usecases.reading import ReadingAnswer, ReadingQuery, ReadingResult, ReadingTasks

OPENAPI_VERSION = "3.1.0"
REF = "#/components/schemas/{model}"
JSON_TYPE = "application/json"

# ---------------------------------------------------------------- response shapes
# Routes that answer a dict rather than a domain model: their shape, as models, so the
# document says what a client gets (and schemathesis checks the server keeps to it).


class Health(BaseModel):
    status: Literal["ok"]
    version: str


class OpenAPIDocument(BaseModel):
    """This document."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]


class DeletedMessage(BaseModel):
    deleted: Message


class DraftCounts(BaseModel):
    repaired: int = Field(default=0, description="drafts saved after a repair (a fragment "
                          "trimmed, a title made or freed of its date stamp, markup removed, "
                          "text cut, a bad date or source fixed)")
    dropped: int = Field(default=0, description="drafts not saved: nothing worth keeping "
                         "was left, or they cited no message of the batch")


class ExtractedEvents(BaseModel):
    events: list[Event]
    drafts: DraftCounts = Field(default_factory=DraftCounts,
                                description="what the draft checkpoint did before saving")


class ExtractAccepted(BaseModel):
    """POST …/extract answered 202: the work became a background job; follow it at the
    Location header (GET …/jobs/{job_id}) until its status is done or failed."""

    job: JobView


class EventThread(BaseModel):
    id: str
    title: str


class EventWithEvidence(Event):
    evidence: list[Message] | None = Field(
        default=None, description="the cited messages, with ?evidence=true")
    relations: list[EventRelation] | None = Field(
        default=None, description="links to other events (updates, same_thread, follows, "
                                  "causes; docs/graph.md), when it has any")
    thread: EventThread | None = Field(
        default=None, description="the thread (arc) the event belongs to, when it has one")


class JsonRpcMessage(BaseModel):
    """One JSON-RPC 2.0 message of the Model Context Protocol, opaque here: a request such as
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"} in, its JSON-RPC response out (a
    notification is answered 202 with no body). The MCP specification defines them;
    docs/mcp.md says which tools and resources this server has."""

    model_config = ConfigDict(extra="allow")


class EventHistory(BaseModel):
    versions: list[Event]


class RecordedDeliveries(BaseModel):
    recorded: list[Delivery]


class HookRecallResponse(BaseModel):
    """What a chat host's pre-model hook gets (POST …/hook/recall): the recall, shaped for
    injection. The host adds `additional_context` to the model's prompt and, after a
    successful reply, reports the ids it sent (POST …/deliveries) for the cooldown."""

    additional_context: str = Field(
        description="the recall's context, ready to add to the prompt; empty: add nothing")
    recalled_ids: list[str] = Field(
        description="the refs behind additional_context; report them to POST …/deliveries "
                    "once the reply went out")
    injected: Literal[False] = Field(
        default=False, description="always false: Annals never injects, the host does")
    verdict: Verdict = Field(description=VERDICT_TEXT)
    trace: list[str]
    core_context: str | None = Field(
        default=None, description="the current facts of the people in the chat (the "
        "window's user, anyone the turn names), within ANNALS_CORE_TOKENS; sent when the "
        "window has not had it for 20 recalls or a fact in it changed, else null; add it "
        "beside additional_context")

    @classmethod
    def of(cls, result: RecallResponse, core: str | None = None) -> HookRecallResponse:
        return cls(additional_context=result.context, recalled_ids=result.recalled_ids,
                   verdict=result.verdict, trace=result.trace, core_context=core)


class MergeSummary(BaseModel):
    new: int
    merged: bool
    created: int
    updated: int
    superseded: int
    merger: str | None


class EventCounts(BaseModel):
    active: int
    archived: int
    superseded: int
    total: int


class IndexingStats(BaseModel):
    writer: str
    keyword_pending: int
    vector_pending: int


class LLMStats(BaseModel):
    provider: str
    model: str | None
    total: dict[str, int]
    tasks: dict[str, dict[str, int]]


class JobFailureInfo(BaseModel):
    job: str
    unit: str
    error: str
    failures: int
    last_at: str
    quarantined: bool


class MergeStats(BaseModel):
    pending: int
    runs: int
    last_merged_at: str | None


class SpaceStats(BaseModel):
    space: str
    events: EventCounts
    summaries: int = Field(0, description="active summaries (kind summary), not in `events`")
    sessions: int
    messages: int
    pending_sessions: int
    indexing: IndexingStats
    extractor: str
    merger: str
    llm: LLMStats
    failures: list[JobFailureInfo] = Field(
        default_factory=list, description="background work that failed for this space")
    merge: MergeStats


class ForgetSummary(BaseModel):
    space: str
    faded: list[str] = Field(description="ids of the events archived by fading")
    compacted_journal_batches: int


class ExportedEvents(BaseModel):
    space: str
    events: list[Event]


class ErrorDetail(BaseModel):
    code: str = Field(description="stable machine code, e.g. validation_error, not_found")
    message: str
    details: Any = Field(default=None, description="422: every problem, as {loc, msg, type}")


class ErrorResponse(BaseModel):
    error: ErrorDetail


# ---------------------------------------------------------------- query strings


class EventQuery(BaseModel):
    """Query string of GET …/events/{event_id}."""

    evidence: bool = Field(default=False, description="also return the cited messages")


class ExportQuery(BaseModel):
    """Query string of GET …/export."""

    format: Literal["markdown", "json"] = "markdown"
    status: Literal["active", "archived", "all"] = Field(
        default="active", description="which events the markdown export lists")


# ---------------------------------------------------------------- the table


ERROR_TEXT = {
    400: "Bad request: an invalid path id, malformed or missing JSON, a bad query value, or "
         "malformed HTTP (an invalid Content-Length header)",
    401: "Missing or invalid bearer key",
    403: "The key may not do this",
    404: "No such resource; unknown_space: a read of a space nothing was ever written to "
         "(a misspelt space is not an empty one)",
    409: "Version conflict: the resource changed since it was read",
    413: "The body is larger than the limit",
    415: "Unsupported Content-Type",
    422: "The body or query failed validation (details lists every problem)",
    429: "Over a limit of the key or the space (requests at once, per second, queued jobs): "
         "retry after Retry-After seconds (docs/api-limits.md)",
    503: "A backend is failing for now, or the request ran out of time "
         "(ANNALS_REQUEST_SECONDS); nothing was half-written: retry after Retry-After "
         "seconds",
    502: "The chat gateway's upstream could not be reached or broke off (an upstream's own "
         "error answer passes through with its status and body)",
    504: "The chat gateway's upstream did not answer in time",
}


# Reads of a space: 404 unknown_space where nothing was ever written (app.read_space).
SPACE_READS = frozenset({
    "list_messages", "list_events", "get_event", "event_history", "recall", "hook_recall",
    "export", "list_entities", "get_entity", "list_threads", "get_thread", "list_profiles",
    "get_profile", "export_graph"})


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str  # the view function's name in app.py
    summary: str
    response: type[BaseModel] | None  # the JSON body of the success answer
    status: int = 200
    request: type[BaseModel] | None = None
    body_required: bool = True
    query: type[BaseModel] | None = None
    errors: tuple[int, ...] = ()  # beyond those that follow from the shape (see statuses)
    public: bool = False
    tag: str = "memory"
    other_content: dict[str, dict] = field(default_factory=dict)  # e.g. text/markdown
    headers: tuple[tuple[str, str], ...] = ()  # optional id headers: (name, description)
    # other success answers: (status, JSON body model, description, response headers)
    also: tuple[tuple[int, type[BaseModel], str, tuple[str, ...]], ...] = ()

    @property
    def path_params(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.path)

    @property
    def statuses(self) -> list[int]:
        codes = set(self.errors)
        if self.operation_id in SPACE_READS:
            codes.add(404)
        if not self.public:
            codes |= {401, 403, 429, 503}
        codes.add(400)  # any request: malformed HTTP (a bad Content-Length) is refused too
        if self.request:
            codes |= {413, 415, 422}
        if self.query:
            codes.add(422)
        return sorted(codes)


SPACE = "/v1/spaces/{space}"
HEADER_TEXT = {"Location": "the URL path of the job (GET it to follow the job)"}
MARKDOWN = {"text/markdown": {"schema": {"type": "string"}}}
WEB_PAGE = {"text/html": {"schema": {"type": "string"}}}
WEB_ASSET = {t: {"schema": {"type": "string"}}
             for t in ("text/javascript", "text/css", "image/svg+xml")}

EVENT_STREAM = {"text/event-stream": {"schema": {
    "type": "string", "description": "data: <chat.completion.chunk JSON> per chunk, then "
                                     "data: [DONE]"}}}
GATEWAY_HEADERS = (
    ("X-Annals-Space", "the memory space (default: default); the key must write there"),
    ("X-Annals-Window", "the chat window: cooldown and the session the turn is stored in "
                        "(default: the body's user, else default)"),
)

OPERATIONS: tuple[Operation, ...] = (
    Operation("GET", "/v1/health", "health", "Liveness and version", Health,
              public=True, tag="service"),
    Operation("GET", "/v1/openapi.json", "openapi", "This OpenAPI document", OpenAPIDocument,
              public=True, tag="service"),
    Operation("PUT", SPACE + "/sessions/{session}/messages", "put_messages",
              "Add or replace messages of a session (idempotent by seq and content)",
              PutMessagesResponse, request=PutMessagesRequest, tag="messages"),
    Operation("GET", SPACE + "/sessions/{session}/messages", "list_messages",
              "The messages a session holds, a page at a time in seq order (the gateway's "
              "turns too); 404 unknown_session", MessageList, query=MessageListQuery,
              tag="messages"),
    Operation("DELETE", SPACE + "/sessions/{session}/messages/{seq}", "delete_message",
              "Delete one message", DeletedMessage, errors=(404,), tag="messages"),
    Operation("POST", SPACE + "/extract", "extract",
              "Extract events from pending sessions now: the events (200) when the work is "
              "small, else a background job (202)", ExtractedEvents,
              request=ExtractJobRequest, body_required=False, tag="events",
              also=((202, ExtractAccepted, "Accepted: the extraction runs as a background "
                     "job; GET the Location header (…/jobs/{job_id}) for its progress",
                     ("Location",)),)),
    Operation("GET", SPACE + "/reading", "reading_tasks",
              "Reading tasks for a host's model: pending batches as ready chat-completions "
              "requests, each under a lease (write keys; docs/llm.md \"Reading tasks\")",
              ReadingTasks, query=ReadingQuery, errors=(404,), tag="reading"),
    Operation("POST", SPACE + "/reading/{lease}", "reading_answer",
              "A host's model's answer to a reading task: stored when it passes the checks "
              "(422 invalid_answer: refused, the batch read by the rules; 409: the lease "
              "expired, was used or its turns changed)", ReadingResult,
              request=ReadingAnswer, errors=(404, 409, 422), tag="reading"),
    Operation("GET", SPACE + "/jobs", "list_jobs", "The space's recent background jobs",
              JobList, query=JobListQuery, tag="jobs"),
    Operation("GET", SPACE + "/jobs/{job_id}", "get_job",
              "One background job: status, progress and result (its events on request)",
              JobView, query=JobQuery, errors=(404,), tag="jobs"),
    Operation("GET", SPACE + "/events", "list_events",
              "The timeline, a page at a time: events and notes (kind=summary: the summaries)",
              EventList, query=EventListQuery, tag="events"),
    Operation("POST", SPACE + "/events", "save_event", "Save a memory by hand", Event,
              status=201, request=SaveEventRequest, tag="events"),
    Operation("GET", SPACE + "/events/{event_id}", "get_event",
              "One event (with its evidence on request)", EventWithEvidence,
              query=EventQuery, errors=(404,), tag="events"),
    Operation("PATCH", SPACE + "/events/{event_id}", "patch_event",
              "Edit an event (optimistic: send the version you read)", Event,
              request=PatchEventRequest, errors=(404, 409), tag="events"),
    Operation("DELETE", SPACE + "/events/{event_id}", "archive_event", "Archive an event",
              Event, errors=(404, 409), tag="events"),
    Operation("GET", SPACE + "/events/{event_id}/history", "event_history",
              "Every version of an event", EventHistory, errors=(404,), tag="events"),
    Operation("POST", SPACE + "/recall", "recall", "Recall memories for a query",
              RecallResponse, request=RecallRequest, tag="recall"),
    Operation("POST", SPACE + "/hook/recall", "hook_recall",
              "Recall for a chat host's pre-model hook: additional_context to inject",
              HookRecallResponse, request=RecallRequest, tag="recall"),
    Operation("POST", SPACE + "/deliveries", "deliveries",
              "Report the recalled ids a chat host injected", RecordedDeliveries, status=201,
              request=DeliveryRequest, tag="recall"),
    Operation("POST", SPACE + "/mcp", "mcp_server",
              "MCP server (streamable HTTP, stateless, JSON): one JSON-RPC message per POST",
              JsonRpcMessage, request=JsonRpcMessage, tag="mcp"),
    Operation("POST", SPACE + "/consolidate", "consolidate",
              "Run the merge pass on this space now", MergeSummary, tag="events"),
    Operation("GET", SPACE + "/stats", "stats", "Per-space numbers", SpaceStats, tag="service"),
    Operation("GET", SPACE + "/export", "export",
              "Export the space (markdown timeline, or JSON)", ExportedEvents,
              query=ExportQuery, other_content=MARKDOWN, tag="events"),
    Operation("GET", SPACE + "/entities", "list_entities",
              "The people, places, pets, works … the events name", EntityList,
              query=EntityQuery, tag="graph"),
    Operation("GET", SPACE + "/entities/{entity_id}", "get_entity",
              "One entity with its events, oldest first", EntityDetail, errors=(404,),
              tag="graph"),
    Operation("GET", SPACE + "/threads", "list_threads", "The threads (arcs) of the space",
              ThreadList, tag="graph"),
    Operation("POST", SPACE + "/threads", "create_thread", "Start a thread by hand",
              ThreadView, status=201, request=CreateThreadRequest, errors=(409,),
              tag="graph"),
    Operation("GET", SPACE + "/threads/{thread_id}", "get_thread",
              "One thread with its materials (events, oldest first)", ThreadDetail,
              errors=(404,), tag="graph"),
    Operation("PATCH", SPACE + "/threads/{thread_id}", "patch_thread",
              "Edit a thread: title, aliases, events, merge_into (send the version you read)",
              ThreadView, request=PatchThreadRequest, errors=(404, 409), tag="graph"),
    Operation("GET", SPACE + "/graph", "export_graph",
              "The whole graph: events, entities, threads, relations", GraphDocument,
              tag="graph"),
    Operation("POST", SPACE + "/graph", "import_graph",
              "Import a graph document (events are indexed again: a large one by a background "
              "job, 202)", GraphImport, request=GraphDocument,
              also=((202, GraphImport, "Accepted: written; the events are indexed by the "
                                       "background job `job` (Location: …/jobs/{job_id})",
                     ("Location",)),),
              tag="graph"),
    Operation("GET", SPACE + "/profiles", "list_profiles",
              "A profile per person: facts with the time they held, current ones first",
              ProfileList, tag="graph"),
    Operation("GET", SPACE + "/profiles/{name}", "get_profile", "One person's profile",
              Profile, errors=(404,), tag="graph"),
    Operation("PATCH", SPACE + "/facts/{fact_id}", "patch_fact",
              "Correct a fact by hand or say it ended (send the version you read)", FactView,
              request=PatchFactRequest, errors=(404, 409), tag="graph"),
    Operation("GET", "/v1/spaces", "list_spaces", "The spaces the calling key may see",
              SpaceList, tag="keys"),
    Operation("POST", "/v1/keys", "create_key", "Create an API key (admin; shown this once)",
              NewKey, status=201, request=CreateKeyRequest, tag="keys"),
    Operation("GET", "/v1/keys", "list_keys", "Every API key, revoked ones too (admin)",
              KeyList, tag="keys"),
    Operation("DELETE", "/v1/keys/{key_id}", "revoke_key", "Revoke an API key (admin)",
              KeyInfo, errors=(404,), tag="keys"),
    Operation("POST", SPACE + "/forget", "forget",
              "Run forgetting on this space now (the cooldown job's part for one space)",
              ForgetSummary, tag="events"),
    Operation("POST", "/v1/chat/completions", "chat_completions",
              "OpenAI-compatible chat completions with memory (docs/gateway.md): recall "
              "injected, the turn stored; JSON, or server-sent events with stream: true",
              ChatCompletion, request=ChatCompletionRequest, errors=(404, 502, 504),
              tag="gateway", other_content=EVENT_STREAM, headers=GATEWAY_HEADERS),
    Operation("GET", "/v1/models", "list_models", "The chat gateway upstream's models",
              ModelList, errors=(404, 502, 504), tag="gateway"),
    Operation("GET", "/", "web_index", "The web app (it asks for a key itself)", None,
              public=True, tag="web", other_content=WEB_PAGE),
    Operation("GET", "/web/{version}/{asset}", "web_asset",
              "A file of the web app (cached for a year under the current version)", None,
              errors=(404,), public=True, tag="web", other_content=WEB_ASSET),
)


def path_param_schemas() -> dict[str, dict]:
    """Path parameters, from the models that check them."""
    seq = MessageIn.model_json_schema()["properties"]["seq"]
    return {
        "space": TypeAdapter(IdStr).json_schema(),
        "session": TypeAdapter(SessionId).json_schema(),
        "seq": {k: v for k, v in seq.items() if k != "title"},
        "event_id": {"type": "string", "minLength": 1},
        "entity_id": TypeAdapter(IdStr).json_schema(),
        "thread_id": TypeAdapter(IdStr).json_schema(),
        "job_id": TypeAdapter(IdStr).json_schema(),
        "lease": TypeAdapter(IdStr).json_schema(),
        "key_id": {"type": "string", "minLength": 1},
        "version": {"type": "string", "minLength": 1},
        "asset": {"type": "string", "minLength": 1},
        "fact_id": TypeAdapter(IdStr).json_schema(),
        "name": {"type": "string", "minLength": 1, "maxLength": 100,
                 "description": "a person's name as the profiles list it (URL-encoded)"},
    }


# ---------------------------------------------------------------- the generator


@functools.cache
def openapi_document() -> dict[str, Any]:
    """The whole document, built once per process (treat it as read-only)."""
    return _build()


def _build() -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Literal["validation", "serialization"]]] = []
    for op in OPERATIONS:
        if op.request:
            models.append((op.request, "validation"))
        if op.response:
            models.append((op.response, "serialization"))
        models += [(model, "serialization") for _, model, _, _ in op.also]
    models.append((ErrorResponse, "serialization"))
    refs, top = models_json_schema(list(dict.fromkeys(models)), ref_template=REF)
    schemas: dict[str, Any] = dict(sorted(top.get("$defs", {}).items()))

    paths: dict[str, dict[str, Any]] = {}
    params = path_param_schemas()
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, refs, params, schemas)

    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Annals",
            "version": __version__,
            "summary": "Long-term memory for AI chat: a dated chronicle of events that cite "
                       "their messages, recalled by time, meaning and keywords.",
            "description": "Every GET route also answers HEAD: the GET's status and headers, "
                           "no body. Answers carry X-Content-Type-Options: nosniff, and the "
                           "API's Cache-Control: no-store.",
        },
        "tags": [{"name": t} for t in dict.fromkeys(op.tag for op in OPERATIONS)],
        "security": [{"bearerAuth": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer",
                               "description": "Authorization: Bearer <API key>"},
            },
            "responses": {
                str(code): _error_response(code, text, refs)
                for code, text in ERROR_TEXT.items()
                if any(code in op.statuses for op in OPERATIONS)
            },
        },
    }


def _error_response(code: int, text: str, refs: dict) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": text,
        "content": {JSON_TYPE: {"schema": refs[(ErrorResponse, "serialization")]}},
    }
    if code in (429, 503):
        out["headers"] = {"Retry-After": {"description": "seconds to wait before retrying",
                                          "schema": {"type": "integer", "minimum": 0}}}
    return out


def _operation(op: Operation, refs: dict, params: dict[str, dict],
               schemas: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary,
                           "tags": [op.tag]}
    if op.public:
        out["security"] = []
    parameters = [{"name": name, "in": "path", "required": True, "schema": params[name]}
                  for name in op.path_params]
    if op.query:
        parameters += _query_parameters(op.query, schemas)
    parameters += [{"name": name, "in": "header", "required": False, "description": text,
                    "schema": params["space"]} for name, text in op.headers]
    if parameters:
        out["parameters"] = parameters
    if op.request:
        out["requestBody"] = {
            "required": op.body_required,
            "content": {JSON_TYPE: {"schema": refs[(op.request, "validation")]}},
        }
    content: dict[str, Any] = {}
    if op.response:
        content[JSON_TYPE] = {"schema": refs[(op.response, "serialization")]}
    content.update(op.other_content)
    success: dict[str, Any] = {"description": "OK" if op.status == 200 else "Created"}
    if content:
        success["content"] = content
    responses: dict[str, Any] = {str(op.status): success}
    for status, model, text, headers in op.also:
        responses[str(status)] = {
            "description": text,
            "content": {JSON_TYPE: {"schema": refs[(model, "serialization")]}},
            **({"headers": {name: {"description": HEADER_TEXT.get(name, name),
                                   "schema": {"type": "string"}} for name in headers}}
               if headers else {}),
        }
    for code in op.statuses:
        responses[str(code)] = {"$ref": f"#/components/responses/{code}"}
    out["responses"] = responses
    return out


def _query_parameters(model: type[BaseModel], schemas: dict[str, Any]) -> list[dict]:
    """A flat query model as parameters (by alias: `from`, `to`); null is no query value."""
    schema = model.model_json_schema(by_alias=True, ref_template=REF)
    schemas.update(schema.get("$defs", {}))
    required = set(schema.get("required", []))
    out = []
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        any_of = prop.get("anyOf")
        if any_of and {"type": "null"} in any_of:
            rest = [s for s in any_of if s != {"type": "null"}]
            prop.pop("anyOf")
            prop.update(rest[0] if len(rest) == 1 else {"anyOf": rest})
            if prop.get("default", ...) is None:
                prop.pop("default")
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in required,
                                 "schema": prop}
        if "description" in prop:
            param["description"] = prop["description"]
        out.append(param)
    return out

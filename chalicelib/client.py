"""A typed Python client for the Annals HTTP API (httpx, sync).

One method per operation of the OpenAPI document, named by its operationId
(chalicelib.api.openapi.OPERATIONS, the table the server's routes are checked against): the
method and path come from that table, request bodies are the server's own pydantic models
(validated here before anything is sent) and answers are parsed into the models the document
names — no schema is written twice. tests/unit/test_client.py checks the methods against the
document's operationIds, both ways.

    from chalicelib.client import AnnalsClient, AnnalsAPIError

    with AnnalsClient("http://127.0.0.1:8000", api_key) as annals:   # or AnnalsClient.from_env()
        annals.put_messages("me", "s1", [{"seq": 1, "role": "user", "content": "…",
                                          "at": "2026-06-01T20:00:00+08:00"}])
        hook = annals.hook_recall("me", "奶糖体检", window="chat-1")
        # … send hook.additional_context with the model request, then:
        annals.deliveries("me", "chat-1", hook.recalled_ids)

Every error answer raises AnnalsAPIError with the status, the body's {"error": {"code",
"message", "details"}} and, on 429 and 503, Retry-After (`retries=N` retries those by itself).
Connection failures are httpx.TransportError.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from chalicelib import __version__
from chalicelib.api.openapi import (
    OPERATIONS,
    DeletedMessage,
    EventHistory,
    EventWithEvidence,
    ExportedEvents,
    ExportQuery,
    ExtractAccepted,
    ExtractedEvents,
    ForgetSummary,
    Health,
    HookRecallResponse,
    JsonRpcMessage,
    MergeSummary,
    OpenAPIDocument,
    Operation,
    RecordedDeliveries,
    SpaceStats,
)
from chalicelib.domain.models import (
    DeliveryRequest,
    Event,
    EventList,
    EventListQuery,
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
    GraphDocument,
    GraphImport,
    PatchThreadRequest,
    ThreadDetail,
    ThreadList,
    ThreadView,
)
from chalicelib.usecases.keys import CreateKeyRequest, KeyInfo, KeyList, NewKey, SpaceList
from chalicelib.usecases.reading import ReadingAnswer, ReadingQuery, ReadingResult, ReadingTasks

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_URL = "http://127.0.0.1:8000"


class AnnalsAPIError(Exception):
    """An error answer: `status`, and the body's `code`, `message` and `details` (422: every
    problem); `retry_after` (seconds) when the server sent Retry-After (503: retry, nothing
    was half-written). `body` is the parsed JSON body (None when it was not JSON)."""

    def __init__(self, status: int, code: str, message: str, *, details: Any = None,
                 retry_after: float | None = None, body: Any = None, method: str = "",
                 url: str = ""):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after = retry_after
        self.body = body
        self.method = method
        self.url = url

    @classmethod
    def from_response(cls, response: httpx.Response) -> AnnalsAPIError:
        try:
            body = response.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and "message" in error:
            raw = error.get("code")
            if isinstance(raw, int):  # a JSON-RPC error (the MCP route)
                code = f"jsonrpc_{raw}"
            elif isinstance(raw, str) and raw:
                code = raw
            else:  # an OpenAI-shaped error the chat gateway passed through: its type
                code = str(error.get("type") or f"http_{response.status_code}")
            message = str(error["message"])
            details = error.get("details", error.get("data"))
        else:  # not Annals answering (a proxy, a gateway): keep what there is
            code, message, details = f"http_{response.status_code}", response.text[:500], None
        return cls(response.status_code, code, message, details=details,
                   retry_after=_retry_after(response.headers.get("retry-after")), body=body,
                   method=response.request.method, url=str(response.request.url))


class AnnalsJobFailed(Exception):
    """A background job the client waited for ended `failed`; `job` is its last view."""

    def __init__(self, job: JobView):
        super().__init__(f"job {job.id} ({job.kind}) failed: {job.error}")
        self.job = job


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: not sent by Annals


def operation(fn: F) -> F:
    """Mark a method as the client of the OpenAPI operation of the same name."""
    fn.__annals_operation__ = fn.__name__  # type: ignore[attr-defined]
    return fn


class AnnalsClient:
    """Annals over HTTP. `base_url` is the server's root (`make run`: http://127.0.0.1:8000;
    a deployed stack: its ApiUrl, stage path included). `transport` lets a test talk to an
    app in-process (httpx.WSGITransport over chalicelib.local.wsgi.ChaliceWSGI)."""

    def __init__(self, base_url: str = DEFAULT_URL, api_key: str | None = None, *,
                 timeout: float = 60.0, retries: int = 0, max_retry_wait: float = 30.0,
                 transport: httpx.BaseTransport | None = None,
                 headers: Mapping[str, str] | None = None):
        all_headers = {"User-Agent": f"annals-client/{__version__}", **(headers or {})}
        if api_key:
            all_headers["Authorization"] = f"Bearer {api_key}"
        self.base_url = base_url
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self._sleep = time.sleep
        self._http = httpx.Client(base_url=base_url, headers=all_headers, timeout=timeout,
                                  transport=transport)

    @classmethod
    def from_env(cls, **kwargs: Any) -> AnnalsClient:
        """ANNALS_URL (default http://127.0.0.1:8000) and ANNALS_API_KEY."""
        return cls(os.environ.get("ANNALS_URL") or DEFAULT_URL,
                   os.environ.get("ANNALS_API_KEY"), **kwargs)

    @classmethod
    def operation_ids(cls) -> set[str]:
        """The operationIds this client has a method for."""
        return {fn.__annals_operation__ for fn in vars(cls).values()
                if callable(fn) and hasattr(fn, "__annals_operation__")}

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> AnnalsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- plumbing

    def request(self, operation_id: str, path_params: Mapping[str, Any] | None = None, *,
                body: BaseModel | None = None, query: BaseModel | None = None,
                headers: Mapping[str, str] | None = None) -> httpx.Response:
        """Send the operation `operation_id` (method and path from the OpenAPI table);
        the successful httpx.Response, else AnnalsAPIError (429s and 503s retried `retries`
        times, after their Retry-After)."""
        op = _operation(operation_id)
        values = {k: quote(str(v), safe="") for k, v in (path_params or {}).items()}
        url = op.path.format(**values)
        kwargs: dict[str, Any] = {"headers": dict(headers)} if headers else {}
        if body is not None:
            kwargs["json"] = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if query is not None:
            kwargs["params"] = query.model_dump(mode="json", by_alias=True, exclude_unset=True,
                                                exclude_none=True)
        attempt = 0
        while True:
            response = self._http.request(op.method, url, **kwargs)
            if response.is_success:
                return response
            error = AnnalsAPIError.from_response(response)
            if error.status not in (429, 503) or attempt >= self.retries:
                raise error
            attempt += 1
            wait = error.retry_after if error.retry_after is not None else 1.0
            self._sleep(min(wait, self.max_retry_wait))

    def _call(self, operation_id: str, path_params: Mapping[str, Any] | None = None, *,
              body: BaseModel | None = None, query: BaseModel | None = None) -> Any:
        """request() and the answer parsed into the operation's response model."""
        response = self.request(operation_id, path_params, body=body, query=query)
        model = _operation(operation_id).response
        assert model is not None, operation_id
        return model.model_validate(response.json())

    # ---------------------------------------------------------------- service

    @operation
    def health(self) -> Health:
        return self._call("health")

    @operation
    def openapi(self) -> OpenAPIDocument:
        """The server's OpenAPI document (`.model_dump()` for the whole dict)."""
        return self._call("openapi")

    # ---------------------------------------------------------------- messages

    @operation
    def put_messages(self, space: str, session: str,
                     messages: PutMessagesRequest | Sequence[MessageIn | Mapping[str, Any]],
                     ) -> PutMessagesResponse:
        """Add or replace messages (at most 1000 per call; idempotent by seq and content)."""
        body = messages if isinstance(messages, PutMessagesRequest) else \
            PutMessagesRequest(messages=[m if isinstance(m, MessageIn)
                                         else MessageIn.model_validate(m) for m in messages])
        return self._call("put_messages", {"space": space, "session": session}, body=body)

    @operation
    def list_messages(self, space: str, session: str, *, limit: int | None = None,
                      cursor: str | None = None) -> MessageList:
        """One page of the session's messages in seq order; `next_cursor` fetches the next
        (iter_messages walks them all). 404 unknown_session for a session never written."""
        given = {"limit": limit, "cursor": cursor}
        query = MessageListQuery.model_validate({k: v for k, v in given.items() if v is not None})
        return self._call("list_messages", {"space": space, "session": session}, query=query)

    def iter_messages(self, space: str, session: str, *, limit: int | None = None,
                      ) -> Iterator[Message]:
        """Every message of the session, page after page."""
        cursor = None
        while True:
            page = self.list_messages(space, session, limit=limit, cursor=cursor)
            yield from page.messages
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    @operation
    def delete_message(self, space: str, session: str, seq: int) -> DeletedMessage:
        return self._call("delete_message", {"space": space, "session": session, "seq": seq})

    # ---------------------------------------------------------------- events

    @operation
    def extract(self, space: str, session: str | None = None, *, background: bool = False,
                on_progress: Callable[[JobView], None] | None = None,
                poll_interval: float = 0.5, timeout: float | None = None) -> ExtractedEvents:
        """Extract events from the space's pending sessions (or one session) now. A small
        backlog answers at once; a larger one (or `background=True`) is a job on the server:
        this waits for it, calling `on_progress(job)` whenever it moved, and returns its
        events. AnnalsJobFailed if the job fails; TimeoutError after `timeout` seconds (the
        job goes on: get_job / wait_for_job)."""
        given: dict[str, Any] = {"session": session} if session else {}
        if background:
            given["wait"] = False
        response = self.request("extract", {"space": space},
                                body=ExtractJobRequest.model_validate(given))
        if response.status_code != 202:
            return ExtractedEvents.model_validate(response.json())
        job = ExtractAccepted.model_validate(response.json()).job
        if on_progress is not None:
            on_progress(job)
        done = self.wait_for_job(space, job.id, on_progress=on_progress,
                                 poll_interval=poll_interval, timeout=timeout, events=True)
        return ExtractedEvents(events=done.events or [],
                               drafts=(done.result or {}).get("drafts") or {})

    @operation
    def list_jobs(self, space: str, *, limit: int | None = None,
                  status: Literal["queued", "running", "done", "failed"] | None = None,
                  kind: str | None = None) -> JobList:
        """The space's recent background jobs, newest first."""
        given = {"limit": limit, "status": status, "kind": kind}
        query = JobListQuery.model_validate({k: v for k, v in given.items() if v is not None})
        return self._call("list_jobs", {"space": space}, query=query)

    @operation
    def get_job(self, space: str, job_id: str, *, events: bool = False) -> JobView:
        """One background job; `events=True` adds the events it wrote so far."""
        return self._call("get_job", {"space": space, "job_id": job_id},
                          query=JobQuery(events=True) if events else None)

    @operation
    def reading_tasks(self, space: str, *, limit: int = 1) -> ReadingTasks:
        """Lease up to `limit` of the space's pending batches as ready chat-completions
        requests for a host's model (a write key); answer each with `reading_answer`."""
        return self._call("reading_tasks", {"space": space},
                          query=ReadingQuery(limit=limit))

    @operation
    def reading_answer(self, space: str, lease: str, answer: str) -> ReadingResult:
        """A model's reply to a reading task, as it came (409: the lease expired or was used;
        422 invalid_answer: refused, the batch read by the rules)."""
        return self._call("reading_answer", {"space": space, "lease": lease},
                          body=ReadingAnswer(answer=answer))

    def wait_for_job(self, space: str, job_id: str, *,
                     on_progress: Callable[[JobView], None] | None = None,
                     poll_interval: float = 0.5, timeout: float | None = None,
                     events: bool = False) -> JobView:
        """Poll the job until it is done (its view, with its events when `events`);
        `on_progress(job)` each time its progress or status changed. AnnalsJobFailed when it
        failed, TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        seen: tuple | None = None
        while True:
            job = self.get_job(space, job_id)
            mark = (job.status, job.progress.done, job.progress.total, job.progress.events)
            if mark != seen and on_progress is not None:
                on_progress(job)
            seen = mark
            if job.status == "failed":
                raise AnnalsJobFailed(job)
            if job.status == "done":
                return self.get_job(space, job_id, events=True) if events else job
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job.status} after {timeout} s")
            self._sleep(poll_interval)

    @operation
    def list_events(self, space: str, *, start: datetime | str | None = None,
                    end: datetime | str | None = None, limit: int | None = None,
                    cursor: str | None = None,
                    status: Literal["active", "archived", "superseded", "all"] | None = None,
                    kind: str | Sequence[str] | None = None,
                    ) -> EventList:
        """One page of the timeline, oldest first; `next_cursor` fetches the next
        (iter_events walks them all). `kind`: "summary", "event,note", ["event", "summary"]
        or "all" (default: the server's, events and notes)."""
        if kind is not None and not isinstance(kind, str):
            kind = ",".join(kind)
        given = {"from": start, "to": end, "limit": limit, "cursor": cursor, "status": status,
                 "kind": kind}
        query = EventListQuery.model_validate({k: v for k, v in given.items() if v is not None})
        return self._call("list_events", {"space": space}, query=query)

    def iter_events(self, space: str, **filters: Any) -> Iterator[Event]:
        """Every event list_events(space, **filters) finds, page after page."""
        cursor = filters.pop("cursor", None)
        while True:
            page = self.list_events(space, cursor=cursor, **filters)
            yield from page.events
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    @operation
    def save_event(self, space: str, request: SaveEventRequest | str | None = None,
                   **fields: Any) -> Event:
        """Save a memory by hand: save_event(space, "summary", importance=7, …) or a
        SaveEventRequest."""
        if isinstance(request, str):
            fields["summary"] = request
            request = None
        return self._call("save_event", {"space": space},
                          body=_build(SaveEventRequest, request, fields))

    @operation
    def get_event(self, space: str, event_id: str, *, evidence: bool = False,
                  ) -> EventWithEvidence:
        response = self.request("get_event", {"space": space, "event_id": event_id},
                                query=_Evidence(evidence="true") if evidence else None)
        return EventWithEvidence.model_validate(response.json())

    @operation
    def patch_event(self, space: str, event_id: str,
                    request: PatchEventRequest | None = None, **fields: Any) -> Event:
        """Edit an event: patch_event(space, id, version=v, importance=8, …); AnnalsAPIError
        409 when the event changed since version v was read."""
        return self._call("patch_event", {"space": space, "event_id": event_id},
                          body=_build(PatchEventRequest, request, fields))

    @operation
    def archive_event(self, space: str, event_id: str) -> Event:
        return self._call("archive_event", {"space": space, "event_id": event_id})

    @operation
    def event_history(self, space: str, event_id: str) -> EventHistory:
        return self._call("event_history", {"space": space, "event_id": event_id})

    @operation
    def consolidate(self, space: str) -> MergeSummary:
        return self._call("consolidate", {"space": space})

    @operation
    def forget(self, space: str) -> ForgetSummary:
        """Run forgetting on the space now (what the cooldown job does for it)."""
        return self._call("forget", {"space": space})

    @operation
    def stats(self, space: str) -> SpaceStats:
        return self._call("stats", {"space": space})

    @overload
    def export(self, space: str, *, format: Literal["markdown"] = "markdown",
               status: Literal["active", "archived", "all"] = "active") -> str: ...

    @overload
    def export(self, space: str, *, format: Literal["json"],
               status: Literal["active", "archived", "all"] = "active") -> ExportedEvents: ...

    @operation
    def export(self, space: str, *, format: Literal["markdown", "json"] = "markdown",
               status: Literal["active", "archived", "all"] = "active",
               ) -> str | ExportedEvents:
        """The chronicle: Markdown text, or (format="json") the events."""
        query = ExportQuery(format=format, status=status)
        response = self.request("export", {"space": space}, query=query)
        if format == "json":
            return ExportedEvents.model_validate(response.json())
        return response.text

    # ---------------------------------------------------------------- the memory graph

    @operation
    def list_entities(self, space: str, *, kind: str | None = None) -> EntityList:
        """The entities the events name (kind="place", "person", …: only those)."""
        query = EntityQuery.model_validate({"kind": kind} if kind else {})
        return self._call("list_entities", {"space": space}, query=query)

    @operation
    def get_entity(self, space: str, entity_id: str) -> EntityDetail:
        return self._call("get_entity", {"space": space, "entity_id": entity_id})

    @operation
    def list_threads(self, space: str) -> ThreadList:
        return self._call("list_threads", {"space": space})

    @operation
    def create_thread(self, space: str, request: CreateThreadRequest | None = None,
                      **fields: Any) -> ThreadView:
        """create_thread(space, title="Kyoto trip", events=[…])."""
        return self._call("create_thread", {"space": space},
                          body=_build(CreateThreadRequest, request, fields))

    @operation
    def get_thread(self, space: str, thread_id: str) -> ThreadDetail:
        return self._call("get_thread", {"space": space, "thread_id": thread_id})

    @operation
    def patch_thread(self, space: str, thread_id: str,
                     request: PatchThreadRequest | None = None, **fields: Any) -> ThreadView:
        """patch_thread(space, id, version=v, title=…, add_events=[…], merge_into=…);
        AnnalsAPIError 409 when the thread changed since version v was read."""
        return self._call("patch_thread", {"space": space, "thread_id": thread_id},
                          body=_build(PatchThreadRequest, request, fields))

    @operation
    def export_graph(self, space: str) -> GraphDocument:
        return self._call("export_graph", {"space": space})

    @operation
    def list_profiles(self, space: str) -> ProfileList:
        """A profile per person: facts with the time they held."""
        return self._call("list_profiles", {"space": space})

    @operation
    def get_profile(self, space: str, name: str) -> Profile:
        return self._call("get_profile", {"space": space, "name": name})

    @operation
    def patch_fact(self, space: str, fact_id: str, version: int, *, value: str | None = None,
                   current: bool | None = None) -> FactView:
        body = PatchFactRequest(version=version, value=value, current=current)
        return self._call("patch_fact", {"space": space, "fact_id": fact_id}, body=body)

    @operation
    def import_graph(self, space: str, document: GraphDocument | Mapping[str, Any],
                     ) -> GraphImport:
        body = document if isinstance(document, GraphDocument) else \
            GraphDocument.model_validate(dict(document))
        return self._call("import_graph", {"space": space}, body=body)

    # ---------------------------------------------------------------- recall

    @operation
    def recall(self, space: str, request: RecallRequest | str, **fields: Any) -> RecallResponse:
        """recall(space, "query", max_cards=3, window="chat-1", …) or a RecallRequest."""
        return self._call("recall", {"space": space}, body=_recall_request(request, fields))

    @operation
    def hook_recall(self, space: str, request: RecallRequest | str,
                    **fields: Any) -> HookRecallResponse:
        """The pre-model hook: hook_recall(space, "the user's message", window="chat-1")
        → additional_context to inject, recalled_ids to report to deliveries()."""
        return self._call("hook_recall", {"space": space},
                          body=_recall_request(request, fields))

    @operation
    def deliveries(self, space: str, window: str | DeliveryRequest,
                   ids: Sequence[str] | None = None, *, at: datetime | None = None,
                   ) -> RecordedDeliveries:
        """Report what a chat window injected (its cooldown): deliveries(space, window, ids)."""
        if isinstance(window, DeliveryRequest):
            body = window
        else:
            given: dict[str, Any] = {"window": window, "ids": list(ids or [])}
            if at is not None:
                given["at"] = at
            body = DeliveryRequest.model_validate(given)
        return self._call("deliveries", {"space": space}, body=body)

    # ---------------------------------------------------------------- MCP

    @operation
    def mcp_server(self, space: str, message: JsonRpcMessage | Mapping[str, Any], *,
                   headers: Mapping[str, str] | None = None) -> JsonRpcMessage | None:
        """One JSON-RPC message to the space's MCP server (stateless streamable HTTP), e.g.
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}; its JSON-RPC answer (a tool's
        failure is an answer too), or None for a notification (202)."""
        body = message if isinstance(message, JsonRpcMessage) else \
            JsonRpcMessage.model_validate(dict(message))
        response = self.request("mcp_server", {"space": space}, body=body, headers=headers)
        if response.status_code == 202 or not response.content:
            return None
        return JsonRpcMessage.model_validate(response.json())

    # ---------------------------------------------------------------- the chat gateway

    @operation
    def chat_completions(self, request: ChatCompletionRequest | None = None, *,
                         space: str | None = None, window: str | None = None,
                         **fields: Any) -> ChatCompletion:
        """The OpenAI-compatible gateway with memory (docs/gateway.md):
        chat_completions(model=…, messages=[…], space="me", window="chat-1"). Recall is
        injected upstream and the turn stored. Not streamed: for a stream, point an OpenAI
        SDK at <base_url>/v1 with the X-Annals-Space / X-Annals-Window headers."""
        body = _build(ChatCompletionRequest, request, fields)
        if body.stream:
            raise ValueError("AnnalsClient.chat_completions does not stream; use an OpenAI "
                             "SDK with base_url=<Annals URL>/v1 for stream=True")
        headers = {name: value for name, value in
                   (("X-Annals-Space", space), ("X-Annals-Window", window)) if value}
        response = self.request("chat_completions", body=body, headers=headers)
        return ChatCompletion.model_validate(response.json())

    @operation
    def list_models(self) -> ModelList:
        """The gateway upstream's models."""
        return self._call("list_models")

    # ---------------------------------------------------------------- the web app

    @operation
    def web_index(self) -> str:
        """The web app's page (HTML)."""
        return self.request("web_index").text

    @operation
    def web_asset(self, version: str, asset: str) -> str:
        """One file of the web app (JavaScript, CSS or SVG text)."""
        return self.request("web_asset", {"version": version, "asset": asset}).text

    # ---------------------------------------------------------------- keys and spaces

    @operation
    def list_spaces(self) -> SpaceList:
        return self._call("list_spaces")

    @operation
    def create_key(self, request: CreateKeyRequest | None = None, **fields: Any) -> NewKey:
        """create_key(spaces=["tavern"], access="write", label="bot") (admin key); the
        answer holds the new key this once."""
        return self._call("create_key", body=_build(CreateKeyRequest, request, fields))

    @operation
    def list_keys(self) -> KeyList:
        return self._call("list_keys")

    @operation
    def revoke_key(self, key_id: str) -> KeyInfo:
        return self._call("revoke_key", {"key_id": key_id})


class _Evidence(BaseModel):
    evidence: Literal["true"]


def _operation(operation_id: str) -> Operation:
    for op in OPERATIONS:
        if op.operation_id == operation_id:
            return op
    raise LookupError(f"the API has no operation {operation_id!r}")


def _build(model: type[M], request: M | None, fields: Mapping[str, Any]) -> M:
    """The request model from a model, keyword fields, or both (fields win); validated
    here, so a bad value fails before anything is sent (pydantic.ValidationError)."""
    if request is None:
        return model.model_validate(dict(fields))
    if not isinstance(request, model):
        raise TypeError(f"expected {model.__name__}, got {type(request).__name__}")
    if not fields:
        return request
    return model.model_validate({**request.model_dump(exclude_unset=True, by_alias=True),
                                 **fields})


def _recall_request(request: RecallRequest | str, fields: dict[str, Any]) -> RecallRequest:
    if isinstance(request, str):
        return _build(RecallRequest, None, {"query": request, **fields})
    return _build(RecallRequest, request, fields)


__all__ = ["DEFAULT_URL", "AnnalsAPIError", "AnnalsClient", "AnnalsJobFailed", "ValidationError"]

"""Annals — the Chalice app. Thin on purpose: parse, call a use-case, serialise.

The same object serves API Gateway on Lambda, `annals serve` locally and chalice.test.Client.
"""

from __future__ import annotations

import os
from datetime import datetime
from urllib.parse import unquote

from chalice import Chalice, Rate, Response
from chalice.app import Request

from chalicelib import __version__
from chalicelib.api import web
from chalicelib.api.admission import admitted, finish
from chalicelib.api.auth import authorize, current_scope, request_scope, request_space
from chalicelib.api.cors import chalice_cors
from chalicelib.api.http import (
    ACCEPTED_TYPES,
    api,
    error_response,
    json_response,
    normalise_chalice_error,
    parse_body,
    parse_query,
)
from chalicelib.api.observability import job_metrics, observe
from chalicelib.domain.errors import AnnalsError, BadRequest

# Use-cases, request models, wiring and the OpenAPI document are imported inside the routes
# that use them: a cold start (a Lambda, a CLI call) pays only for the routes it serves
# (`annals bench cold`). Plain function-level imports, not importlib's LazyLoader: before
# Python 3.12 a lazily loaded module is not safe to touch from two threads at once (CPython
# gh-114763), and `annals serve` runs routes on several threads.

app = Chalice(app_name="annals")
app.api.binary_types = []  # every response is JSON or text
# On AWS, CORS for the browser origin a user allows (chalicelib/api/cors.py); set before the
# routes are declared: Chalice gives each route the default it finds then.
app.api.cors = chalice_cors(os.environ)

SPACE = "/v1/spaces/{space}"
PUBLIC_PATHS = {"/v1/health", "/v1/openapi.json", *web.PUBLIC_PATHS}


def services():
    from chalicelib.wiring import get_services

    return get_services()


def req() -> Request:
    return app.current_request


app.register_middleware(observe, "all")


@app.middleware("http")
def authenticate(event: Request, get_response):
    """Who is calling, and may they (chalicelib.api.auth: 401 / 403); the key's scope is the
    request's own (api.auth.current_scope) until the response is made. Then its limits, its
    turn and its deadline (chalicelib.api.admission: 429, the traffic gate, 503)."""
    return finish(_answer(event, get_response), event.method, event.path)


def _answer(event: Request, get_response):
    if event.path in PUBLIC_PATHS:
        return normalise_chalice_error(get_response(event))
    try:
        scope = authorize(services(), event.method, event.path, event.uri_params,
                          event.headers.get("authorization"), headers=event.headers)
        with request_scope(scope), admitted(services(), scope, event.method, event.path,
                                            request_space(event.path, event.uri_params,
                                                          event.headers)):
            return normalise_chalice_error(get_response(event))
    except AnnalsError as err:
        return error_response(err)


def known_space(space: str) -> None:
    """A read of a space, after its input is checked: 404 `unknown_space` for one nothing
    was ever written to (usecases.spaces.require_space), so a misspelt space is not read as
    an empty one. Writes (PUT messages, POST events, a graph import …) create a space and
    skip this. So do the doors that read on behalf of a chat — the gateway, whose first turn
    in a new space has no memory yet and must still get its reply, and MCP, whose client may
    recall before it ever saves: there an empty recall is the true answer, not a typo."""
    from chalicelib.usecases import spaces as spaces_uc

    spaces_uc.require_space(services(), space)


def route(path: str, **kwargs):
    """app.route with the content types we accept (curl's default form type included); a
    GET route answers HEAD too (chalicelib.api.admission.finish drops the body)."""
    kwargs.setdefault("content_types", ACCEPTED_TYPES)
    methods = kwargs.get("methods") or ["GET"]
    if "GET" in methods and "HEAD" not in methods:
        kwargs["methods"] = [*methods, "HEAD"]
    return app.route(path, **kwargs)


# ------------------------------------------------------------------ health


@route("/v1/health", methods=["GET"])
@api
def health():
    return json_response({"status": "ok", "version": __version__})


@route("/v1/openapi.json", methods=["GET"])
@api
def openapi():
    """The OpenAPI 3.1 document of these routes (chalicelib.api.openapi)."""
    from chalicelib.api.openapi import openapi_document

    return json_response(openapi_document())


# ------------------------------------------------------------------ messages


@route(SPACE + "/sessions/{session}/messages", methods=["PUT"])
@api
def put_messages(space: str, session: str):
    from chalicelib.domain.models import PutMessagesRequest, check_id, check_session
    from chalicelib.usecases import ingest as ingest_uc

    check_id(space, "space")
    session = check_session(unquote(session))  # any script's letters arrive %-encoded
    body = parse_body(req(), PutMessagesRequest)
    return json_response(ingest_uc.put_messages(services(), space, session, body))


@route(SPACE + "/sessions/{session}/messages", methods=["GET"])
@api
def list_messages(space: str, session: str):
    """What a session holds, a page at a time in seq order (the gateway's turns too)."""
    from chalicelib.domain.models import MessageListQuery, check_id, check_session
    from chalicelib.usecases import ingest as ingest_uc

    check_id(space, "space")
    session = check_session(unquote(session))
    q = parse_query(MessageListQuery, req())
    known_space(space)
    return json_response(ingest_uc.list_messages(services(), space, session, q.limit, q.cursor))


@route(SPACE + "/sessions/{session}/messages/{seq}", methods=["DELETE"])
@api
def delete_message(space: str, session: str, seq: str):
    from chalicelib.domain.models import check_id, check_seq, check_session
    from chalicelib.usecases import ingest as ingest_uc

    check_id(space, "space")
    session = check_session(unquote(session))
    deleted = ingest_uc.delete_message(services(), space, session, check_seq(seq))
    return json_response({"deleted": deleted.model_dump(mode="json")})


# ------------------------------------------------------------------ extraction


@route(SPACE + "/extract", methods=["POST"])
@api
def extract(space: str):
    """A small backlog is extracted in the request (200, the events); a larger one, or
    `"wait": false`, becomes a background job (202, the job; Location: GET …/jobs/{id})."""
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import background as background_uc
    from chalicelib.usecases.extract import run_extraction_result

    check_id(space, "space")
    body = parse_body(req(), background_uc.ExtractJobRequest, optional=True)
    job = background_uc.extract_later(services(), space, body.session, wait=body.wait)
    if job is not None:
        return accepted({"job": background_uc.JobView.of(job).model_dump(mode="json")},
                        space, job.id)
    result = run_extraction_result(services(), space, body.session)
    return json_response({"events": [e.model_dump(mode="json") for e in result.events],
                          "drafts": result.drafts.as_dict()})


def accepted(body, space: str, job_id: str) -> Response:
    """202: the work goes on as a background job, followed at the Location."""
    response = json_response(body, 202)
    response.headers["Location"] = job_location(space, job_id)
    return response


def job_location(space: str, job_id: str) -> str:
    """The job's URL path as this request reached us: under an API Gateway stage
    (/api/v1/…) the stage is part of the path the client used."""
    path = str((req().context or {}).get("path") or "").rstrip("/")
    tail = path.rsplit("/", 1)[-1]
    base = path[:-len(tail) - 1] if tail in ("extract", "graph") else f"/v1/spaces/{space}"
    return f"{base}/jobs/{job_id}"


# ------------------------------------------------------------------ reading tasks
# A host lends its model (chalicelib.usecases.reading): it leases batches as ready
# chat-completions requests and posts its model's answers.


@route(SPACE + "/reading", methods=["GET"])
@api
def reading_tasks(space: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import reading as reading_uc

    check_id(space, "space")
    query = parse_query(reading_uc.ReadingQuery, req())
    known_space(space)
    return json_response(reading_uc.hand_out(services(), space, query.limit))


@route(SPACE + "/reading/{lease}", methods=["POST"])
@api
def reading_answer(space: str, lease: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import reading as reading_uc

    check_id(space, "space")
    check_id(lease, "lease")
    body = parse_body(req(), reading_uc.ReadingAnswer)
    return json_response(reading_uc.answer(services(), space, lease, body))


# ------------------------------------------------------------------ background jobs
# Long work handed off by a request (chalicelib.usecases.background): a read key may follow.
# No unknown_space here: a POST may start a job before the space holds anything, and the
# job's Location (its own answer) must stay followable.


@route(SPACE + "/jobs", methods=["GET"])
@api
def list_jobs(space: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import background as background_uc

    check_id(space, "space")
    query = parse_query(background_uc.JobListQuery, req())
    return json_response(background_uc.job_views(services(), space, query))


@route(SPACE + "/jobs/{job_id}", methods=["GET"])
@api
def get_job(space: str, job_id: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import background as background_uc

    check_id(space, "space")
    check_id(job_id, "job_id")
    query = parse_query(background_uc.JobQuery, req())
    return json_response(background_uc.job_view(services(), space, job_id,
                                                 events=query.events))


# ------------------------------------------------------------------ events


@route(SPACE + "/events", methods=["GET"])
@api
def list_events(space: str):
    from chalicelib.domain.models import EventListQuery, check_id
    from chalicelib.usecases import events as events_uc

    check_id(space, "space")
    q = parse_query(EventListQuery, req())
    known_space(space)
    page = events_uc.list_events(services(), space, start=q.start, end=q.end, limit=q.limit,
                                 cursor=q.cursor, statuses=q.statuses, kinds=q.kinds)
    return json_response(page)


@route(SPACE + "/events", methods=["POST"])
@api
def save_event(space: str):
    from chalicelib.domain.models import SaveEventRequest, check_id
    from chalicelib.usecases import events as events_uc

    check_id(space, "space")
    event = events_uc.save_event(services(), space, parse_body(req(), SaveEventRequest))
    return json_response(event, 201)


@route(SPACE + "/events/{event_id}", methods=["GET"])
@api
def get_event(space: str, event_id: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import events as events_uc
    from chalicelib.usecases.graph import relations as relations_uc
    from chalicelib.usecases.graph import threads as threads_uc

    check_id(space, "space")
    known_space(space)
    event = events_uc.get_event(services(), space, event_id)
    body = event.model_dump(mode="json")
    if (req().query_params or {}).get("evidence", "").lower() in ("1", "true", "yes"):
        body["evidence"] = [m.model_dump(mode="json")
                            for m in events_uc.evidence(services(), event)]
    relations = relations_uc.relations_of(services(), space, event.id)
    if relations:  # only when there are: the answer stays what older clients know
        body["relations"] = [r.model_dump(mode="json") for r in relations]
    thread = threads_uc.thread_of(services(), space, event.id)
    if thread is not None:
        body["thread"] = {"id": thread.key, "title": thread.title}
    return json_response(body)


@route(SPACE + "/events/{event_id}", methods=["PATCH"])
@api
def patch_event(space: str, event_id: str):
    from chalicelib.domain.models import PatchEventRequest, check_id
    from chalicelib.usecases import events as events_uc

    check_id(space, "space")
    body = parse_body(req(), PatchEventRequest)
    return json_response(events_uc.patch_event(services(), space, event_id, body))


@route(SPACE + "/events/{event_id}", methods=["DELETE"])
@api
def archive_event(space: str, event_id: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import events as events_uc

    check_id(space, "space")
    return json_response(events_uc.archive_event(services(), space, event_id))


@route(SPACE + "/events/{event_id}/history", methods=["GET"])
@api
def event_history(space: str, event_id: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import events as events_uc

    check_id(space, "space")
    known_space(space)
    versions = events_uc.history(services(), space, event_id)
    return json_response({"versions": [v.model_dump(mode="json") for v in versions]})


# ------------------------------------------------------------------ recall & deliveries


@route(SPACE + "/recall", methods=["POST"])
@api
def recall(space: str):
    from chalicelib.domain.models import RecallRequest, check_id
    from chalicelib.usecases.recall import recall as recall_uc

    check_id(space, "space")
    request = parse_body(req(), RecallRequest)
    known_space(space)
    return json_response(recall_uc(services(), space, request,
                                   may_write=current_scope().allows("write", space)))


@route(SPACE + "/hook/recall", methods=["POST"])
@api
def hook_recall(space: str):
    """A chat host's pre-model hook: the recall as additional_context (a read, like recall),
    at most the request's max_cards or ANNALS_MAX_CARDS, by time too."""
    from chalicelib.api.openapi import HookRecallResponse
    from chalicelib.domain.models import RecallRequest, check_id
    from chalicelib.usecases import facts as facts_uc
    from chalicelib.usecases.recall import recall_hook_sized

    check_id(space, "space")
    request = parse_body(req(), RecallRequest)
    known_space(space)
    may_write = current_scope().allows("write", space)
    result = recall_hook_sized(services(), space, request, may_write=may_write)
    core = facts_uc.hook_core(services(), space, request, may_write=may_write)
    return json_response(HookRecallResponse.of(result, core))


@route(SPACE + "/deliveries", methods=["POST"])
@api
def deliveries(space: str):
    from chalicelib.domain.models import DeliveryRequest, check_id
    from chalicelib.usecases import deliveries as deliveries_uc

    check_id(space, "space")
    recorded = deliveries_uc.record_deliveries(services(), space,
                                               parse_body(req(), DeliveryRequest))
    return json_response({"recorded": [d.model_dump(mode="json") for d in recorded]}, 201)


@route(SPACE + "/consolidate", methods=["POST"])
@api
def consolidate(space: str):
    """Run the merge pass on this space now, however few new events it has."""
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import merge as merge_uc

    check_id(space, "space")
    return json_response(merge_uc.merge_space(services(), space, force=True))


@route(SPACE + "/stats", methods=["GET"])
@api
def stats(space: str):
    # No unknown_space: the numbers and the pipeline (extractor, merger, LLM) are what
    # one looks at before a first import (the web's Operations page does).
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import stats as stats_uc

    check_id(space, "space")
    return json_response(stats_uc.space_stats(services(), space))


# ------------------------------------------------------------------ export


@route(SPACE + "/export", methods=["GET"])
@api
def export(space: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import export as export_uc

    check_id(space, "space")
    params = req().query_params or {}
    fmt = params.get("format", "markdown")
    status = params.get("status", "active")
    if status not in export_uc.EXPORT_STATUSES:
        raise BadRequest("status must be active, archived or all", code="invalid_status")
    if fmt not in ("json", "markdown"):
        raise BadRequest("format must be markdown or json", code="invalid_format")
    known_space(space)
    if fmt == "json":
        return json_response({"space": space,
                              "events": export_uc.export_json(services(), space, status)})
    text = export_uc.export_markdown(services(), space,
                                     services().settings.highlight_threshold, status)
    return Response(body=text, status_code=200,
                    headers={"Content-Type": "text/markdown; charset=utf-8"})


# ------------------------------------------------------------------ the memory graph
# Entities, threads and relations between events (docs/graph.md).


@route(SPACE + "/entities", methods=["GET"])
@api
def list_entities(space: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import entities as entities_uc
    from chalicelib.usecases.graph.models import EntityQuery

    check_id(space, "space")
    q = parse_query(EntityQuery, req())
    known_space(space)
    return json_response(entities_uc.list_entities(services(), space, q.kind))


@route(SPACE + "/entities/{entity_id}", methods=["GET"])
@api
def get_entity(space: str, entity_id: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import entities as entities_uc

    check_id(space, "space")
    check_id(entity_id, "entity_id")
    known_space(space)
    return json_response(entities_uc.get_entity(services(), space, entity_id))


@route(SPACE + "/threads", methods=["GET"])
@api
def list_threads(space: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import threads as threads_uc

    check_id(space, "space")
    known_space(space)
    return json_response(threads_uc.list_threads(services(), space))


@route(SPACE + "/threads", methods=["POST"])
@api
def create_thread(space: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import threads as threads_uc
    from chalicelib.usecases.graph.models import CreateThreadRequest

    check_id(space, "space")
    body = parse_body(req(), CreateThreadRequest)
    return json_response(threads_uc.create_thread(services(), space, body), 201)


@route(SPACE + "/threads/{thread_id}", methods=["GET"])
@api
def get_thread(space: str, thread_id: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import threads as threads_uc

    check_id(space, "space")
    check_id(thread_id, "thread_id")
    known_space(space)
    return json_response(threads_uc.get_thread(services(), space, thread_id))


@route(SPACE + "/threads/{thread_id}", methods=["PATCH"])
@api
def patch_thread(space: str, thread_id: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import threads as threads_uc
    from chalicelib.usecases.graph.models import PatchThreadRequest

    check_id(space, "space")
    check_id(thread_id, "thread_id")
    body = parse_body(req(), PatchThreadRequest)
    return json_response(threads_uc.patch_thread(services(), space, thread_id, body))


@route(SPACE + "/profiles", methods=["GET"])
@api
def list_profiles(space: str):
    """A profile per person: the facts told about them, with the time each held."""
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import facts as facts_uc

    check_id(space, "space")
    known_space(space)
    return json_response(facts_uc.profiles(services(), space))


@route(SPACE + "/profiles/{name}", methods=["GET"])
@api
def get_profile(space: str, name: str):
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import facts as facts_uc

    check_id(space, "space")
    known_space(space)
    return json_response(facts_uc.profile(services(), space, unquote(name)))


@route(SPACE + "/facts/{fact_id}", methods=["PATCH"])
@api
def patch_fact(space: str, fact_id: str):
    """Correct a fact by hand, or say it ended (versioned: send the version you read)."""
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import facts as facts_uc

    check_id(space, "space")
    check_id(fact_id, "fact_id")
    body = parse_body(req(), facts_uc.PatchFactRequest)
    return json_response(facts_uc.patch_fact(services(), space, fact_id, body))


@route(SPACE + "/graph", methods=["GET"])
@api
def export_graph(space: str):
    """Events, entities, threads and relations as one JSON document."""
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import transfer as graph_uc

    check_id(space, "space")
    known_space(space)
    return json_response(graph_uc.export_graph(services(), space))


@route(SPACE + "/graph", methods=["POST"])
@api
def import_graph(space: str):
    """Write a graph document into this space and index its events: in the request when it
    is small (200), else as a background job (202, `job`; Location: GET …/jobs/{id})."""
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import graph_import as graph_import_uc
    from chalicelib.usecases.graph.models import GraphDocument

    check_id(space, "space")
    result = graph_import_uc.import_graph(services(), space, parse_body(req(), GraphDocument))
    if result.job is None:
        return json_response(result)
    return accepted(result, space, result.job.id)


# ------------------------------------------------------------------ keys and spaces
# /v1/keys is admin only (chalicelib.api.auth.required_access); docs/keys.md.


@route("/v1/keys", methods=["POST"])
@api
def create_key():
    from chalicelib.usecases import keys as keys_uc

    created = keys_uc.create_key(services(), parse_body(req(), keys_uc.CreateKeyRequest))
    return json_response(created, 201)


@route("/v1/keys", methods=["GET"])
@api
def list_keys():
    from chalicelib.usecases import keys as keys_uc

    return json_response(keys_uc.list_keys(services()))


@route("/v1/keys/{key_id}", methods=["DELETE"])
@api
def revoke_key(key_id: str):
    from chalicelib.usecases import keys as keys_uc

    return json_response(keys_uc.revoke_key(services(), key_id))


@route("/v1/spaces", methods=["GET"])
@api
def list_spaces():
    """The spaces the calling key may see."""
    from chalicelib.usecases import keys as keys_uc

    return json_response(keys_uc.visible_spaces(services(), current_scope()))


# ------------------------------------------------------------------ forgetting now


@route(SPACE + "/forget", methods=["POST"])
@api
def forget(space: str):
    """The cooldown job for this space now: compact journals, fade low-retention events."""
    from chalicelib.domain.models import check_id
    from chalicelib.usecases import jobs as jobs_uc

    check_id(space, "space")
    return json_response(jobs_uc.forget_space(services(), space))


# ------------------------------------------------------------------ the web app
# chalicelib/web/ (plain HTML, CSS and ES modules) served by chalicelib.api.web; docs/web.md.


@route(web.INDEX_PATH, methods=["GET"])
@api
def web_index():
    return web.index()


@route(web.ASSET_PATH, methods=["GET"])
@api
def web_asset(version: str, asset: str):
    return web.asset(version, asset)


# ------------------------------------------------------------------ MCP
# The MCP server over streamable HTTP (stateless, JSON responses): docs/mcp.md. A read at the
# door (api.auth.required_access); the MCP server keeps write tools from a read key. The SDK
# is imported here, on the first call, so `import app` stays cheap.


@route(SPACE + "/mcp", methods=["POST"])
@api
def mcp_server(space: str):
    from chalicelib.domain.models import check_id

    check_id(space, "space")
    from chalicelib.mcp.http import handle

    return handle(services(), space, current_scope(), req())


# ------------------------------------------------------------------ chat gateway
# OpenAI-compatible chat completions that remember (docs/gateway.md): space and window from
# X-Annals-Space / X-Annals-Window; a write on that space (api.auth.required_access). Here the
# response is whole (Lambda behind API Gateway REST buffers it: a stream comes as one SSE
# body); `annals serve` streams `"stream": true` itself (chalicelib.local.wsgi).


@route("/v1/chat/completions", methods=["POST"])
@api
def chat_completions():
    from chalicelib.api import gateway

    body = parse_body(req(), gateway.ChatCompletionRequest)
    return gateway.chat_response(services(), req().headers, body)


@route("/v1/models", methods=["GET"])
@api
def list_models():
    from chalicelib.api import gateway

    return gateway.models_response(services())


# ------------------------------------------------------------------ scheduled jobs


# The quiet-window, merge and cooldown jobs: the local scheduler calls the same functions.
@app.schedule(Rate(5, unit=Rate.MINUTES), name="quiet-window")
def quiet_window_job(event) -> dict:
    return _run_job("quiet-window", event)


@app.schedule(Rate(10, unit=Rate.MINUTES), name="merge")
def merge_job(event) -> dict:
    return _run_job("merge", event)


@app.schedule(Rate(1, unit=Rate.HOURS), name="cooldown")
def cooldown_job(event) -> dict:
    return _run_job("cooldown", event)


def _run_job(name: str, event) -> dict:
    """One scheduled run; a unit that failed is in the result (and a JobFailure record), and
    counted as a metric so an alarm can say which job keeps failing."""
    from chalicelib.usecases import jobs as jobs_uc

    result = jobs_uc.run_job(name, services(), _event_time(event)).as_dict()
    job_metrics(name, len(result.get("failed", [])), len(result.get("quarantined", [])))
    return result


def _event_time(event) -> datetime | None:
    # EventBridge gives the scheduled time; the job decides by it, not by when Lambda woke.
    raw = getattr(event, "time", None)
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else None
    except ValueError:
        return None


# ------------------------------------------------------------------ AWS workers

# Chalice needs these names when it packages the app; the stack overrides the event source
# ARNs with its own queue and table stream (see infra/), so the defaults only name things.
EXTRACT_QUEUE = os.environ.get("ANNALS_QUEUE_NAME", "annals-extract")
TABLE_STREAM_ARN = os.environ.get(
    "ANNALS_TABLE_STREAM_ARN",
    "arn:aws:dynamodb:us-east-1:000000000000:table/annals/stream/2026-01-01T00:00:00.000")


@app.on_sqs_message(queue=EXTRACT_QUEUE, batch_size=10, name="extract_worker")
def extract_worker(event) -> dict:
    """Partial batch failures: only the failed messages return to the queue (then the DLQ).
    The stack sets ReportBatchItemFailures on the event source; Chalice cannot."""
    from chalicelib.usecases.jobs import QueueRecord, handle_extract_batch
    from chalicelib.wiring import extract_job_runner

    records = [QueueRecord(id=r.to_dict()["messageId"], body=r.body) for r in event]
    run = extract_job_runner(services(), lambda_context=event.context)
    left = getattr(event.context, "get_remaining_time_in_millis", None)
    failed = handle_extract_batch(services(), records, run,
                                  remaining=(lambda: left() / 1000) if left else None)
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}


@app.on_dynamodb_record(stream_arn=TABLE_STREAM_ARN, batch_size=100, name="index_stream")
def index_stream(event) -> dict:
    from chalicelib.adapters.dynamodb.stream import change_records
    from chalicelib.usecases.indexing import apply_changes

    failed = apply_changes(services(), change_records(event))
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}

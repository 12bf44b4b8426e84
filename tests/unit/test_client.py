"""chalicelib.client.AnnalsClient: one method per OpenAPI operation (both ways, so a new route
without a client method fails here), the server's own models in and out, and errors raised
with the {"error": {...}} body, the status and Retry-After. The app is reached in-process,
through httpx's WSGI transport and the local server's WSGI adapter."""

from __future__ import annotations

import inspect
import json
import re

import httpx
import pytest
from pydantic import ValidationError

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.api.openapi import (
    OPERATIONS,
    EventWithEvidence,
    ExportedEvents,
    HookRecallResponse,
    openapi_document,
)
from chalicelib.client import AnnalsAPIError, AnnalsClient
from chalicelib.domain.models import Event, RecallRequest, RecallResponse
from chalicelib.local.worker import JobWorker
from chalicelib.local.wsgi import ChaliceWSGI
from tests.conftest import API_KEY

METHODS = {"get", "put", "post", "patch", "delete", "head", "options"}
SPACE = "demo"
MESSAGES = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
    {"seq": 3, "role": "user", "speaker": "Sam",
     "content": "I finally booked the flight to Lisbon for my sister's wedding",
     "at": "2026-06-20T09:00:00+08:00"},
]


def documented() -> dict[str, dict]:
    """operationId → the document's operation (with its path and method)."""
    out = {}
    for path, item in openapi_document()["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                out[op["operationId"]] = {**op, "path": path, "method": method.upper()}
    return out


def wsgi_transport() -> httpx.WSGITransport:
    from app import app

    return httpx.WSGITransport(app=ChaliceWSGI(app, MAX_BODY_BYTES))


@pytest.fixture
def annals(services):
    with AnnalsClient("http://annals.test", API_KEY, transport=wsgi_transport()) as client:
        yield client


class StubUpstream:
    """The chat gateway's upstream (chalicelib.ports.ChatUpstream), answering one line."""

    name, default_model = "stub", "stub"

    def __init__(self):
        self.requests: list[dict] = []

    def complete(self, request: dict) -> dict:
        self.requests.append(request)
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                "model": request.get("model") or "stub",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "记得，一切正常。"}}]}

    def stream(self, request: dict):
        raise NotImplementedError

    def models(self) -> dict:
        return {"object": "list", "data": [{"id": "stub", "object": "model"}]}


# ------------------------------------------------------------------ the client is the document


def test_every_operation_has_a_method_and_every_method_an_operation():
    ops, methods = set(documented()), AnnalsClient.operation_ids()
    assert sorted(ops - methods) == [], "operations without a client method (chalicelib/client.py)"
    assert sorted(methods - ops) == [], "client methods for operations the API does not have"
    for op_id in methods:
        assert callable(getattr(AnnalsClient, op_id)), op_id  # named by its operationId


def test_methods_take_the_path_parameters_and_return_the_documented_model():
    for op_id, op in documented().items():
        method = getattr(AnnalsClient, op_id)
        params = inspect.signature(method).parameters
        path_params = [p["name"] for p in op.get("parameters", []) if p["in"] == "path"]
        assert path_params == re.findall(r"{(\w+)}", op["path"]), op_id
        assert set(path_params) <= set(params), (op_id, path_params, list(params))
        table = next(o for o in OPERATIONS if o.operation_id == op_id)
        returns = inspect.get_annotations(method)["return"]
        expected = table.response.__name__ if table.response else "str"
        assert expected in returns, (op_id, returns, expected)


def test_every_method_reaches_its_operation(annals, services, monkeypatch):
    """A tour of the whole API through the client: each operationId is sent at least once
    and answers successfully (a new operation needs a step here)."""
    sent: list[str] = []
    request = AnnalsClient.request

    def recording(self, operation_id, *args, **kwargs):
        response = request(self, operation_id, *args, **kwargs)
        sent.append(operation_id)
        return response

    monkeypatch.setattr(AnnalsClient, "request", recording)
    services.chat = StubUpstream()

    assert annals.health().status == "ok"
    assert "/v1/spaces/{space}/hook/recall" in annals.openapi().paths
    put = annals.put_messages(SPACE, "s1", MESSAGES)
    assert put.accepted == 3
    listed = annals.list_messages(SPACE, "s1", limit=2)
    assert [m.seq for m in listed.messages] == [1, 2] and listed.next_cursor
    assert [m.content for m in annals.iter_messages(SPACE, "s1", limit=2)] == \
        [m["content"] for m in MESSAGES]
    events = annals.extract(SPACE).events
    assert events and all(isinstance(e, Event) for e in events)
    worker = JobWorker(services, poll_seconds=0.05)  # what `annals serve` runs jobs with
    worker.start()
    try:
        seen = []
        assert annals.extract(SPACE, background=True, poll_interval=0.02,
                              on_progress=lambda job: seen.append(job.status)).events == []
    finally:
        worker.stop()
    assert seen[0] == "queued" and seen[-1] == "done"
    (job,) = annals.list_jobs(SPACE).jobs
    assert annals.get_job(SPACE, job.id, events=True).events == []
    annals.put_messages(SPACE, "s2", MESSAGES)  # a host reads it: a task, its answer
    (task,) = annals.reading_tasks(SPACE, limit=1).tasks
    read = annals.reading_answer(SPACE, task.lease, '{"events": []}')
    assert (read.read_by, read.events) == ("host", 0)
    page = annals.list_events(SPACE, limit=1)
    assert len(page.events) == 1 and page.next_cursor
    assert [e.id for e in annals.iter_events(SPACE, limit=1)] == \
        [e.id for e in annals.list_events(SPACE).events]
    saved = annals.save_event(SPACE, "Sam prefers window seats", importance=4,
                              happened_at="2026-06-21T10:00:00+08:00")
    assert saved.kind == "note" and saved.importance == 4
    first = next(e for e in events if e.sources)
    got = annals.get_event(SPACE, first.id, evidence=True)
    assert isinstance(got, EventWithEvidence) and got.evidence
    assert annals.get_event(SPACE, first.id).evidence is None
    patched = annals.patch_event(SPACE, saved.id, version=saved.version, importance=7)
    assert patched.version == saved.version + 1
    assert [v.version for v in annals.event_history(SPACE, saved.id).versions] == [1, 2]

    recall = annals.recall(SPACE, "奶糖体检", max_cards=3)
    assert isinstance(recall, RecallResponse) and "体检" in recall.cards[0].text
    same = annals.recall(SPACE, RecallRequest(query="奶糖体检"), max_cards=3)
    assert same.recalled_ids == recall.recalled_ids
    hook = annals.hook_recall(SPACE, "奶糖体检", window="chat-1",
                              recent=[{"role": "assistant", "content": "你好呀"}])
    assert isinstance(hook, HookRecallResponse) and hook.injected is False
    assert hook.additional_context and hook.recalled_ids
    recorded = annals.deliveries(SPACE, "chat-1", hook.recalled_ids)
    assert [d.ref for d in recorded.recorded] == hook.recalled_ids

    assert annals.consolidate(SPACE).merger
    assert annals.forget(SPACE).space == SPACE
    assert annals.stats(SPACE).events.active >= 1
    markdown = annals.export(SPACE)
    assert isinstance(markdown, str) and "2026-06" in markdown
    exported = annals.export(SPACE, format="json", status="all")
    assert isinstance(exported, ExportedEvents) and exported.events

    entities = annals.list_entities(SPACE).entities
    assert entities and all(e.event_count for e in entities)
    assert annals.get_entity(SPACE, entities[0].id).events
    assert {e.kind for e in annals.list_entities(SPACE, kind="pet").entities} <= {"pet"}
    thread = annals.create_thread(SPACE, title="奶糖", aliases=["橘猫"])
    assert thread.manual and thread.version == 1
    assert annals.patch_thread(SPACE, thread.id, version=1, title="奶糖的一年").version == 2
    assert thread.id in [t.id for t in annals.list_threads(SPACE).threads]
    assert annals.get_thread(SPACE, thread.id).title == "奶糖的一年"
    graph = annals.export_graph(SPACE)
    assert graph.events and graph.threads and graph.entities
    assert annals.import_graph("copy", graph).events_created == len(graph.events)
    pets = [f.value for p in annals.list_profiles(SPACE).profiles if p.name == "小明"
            for f in p.facts if f.attribute == "pet"]
    assert pets == ["奶糖"]
    assert annals.get_profile(SPACE, "小明").name == "小明"  # a Chinese name in the path
    pet = next(f for f in annals.get_profile(SPACE, "小明").facts if f.attribute == "pet")
    ended = annals.patch_fact(SPACE, pet.id, pet.version, current=False)
    assert not ended.current and ended.version == pet.version + 1

    answer = annals.mcp_server(SPACE, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert answer is not None and answer.model_dump()["result"]["tools"]
    assert annals.mcp_server(SPACE, {"jsonrpc": "2.0",
                                     "method": "notifications/initialized"}) is None

    page_html = annals.web_index()
    assert "<" in page_html
    asset = re.search(r"web/([^/\"']+)/([^\"'?#]+)", page_html)
    if asset:  # the page links its files by version
        assert annals.web_asset(asset.group(1), asset.group(2))
    else:
        with pytest.raises(AnnalsAPIError) as missing:
            annals.web_asset("0", "nothing.js")
        assert missing.value.status == 404
        sent.append("web_asset")  # reached: it answered 404 for a file that is not there

    chat = annals.chat_completions(model="stub", space=SPACE, window="chat-2",
                                   messages=[{"role": "user", "content": "还记得奶糖体检吗？"}])
    assert chat.choices[0].message["content"] == "记得，一切正常。"
    upstream_system = services.chat.requests[0]["messages"][0]
    assert upstream_system["role"] == "system" and "体检" in upstream_system["content"]
    assert [m["id"] for m in annals.list_models().model_dump()["data"]] == ["stub"]
    with pytest.raises(ValueError, match="does not stream"):
        annals.chat_completions(model="stub", stream=True,
                                messages=[{"role": "user", "content": "hi"}])

    assert SPACE in annals.list_spaces().spaces
    made = annals.create_key(spaces=[SPACE], access="read", label="client-test")
    assert made.key.startswith("ak_")
    assert made.id in [k.id for k in annals.list_keys().keys]
    assert annals.revoke_key(made.id).revoked
    assert annals.archive_event(SPACE, saved.id).status == "archived"
    assert annals.delete_message(SPACE, "s1", 3).deleted.seq == 3

    assert set(sent) == set(documented())


# ------------------------------------------------------------------ errors


def test_error_answers_raise_with_the_error_body(annals):
    saved = annals.save_event(SPACE, "a note")  # the space holds something: not unknown_space
    with pytest.raises(AnnalsAPIError) as missing:
        annals.get_event(SPACE, "ev_nope")
    err = missing.value
    assert (err.status, err.code) == (404, "not_found") and "ev_nope" in err.message
    assert err.body == {"error": {"code": "not_found", "message": err.message}}
    assert err.method == "GET" and err.url.endswith(f"/v1/spaces/{SPACE}/events/ev_nope")
    assert str(err) == f"404 not_found: {err.message}" and err.retry_after is None

    annals.patch_event(SPACE, saved.id, version=1, importance=3)
    with pytest.raises(AnnalsAPIError) as stale:
        annals.patch_event(SPACE, saved.id, version=1, importance=4)
    assert (stale.value.status, stale.value.code) == (409, "version_conflict")

    # a body the client would refuse, sent unchecked: the server's 422 with every problem
    unchecked = RecallRequest.model_construct(query="x", max_cards=0)
    with pytest.raises(AnnalsAPIError) as invalid:
        annals.request("recall", {"space": SPACE}, body=unchecked)
    assert invalid.value.status == 422 and invalid.value.code == "validation_error"
    assert invalid.value.details and "max_cards" in json.dumps(invalid.value.details)


def test_bad_values_fail_before_anything_is_sent(services):
    sent = []
    transport = httpx.MockTransport(lambda request: sent.append(request) or httpx.Response(200))
    with AnnalsClient("http://annals.test", "k", transport=transport) as client:
        with pytest.raises(ValidationError):
            client.recall(SPACE, "x", max_cards=0)
        with pytest.raises(ValidationError):
            client.put_messages(SPACE, "s1", [{"seq": 1, "role": "robot", "content": "hi",
                                               "at": "2026-06-01T10:00:00Z"}])
        with pytest.raises(ValidationError):
            client.save_event(SPACE, "x", unknown_field=1)
        with pytest.raises(TypeError):
            client.recall(SPACE, 42)  # type: ignore[arg-type]
    assert sent == []


def test_keys_and_scopes_are_errors_too(services):
    transport = wsgi_transport()
    with AnnalsClient("http://annals.test", "wrong", transport=transport) as client:
        with pytest.raises(AnnalsAPIError) as denied:
            client.stats(SPACE)
        assert (denied.value.status, denied.value.code) == (401, "unauthorized")
        assert client.health().status == "ok"  # public
    with AnnalsClient("http://annals.test", API_KEY, transport=transport) as admin:
        key = admin.create_key(spaces=[SPACE], access="read", label="reader").key
    with AnnalsClient("http://annals.test", key, transport=transport) as reader:
        with pytest.raises(AnnalsAPIError) as unknown:  # nothing written there yet
            reader.hook_recall(SPACE, "anything")
        assert (unknown.value.status, unknown.value.code) == (404, "unknown_space")
        with AnnalsClient("http://annals.test", API_KEY, transport=transport) as admin:
            admin.put_messages(SPACE, "s1", MESSAGES[:1])
        assert reader.hook_recall(SPACE, "anything").injected is False  # a read
        with pytest.raises(AnnalsAPIError) as forbidden:
            reader.save_event(SPACE, "a note")
        assert (forbidden.value.status, forbidden.value.code) == (403, "forbidden")


def test_503_carries_retry_after_and_retries_when_asked():
    answers = [
        httpx.Response(503, headers={"Retry-After": "2"},
                       json={"error": {"code": "unavailable", "message": "busy; retry"}}),
        httpx.Response(200, json={"status": "ok", "version": "1"}),
    ]
    calls = []

    def handler(request):
        calls.append(request)
        return answers[min(len(calls), len(answers)) - 1]

    with AnnalsClient("http://annals.test", "k",
                      transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(AnnalsAPIError) as busy:
            client.health()
        assert (busy.value.status, busy.value.code, busy.value.retry_after) == \
            (503, "unavailable", 2.0)

    calls.clear()
    slept = []
    with AnnalsClient("http://annals.test", "k", retries=1, max_retry_wait=0.5,
                      transport=httpx.MockTransport(handler)) as client:
        client._sleep = slept.append
        assert client.health().status == "ok"
    assert len(calls) == 2 and slept == [0.5]  # Retry-After, capped by max_retry_wait


def test_errors_that_are_not_annals_errors():
    def handler(request):
        if request.url.path.endswith("/models"):  # an upstream's error, passed through
            return httpx.Response(429, headers={"Retry-After": "3"}, json={"error": {
                "message": "Rate limit reached", "type": "rate_limit_error", "param": None,
                "code": None}})
        if request.url.path.endswith("/mcp"):
            return httpx.Response(400, json={"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "Bad Request: unsupported protocol version"}})
        return httpx.Response(502, text="<html>Bad Gateway</html>")

    with AnnalsClient("http://annals.test", "k",
                      transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(AnnalsAPIError) as gateway:
            client.stats(SPACE)
        assert (gateway.value.status, gateway.value.code) == (502, "http_502")
        assert "Bad Gateway" in gateway.value.message and gateway.value.body is None
        with pytest.raises(AnnalsAPIError) as rpc:
            client.mcp_server(SPACE, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert (rpc.value.status, rpc.value.code) == (400, "jsonrpc_-32600")
        with pytest.raises(AnnalsAPIError) as limited:
            client.list_models()
        assert (limited.value.status, limited.value.code, limited.value.message,
                limited.value.retry_after) == (429, "rate_limit_error", "Rate limit reached", 3)


def test_base_url_with_a_stage_path_and_the_bearer_key(monkeypatch):
    seen = []

    def handler(request):
        seen.append(request)
        if "/events/" in request.url.path:
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "no"}})
        return httpx.Response(200, json={"spaces": [], "all_spaces": True, "access": "admin"})

    monkeypatch.setenv("ANNALS_URL", "https://abc.execute-api.eu-west-1.amazonaws.com/api/")
    monkeypatch.setenv("ANNALS_API_KEY", "ak_secret")
    with AnnalsClient.from_env(transport=httpx.MockTransport(handler)) as client:
        client.list_spaces()
        with pytest.raises(AnnalsAPIError):
            client.get_event("a.b", "ev/odd id")  # path values are quoted, never re-routed
    assert str(seen[0].url) == "https://abc.execute-api.eu-west-1.amazonaws.com/api/v1/spaces"
    assert seen[0].headers["authorization"] == "Bearer ak_secret"
    assert seen[1].url.raw_path == b"/api/v1/spaces/a.b/events/ev%2Fodd%20id"


def test_query_strings_use_the_documented_names():
    seen = []

    def handler(request):
        seen.append(request.url)
        if request.url.path.endswith("/export"):
            return httpx.Response(200, text="# Annals", headers={"Content-Type": "text/markdown"})
        return httpx.Response(200, json={"events": [], "next_cursor": None})

    with AnnalsClient("http://annals.test", "k",
                      transport=httpx.MockTransport(handler)) as client:
        client.list_events(SPACE, start="2026-06-01T00:00:00+08:00", limit=5, status="all")
        assert client.export(SPACE, status="archived") == "# Annals"
    assert dict(seen[0].params) == {"from": "2026-06-01T00:00:00+08:00", "limit": "5",
                                    "status": "all"}
    assert dict(seen[1].params) == {"format": "markdown", "status": "archived"}


def test_list_events_asks_for_kinds_as_a_comma_list():
    seen = []

    def handler(request):
        seen.append(request.url)
        return httpx.Response(200, json={"events": [], "next_cursor": None})

    with AnnalsClient("http://annals.test", "k",
                      transport=httpx.MockTransport(handler)) as client:
        client.list_events(SPACE)
        client.list_events(SPACE, kind="summary")
        client.list_events(SPACE, kind=["event", "summary"])
        with pytest.raises(ValidationError):  # refused before anything is sent
            client.list_events(SPACE, kind="summaries")
    assert [dict(u.params) for u in seen] == [{}, {"kind": "summary"},
                                              {"kind": "event,summary"}]


def test_429_is_retried_after_its_retry_after_too():
    answers = iter([
        httpx.Response(429, headers={"Retry-After": "3"},
                       json={"error": {"code": "rate_limited", "message": "slow down"}}),
        httpx.Response(200, json={"status": "ok", "version": "1"}),
    ])
    slept = []
    with AnnalsClient("http://annals.test", "k", retries=1,
                      transport=httpx.MockTransport(lambda request: next(answers))) as client:
        client._sleep = slept.append
        assert client.health().status == "ok"
    assert slept == [3.0]

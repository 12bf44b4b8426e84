"""HTTP front of the double: routing, query-parameter checks, `_bulk`, recording, failures.

Start one with `running_server(mode)` (yields the base URL) or `running_double(mode)` (yields
the `OpenSearchDouble`, whose `.requests` records what clients sent and whose `inject_*`
methods make the next requests or bulk items fail).
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .errors import OpenSearchError, bad_request, not_implemented
from .store import Cluster

_GLOBAL_PARAMS = {"pretty", "human", "error_trace"}
# Query parameters each endpoint accepts (beyond the global ones). In aoss mode `refresh` is
# removed everywhere: Serverless rejects it as an unrecognized parameter.
_PARAMS = {
    "info": set(),
    "bulk": {"refresh", "timeout", "wait_for_active_shards"},
    "search": {"size", "from", "ignore_unavailable", "allow_no_indices", "track_total_hits",
               "timeout", "_source", "expand_wildcards"},
    "msearch": {"max_concurrent_searches", "typed_keys", "rest_total_hits_as_int"},
    "count": {"ignore_unavailable", "allow_no_indices", "expand_wildcards"},
    "refresh": {"ignore_unavailable", "allow_no_indices", "expand_wildcards"},
    "create_index": {"timeout", "master_timeout", "cluster_manager_timeout",
                     "wait_for_active_shards"},
    "delete_index": {"timeout", "master_timeout", "cluster_manager_timeout",
                     "ignore_unavailable", "allow_no_indices", "expand_wildcards"},
    "exists": {"ignore_unavailable", "allow_no_indices", "expand_wildcards", "local",
               "include_defaults", "flat_settings"},
    "describe": {"ignore_unavailable", "allow_no_indices", "expand_wildcards", "local",
                 "include_defaults", "flat_settings"},
    "mapping": {"ignore_unavailable", "allow_no_indices", "expand_wildcards", "local"},
    "get_doc": {"realtime", "refresh"},
    "delete_doc": {"refresh", "timeout", "wait_for_active_shards"},
    "index_doc": {"refresh", "timeout", "op_type", "wait_for_active_shards"},
    "delete_by_query": {"refresh", "conflicts", "timeout"},
}
# Real parameters the double does not implement.
_UNIMPLEMENTED_PARAMS = {"q", "sort", "df", "analyzer", "preference", "search_type", "scroll",
                         "request_cache", "if_seq_no", "if_primary_term", "version",
                         "version_type", "filter_path", "stored_fields", "_source_includes",
                         "_source_excludes", "routing", "pipeline", "require_alias"}
_SERVERLESS_UNSUPPORTED = {"refresh", "delete_by_query"}


@dataclass
class RecordedRequest:
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def ndjson(self) -> list[Any]:
        return [json.loads(line) for line in self.body.decode().splitlines() if line.strip()]


@dataclass
class _ItemFailure:
    status: int
    error_type: str
    reason: str
    times: int
    when: Callable[[str, dict[str, Any], Any], bool] | None


@dataclass
class _HttpFailure:
    status: int
    times: int
    path: str | None
    error_type: str
    reason: str
    method: str | None = None
    after: int = 0  # matching requests let through before the first failure
    when: Callable[[RecordedRequest], bool] | None = None
    delay: float = 0.0  # > 0: a slow answer (the request is applied, the answer waits)
    seen: int = 0
    failed: int = 0

    def matches(self, request: RecordedRequest) -> bool:
        return ((self.path is None or self.path in request.path)
                and (self.method is None or request.method == self.method)
                and (self.when is None or self.when(request)))


class OpenSearchDouble:
    """An in-process OpenSearch (mode "es": managed domain) or Serverless ("aoss": a vector
    search collection) speaking the REST API on 127.0.0.1."""

    def __init__(self, mode: str = "es", *, visibility_delay: float = 0.0):
        self.cluster = Cluster(mode, visibility_delay=visibility_delay)
        self.requests: list[RecordedRequest] = []
        self._item_failures: list[_ItemFailure] = []
        self._http_failures: list[_HttpFailure] = []
        self._injected_total = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def mode(self) -> str:
        return self.cluster.mode

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the double is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    # ------------------------------------------------------------ lifecycle

    def start(self) -> str:
        handler = type("Handler", (_Handler,), {"double": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name=f"opensearch-double-{self.mode}")
        self._thread.start()
        return self.url

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> OpenSearchDouble:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ test hooks

    def inject_bulk_item_failure(self, status: int = 429, *, times: int = 1,
                                 when: Callable[[str, dict[str, Any], Any], bool] | None = None,
                                 error_type: str | None = None, reason: str | None = None) -> None:
        """The next `times` bulk items (those for which `when(action, meta, source)` is true,
        default all) fail with `status` and are not applied."""
        error_type = error_type or ("es_rejected_execution_exception" if status == 429
                                    else "injected_failure_exception")
        reason = reason or ("rejected execution of coordinating operation" if status == 429
                            else "failure injected by the test")
        with self._lock:
            self._item_failures.append(_ItemFailure(status, error_type, reason, times, when))

    def inject_http_error(self, status: int = 503, *, times: int = 1, path: str | None = None,
                          error_type: str | None = None, method: str | None = None,
                          after: int = 0,
                          when: Callable[[RecordedRequest], bool] | None = None) -> None:
        """The next `times` requests (whose path contains `path`, of `method`, for which
        `when(request)` is true — each if given) get `status` and are not applied; with
        `after`, that many matching requests are let through first (fail the n-th bulk
        request: `path="_bulk", after=n - 1`)."""
        error_type = error_type or {429: "too_many_requests_exception",
                                    503: "unavailable_shards_exception"}.get(
            status, "injected_failure_exception")
        with self._lock:
            self._http_failures.append(
                _HttpFailure(status, times, path, error_type, "failure injected by the test",
                             method=method, after=after, when=when))

    def inject_slow_response(self, seconds: float, *, times: int = 1, path: str | None = None,
                             method: str | None = None, after: int = 0,
                             when: Callable[[RecordedRequest], bool] | None = None) -> None:
        """Like inject_http_error, but the request is applied and its answer sent `seconds`
        late: a client with a shorter timeout sees a timeout after the write happened."""
        with self._lock:
            self._http_failures.append(
                _HttpFailure(200, times, path, "", "", method=method, after=after, when=when,
                             delay=seconds))

    def clear_failures(self) -> None:
        """Forget every injected failure not used up yet."""
        with self._lock:
            self._http_failures.clear()
            self._item_failures.clear()

    def injected_http_errors(self) -> int:
        """How many requests an injected error or delay has hit so far (ever)."""
        with self._lock:
            return self._injected_total

    def requests_to(self, fragment: str, method: str | None = None) -> list[RecordedRequest]:
        return [r for r in self.requests
                if fragment in r.path and (method is None or r.method == method)]

    def _take_http_failure(self, request: RecordedRequest) -> _HttpFailure | None:
        with self._lock:
            for failure in self._http_failures:
                if failure.times > 0 and failure.matches(request):
                    failure.seen += 1
                    if failure.seen <= failure.after:
                        continue
                    failure.times -= 1
                    failure.failed += 1
                    self._injected_total += 1
                    return failure
        return None

    def _take_item_failure(self, action: str, meta: dict[str, Any], source: Any) -> OpenSearchError | None:
        with self._lock:
            for failure in self._item_failures:
                if failure.times > 0 and (failure.when is None or failure.when(action, meta, source)):
                    failure.times -= 1
                    return OpenSearchError(failure.status, failure.error_type, failure.reason)
        return None

    # ------------------------------------------------------------ bulk

    def bulk(self, default_index: str | None, raw: bytes, params: dict[str, str]) -> dict[str, Any]:
        started = time.monotonic()
        refresh = params.get("refresh")
        if refresh not in (None, "", "true", "false", "wait_for"):
            raise bad_request("illegal_argument_exception", f"Unknown value for refresh: [{refresh}].")
        ops = _parse_bulk(raw, default_index)
        cluster = self.cluster
        items = []
        touched: set[str] = set()
        for action, meta, source in ops:
            index, doc_id = meta["_index"], meta.get("_id")
            try:
                injected = self._take_item_failure(action, meta, source)
                if injected is not None:
                    raise injected
                if action == "delete":
                    if doc_id is None:
                        raise bad_request("action_request_validation_exception",
                                          "Validation Failed: 1: id is missing;")
                    status, result = cluster.delete_doc(index, str(doc_id))
                else:
                    status, result = cluster.index_doc(
                        index, None if doc_id is None else str(doc_id), source, op_type=action)
                touched.add(index)
                items.append({action: {**result, "status": status}})
            except OpenSearchError as e:
                items.append({action: {"_index": index, "_id": doc_id, "status": e.status,
                                       "error": e.cause()}})
        cluster.refresh_after_write(touched, refresh)
        return {"took": int((time.monotonic() - started) * 1000),
                "errors": any("error" in next(iter(i.values())) for i in items),
                "items": items}


def _parse_bulk(raw: bytes, default_index: str | None) -> list[tuple[str, dict[str, Any], Any]]:
    text = raw.decode("utf-8")
    if text and not text.endswith("\n"):
        raise bad_request("illegal_argument_exception",
                          "The bulk request must be terminated by a newline [\\n]")
    lines = text.split("\n")
    ops = []
    n = 0
    while n < len(lines):
        line = lines[n].strip()
        n += 1
        if not line:
            continue
        try:
            action_line = json.loads(line)
        except ValueError:
            raise bad_request("illegal_argument_exception",
                              f"Malformed action/metadata line [{n}], expected START_OBJECT or"
                              " END_OBJECT but found [VALUE_STRING]") from None
        if not isinstance(action_line, dict) or len(action_line) != 1:
            raise bad_request("illegal_argument_exception",
                              f"Malformed action/metadata line [{n}], expected a simple value"
                              " for field [action] but found [START_OBJECT]")
        action, meta = next(iter(action_line.items()))
        if action not in ("index", "create", "delete", "update"):
            raise bad_request("illegal_argument_exception",
                              f"Malformed action/metadata line [{n}], expected one of [create,"
                              f" delete, index, update] but found [{action}]")
        if action == "update":
            raise not_implemented("bulk update actions")
        if not isinstance(meta, dict):
            raise bad_request("illegal_argument_exception",
                              f"Malformed action/metadata line [{n}], expected START_OBJECT")
        for key in meta:
            if key in ("if_seq_no", "if_primary_term", "version", "version_type", "routing",
                       "pipeline", "require_alias"):
                raise not_implemented(f"bulk metadata [{key}]")
            if key not in ("_index", "_id"):
                raise bad_request("illegal_argument_exception",
                                  f"Action/metadata line [{n}] contains an unknown parameter"
                                  f" [{key}]")
        meta = dict(meta)
        meta.setdefault("_index", default_index)
        if meta["_index"] is None:
            raise bad_request("action_request_validation_exception",
                              "Validation Failed: 1: index is missing;")
        source = None
        if action != "delete":
            if n >= len(lines) or not lines[n].strip():
                raise bad_request("action_request_validation_exception",
                                  "Validation Failed: 1: source is missing;")
            try:
                source = json.loads(lines[n])
            except ValueError:
                raise bad_request("mapper_parsing_exception", "failed to parse") from None
            n += 1
        ops.append((action, meta, source))
    if not ops:
        raise bad_request("action_request_validation_exception",
                          "Validation Failed: 1: no requests added;")
    return ops


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "opensearch-double"
    # One buffered write per response and no Nagle: keep-alive requests stay sub-millisecond.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True
    double: OpenSearchDouble

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `double.requests` instead of a log."""

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_DELETE = do_HEAD = do_GET

    # ------------------------------------------------------------ plumbing

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            body = b"".join(chunks)
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            body = gzip.decompress(body)
        return body

    def _send(self, status: int, payload: Any = None) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", "0" if self.command == "HEAD" else str(len(data)))
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    def _handle(self) -> None:
        split = urlsplit(self.path)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        body = self._read_body()
        double = self.double
        recorded = RecordedRequest(self.command, split.path, params,
                                   {k.lower(): v for k, v in self.headers.items()}, body)
        with double._lock:
            double.requests.append(recorded)
        injected = double._take_http_failure(recorded)
        try:
            if injected is not None and not injected.delay:
                raise OpenSearchError(injected.status, injected.error_type, injected.reason)
            status, payload = self._route(split.path, params, body)
        except OpenSearchError as e:
            status, payload = e.status, e.body()
        except Exception as e:  # a bug in the double must surface, not hang the client
            status, payload = 500, OpenSearchError(500, "double_internal_error", repr(e)).body()
        if injected is not None and injected.delay:
            time.sleep(injected.delay)
        try:
            self._send(status, None if self.command == "HEAD" else payload)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            self.close_connection = True

    # ------------------------------------------------------------ routing

    def _msearch(self, raw: bytes) -> dict[str, Any]:
        """`POST /_msearch`: NDJSON header / body pairs, one response each, in order; a
        failed search is that item's error (status and error), as OpenSearch answers."""
        lines = [line for line in raw.decode().splitlines() if line.strip()]
        if not lines or len(lines) % 2:
            raise bad_request("illegal_argument_exception",
                              "msearch request must hold header and body lines in pairs")
        responses: list[dict[str, Any]] = []
        for header_line, body_line in zip(lines[::2], lines[1::2], strict=True):
            try:
                header, body = json.loads(header_line), json.loads(body_line)
            except ValueError:
                raise bad_request("parsing_exception", "Failed to parse msearch line") from None
            try:
                found = self.double.cluster.search(header.get("index"), body, {})
                responses.append({**found, "status": 200})
            except OpenSearchError as e:
                responses.append({**e.body(), "status": e.status})
        return {"took": 0, "responses": responses}

    def _route(self, path: str, params: dict[str, str], raw: bytes) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.strip("/").split("/") if p]
        method = self.command
        double, cluster = self.double, self.double.cluster
        endpoint, allowed_methods = _endpoint(parts, method)
        if endpoint is None:
            return 400, {"error": f"no handler found for uri [{path}] and method [{method}]"}
        if method not in allowed_methods:
            return 405, {"error": f"Incorrect HTTP method for uri [{path}] and method [{method}],"
                                  f" allowed: {sorted(allowed_methods)}", "status": 405}
        if cluster.serverless and endpoint in _SERVERLESS_UNSUPPORTED:
            raise OpenSearchError(404, "unsupported_operation_exception",
                                  f"API [{method} {path}] is not supported by OpenSearch"
                                  " Serverless")
        self._check_params(path, endpoint, params)
        body = None
        if endpoint not in ("bulk", "msearch") and raw.strip():
            try:
                body = json.loads(raw)
            except ValueError:
                raise bad_request("parsing_exception", "Failed to parse request body") from None

        index = parts[0] if parts and not parts[0].startswith("_") else None
        if endpoint == "info":
            return 200, {"name": "double", "cluster_name": "opensearch-double",
                         "version": {"distribution": "opensearch", "number": "2.15.0"},
                         "tagline": "The OpenSearch Project: https://opensearch.org/"}
        if endpoint == "bulk":
            return 200, double.bulk(index, raw, params)
        if endpoint == "search":
            return 200, cluster.search(index, body, params)
        if endpoint == "msearch":
            return 200, self._msearch(raw)
        if endpoint == "count":
            return 200, cluster.count(index, body, params)
        if endpoint == "refresh":
            return 200, cluster.refresh(index)
        if endpoint == "delete_by_query":
            return 200, cluster.delete_by_query(index, body, params)
        assert index is not None
        if endpoint == "create_index":
            return 200, cluster.create_index(index, body)
        if endpoint == "exists":
            return (200 if index in cluster.indices else 404), None
        if endpoint == "describe":
            return 200, cluster.describe(index)
        if endpoint == "mapping":
            return 200, {k: {"mappings": v["mappings"]} for k, v in cluster.describe(index).items()}
        if endpoint == "delete_index":
            return 200, cluster.delete_index(index)
        doc_id = parts[2] if len(parts) > 2 else None
        if endpoint == "get_doc":
            if params.get("refresh") == "true":
                cluster.refresh(index)
            return cluster.get_doc(index, str(doc_id))
        if endpoint == "delete_doc":
            status, result = cluster.delete_doc(index, str(doc_id))
            cluster.refresh_after_write({index}, params.get("refresh"))
            return status, result
        if endpoint == "index_doc":
            op_type = params.get("op_type", "index")
            if op_type not in ("index", "create"):
                raise bad_request("illegal_argument_exception", f"opType must be 'create' or"
                                  f" 'index', found: [{op_type}]")
            status, result = cluster.index_doc(index, doc_id, body, op_type=op_type)
            cluster.refresh_after_write({index}, params.get("refresh"))
            return status, result
        raise AssertionError(endpoint)

    def _check_params(self, path: str, endpoint: str, params: dict[str, str]) -> None:
        allowed = set(_PARAMS[endpoint]) | _GLOBAL_PARAMS
        if self.double.cluster.serverless:
            allowed.discard("refresh")
        for name in params:
            if name in allowed:
                continue
            if name in _UNIMPLEMENTED_PARAMS:
                raise not_implemented(f"query parameter [{name}]")
            raise bad_request("illegal_argument_exception",
                              f"request [{path}] contains unrecognized parameter: [{name}]")


def _endpoint(parts: list[str], method: str) -> tuple[str | None, set[str]]:
    """(endpoint name, allowed methods) for a path, or (None, ∅) when nothing handles it."""
    if not parts:
        return "info", {"GET", "HEAD"}
    head = parts[0]
    if head.startswith("_"):
        system = {"_bulk": ("bulk", {"POST", "PUT"}), "_search": ("search", {"GET", "POST"}),
                  "_msearch": ("msearch", {"GET", "POST"}),
                  "_count": ("count", {"GET", "POST"}), "_refresh": ("refresh", {"GET", "POST"})}
        if len(parts) == 1 and head in system:
            return system[head]
        if head in ("_index_template", "_template", "_alias", "_aliases", "_cluster", "_cat",
                    "_nodes", "_mget", "_plugins"):
            raise not_implemented(f"the [{head}] API")
        return None, set()
    if len(parts) == 1:
        return {"PUT": "create_index", "HEAD": "exists", "GET": "describe",
                "DELETE": "delete_index"}.get(method, "create_index"), {
            "PUT", "HEAD", "GET", "DELETE"}
    sub = parts[1]
    if len(parts) == 2:
        table = {"_bulk": ("bulk", {"POST", "PUT"}), "_search": ("search", {"GET", "POST"}),
                 "_count": ("count", {"GET", "POST"}), "_refresh": ("refresh", {"GET", "POST"}),
                 "_delete_by_query": ("delete_by_query", {"POST"}),
                 "_mapping": ("mapping", {"GET"}), "_doc": ("index_doc", {"POST"})}
        if sub in table:
            return table[sub]
        if sub in ("_settings", "_update_by_query", "_msearch", "_mget", "_alias", "_stats",
                   "_forcemerge", "_flush", "_close", "_open", "_explain", "_validate"):
            raise not_implemented(f"the [{sub}] API")
        return None, set()
    if len(parts) == 3 and sub == "_doc":
        return {"GET": "get_doc", "HEAD": "get_doc", "DELETE": "delete_doc", "PUT": "index_doc",
                "POST": "index_doc"}.get(method, "get_doc"), {
            "GET", "HEAD", "DELETE", "PUT", "POST"}
    if len(parts) == 3 and sub in ("_create", "_update", "_source"):
        raise not_implemented(f"the [{sub}] API")
    return None, set()


# ---------------------------------------------------------------- entry points


@contextmanager
def running_double(mode: str = "es", **options: Any) -> Iterator[OpenSearchDouble]:
    double = OpenSearchDouble(mode, **options)
    double.start()
    try:
        yield double
    finally:
        double.stop()


@contextmanager
def running_server(mode: str = "es", **options: Any) -> Iterator[str]:
    """Start a double on 127.0.0.1 (free port) in a thread; yields its base URL."""
    with running_double(mode, **options) as double:
        yield double.url

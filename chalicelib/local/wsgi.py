"""The Chalice app as a WSGI application, for a production HTTP server (waitress) locally.

Chalice's `LocalGateway` turns each request into the API Gateway event Lambda would receive
and calls the very `app` object Lambda runs, so routes, middleware and errors behave the same
here and on AWS. Around it this module adds what a long-running local service needs and API
Gateway gives on AWS:

- unknown routes answer 404 with the JSON error shape (LocalGateway mimics API Gateway's 403
  with a SigV4 message, which tells a client nothing useful);
- the limits, traffic gate and deadline every request passes are the app's own middleware
  (chalicelib.api.admission), so they hold on Lambda too; the streamed chat, served here,
  takes the same limits;
- `POST /v1/chat/completions` with `"stream": true` is served here, not by Chalice (which
  buffers every response): the same key check (chalicelib.api.auth.authorize), body checks
  and use-case (chalicelib.api.gateway, chalicelib.usecases.gateway), and the upstream's
  chunks go out as server-sent events as they arrive (waitress flushes every write).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

from chalice.config import Config
from chalice.local import ForbiddenError, LocalGateway

from chalicelib.api import gateway as chat_api
from chalicelib.api.admission import admitted
from chalicelib.api.auth import authorize, request_scope, request_space, required_access
from chalicelib.api.http import ACCEPTED_TYPES, transient
from chalicelib.api.paths import CHAT_PATH
from chalicelib.domain.errors import AnnalsError
from chalicelib.ports import UpstreamError
from chalicelib.usecases import gateway as gateway_uc


def is_read(method: str, path: str) -> bool:
    """Reads pass the gate first: the same split the keys use (chalicelib.api.auth)."""
    return required_access(method, path) == "read"


def raw_path(environ: dict) -> str:
    """The path as the client sent it, still percent-encoded. LocalGateway splits it into
    route segments and query itself, as API Gateway does; given the decoded PATH_INFO, an
    id holding `%23` (#), `%3F` (?) or `%2F` (/) would be cut or re-routed — `…/events/ID%23x`
    would reach event ID. Encoded, such a segment is simply not a valid id (400/404)."""
    uri = environ.get("REQUEST_URI") or environ.get("RAW_URI")
    if uri:
        return uri if uri.startswith("/") else "/" + uri.split("/", 3)[-1]  # absolute form
    path = quote(environ.get("PATH_INFO") or "/", safe="/:@-._~!$&'()*+,;=")
    query = environ.get("QUERY_STRING")
    return f"{path}?{query}" if query else path


def error_body(status: int, code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


def thread_local_requests(app: Any) -> None:
    """`app.current_request` per thread, as chalice's own local server has it: a plain Chalice
    keeps one attribute for the whole process, so with waitress's threads a view could read
    the body of a request another thread was serving (found with concurrent POSTs to …/recall
    and …/mcp, docs/mcp.md). Done once per app object."""
    from chalice.local import CustomLocalChalice, LocalChalice

    if isinstance(app, LocalChalice):
        return
    CustomLocalChalice.__bases__ = (LocalChalice, type(app))
    app.__class__ = CustomLocalChalice


class ChaliceWSGI:
    def __init__(self, app: Any, max_body_bytes: int):
        thread_local_requests(app)
        self.gateway = LocalGateway(app, Config(chalice_stage="local"))
        self.max_body_bytes = max_body_bytes

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"].upper()
        path = raw_path(environ)
        headers = {key[5:].replace("_", "-").lower(): value
                   for key, value in environ.items() if key.startswith("HTTP_")}
        for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            if environ.get(key):
                headers[key.replace("_", "-").lower()] = environ[key]
        body = self._body(environ)
        if body is None:
            return self._reply(start_response, 413, {}, error_body(
                413, "payload_too_large", f"body is larger than {self.max_body_bytes} bytes"))
        route = path.split("?")[0]
        if method == "POST" and route == CHAT_PATH and chat_api.wants_stream(body):
            return self._stream_chat(headers, body, start_response)
        try:
            response = self.gateway.handle_request(method, path, headers, body)
        except ForbiddenError:  # LocalGateway's "no such route"
            return self._reply(start_response, 404, {}, error_body(
                404, "not_found", f"no route {method} {environ.get('PATH_INFO', '')}"),
                head=method == "HEAD")
        out = response.get("body") or b""
        if isinstance(out, str):
            out = out.encode()
        response_headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
        for key, values in (response.get("multiValueHeaders") or {}).items():
            response_headers[key] = ", ".join(str(v) for v in values)
        return self._reply(start_response, response["statusCode"], response_headers, out,
                           head=method == "HEAD")

    def _stream_chat(self, headers: dict[str, str], body: bytes,
                     start_response: Callable) -> Iterable[bytes]:
        """POST /v1/chat/completions, streamed: checked as the Chalice route checks it, then
        the upstream's chunks as they come. An error before the first chunk is an ordinary
        JSON answer (an upstream's with its own status and body)."""
        from chalicelib.wiring import get_services

        services = get_services()
        try:
            self._check_content_type(headers)
            scope = authorize(services, "POST", CHAT_PATH, None,
                              headers.get("authorization"), headers=headers)
            space = request_space(CHAT_PATH, None, headers)
            # the order of checks of chat_api.chat_response; the limits hold for the
            # preparing (the recall) — the stream itself is the upstream's time
            with request_scope(scope), admitted(services, scope, "POST", CHAT_PATH, space):
                request = chat_api.parse_chat(body)
                gateway_uc.upstream(services)
                space, window = gateway_uc.target(headers, request)
                turn = gateway_uc.prepare(services, space, window, request)
                chunks = gateway_uc.stream(services, turn)
        except AnnalsError as err:
            retry = getattr(err, "retry_after", None)
            extra = {"Retry-After": str(retry)} if retry is not None else {}
            return self._reply(start_response, err.status, extra,
                               json.dumps(err.body(), ensure_ascii=False).encode())
        except UpstreamError as err:
            return self._reply(start_response, *chat_api.upstream_error(err))
        except Exception as exc:
            unavailable = transient(exc)
            if unavailable is None:
                raise
            return self._reply(start_response, 503,
                               {"Retry-After": str(unavailable.retry_after)},
                               json.dumps(unavailable.body()).encode())
        start_response("200 OK", [*chat_api.SSE_HEADERS.items(), *turn.headers.items()])
        return chat_api.sse(chunks)

    @staticmethod
    def _check_content_type(headers: dict[str, str]) -> None:
        """The content types every route accepts (Chalice answers others 415)."""
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind and kind not in ACCEPTED_TYPES:
            raise _UnsupportedMediaType(f"Unsupported media type: {kind}")

    def _body(self, environ: dict) -> bytes | None:
        """The request body, or None when it is over the limit (read no further than that:
        a chunked body has no length to check first)."""
        stream = environ["wsgi.input"]
        if environ.get("CONTENT_LENGTH"):
            length = int(environ["CONTENT_LENGTH"])
            return None if length > self.max_body_bytes else stream.read(length)
        body = stream.read(self.max_body_bytes + 1)
        return None if len(body) > self.max_body_bytes else body

    @staticmethod
    def _reply(start_response: Callable, status: int, headers: dict[str, str],
               body: bytes, *, head: bool = False) -> list[bytes]:
        """`head`: the answer to a HEAD, whose Content-Length (set by
        chalicelib.api.admission.finish) is the GET's."""
        length = next((v for k, v in headers.items() if k.lower() == "content-length"), None)
        headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
        headers.setdefault("Content-Type", "application/json")
        headers.setdefault("X-Content-Type-Options", "nosniff")
        reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        size = length if head and length is not None else str(len(body))
        start_response(f"{status} {reason}", [*headers.items(), ("Content-Length", size)])
        return [b""] if head else [body]


class _UnsupportedMediaType(AnnalsError):
    status, code = 415, "unsupported_media_type"

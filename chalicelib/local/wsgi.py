"""The Chalice app as a WSGI application, for a production HTTP server (waitress) locally.

Chalice's `LocalGateway` turns each request into the API Gateway event Lambda would receive
and calls the very `app` object Lambda runs, so routes, middleware and errors behave the same
here and on AWS. Around it this module adds what a long-running local service needs and API
Gateway gives on AWS:

- unknown routes answer 404 with the JSON error shape (LocalGateway mimics API Gateway's 403
  with a SigV4 message, which tells a client nothing useful);
- every request passes the process's traffic gate (chalicelib.usecases.traffic): recall and
  other reads first, at most a few writes at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

from chalice.config import Config
from chalice.local import ForbiddenError, LocalGateway

from chalicelib.ports import Traffic

READ_METHODS = {"GET", "HEAD", "OPTIONS"}
READ_SUFFIXES = ("/recall",)  # POST routes that only read


def is_read(method: str, path: str) -> bool:
    return method in READ_METHODS or path.rstrip("/").endswith(READ_SUFFIXES)


def error_body(status: int, code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


class ChaliceWSGI:
    def __init__(self, app: Any, traffic: Traffic, max_body_bytes: int):
        self.gateway = LocalGateway(app, Config(chalice_stage="local"))
        self.traffic = traffic
        self.max_body_bytes = max_body_bytes

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"].upper()
        path = environ.get("PATH_INFO") or "/"
        if environ.get("QUERY_STRING"):
            path = f"{path}?{environ['QUERY_STRING']}"
        headers = {key[5:].replace("_", "-").lower(): value
                   for key, value in environ.items() if key.startswith("HTTP_")}
        for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            if environ.get(key):
                headers[key.replace("_", "-").lower()] = environ[key]
        body = self._body(environ)
        if body is None:
            return self._reply(start_response, 413, {}, error_body(
                413, "payload_too_large", f"body is larger than {self.max_body_bytes} bytes"))
        gate = self.traffic.reading() if is_read(method, environ.get("PATH_INFO", "")) \
            else self.traffic.writing()
        with gate:
            try:
                response = self.gateway.handle_request(method, path, headers, body)
            except ForbiddenError:  # LocalGateway's "no such route"
                return self._reply(start_response, 404, {}, error_body(
                    404, "not_found", f"no route {method} {environ.get('PATH_INFO', '')}"))
        out = response.get("body") or b""
        if isinstance(out, str):
            out = out.encode()
        response_headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
        for key, values in (response.get("multiValueHeaders") or {}).items():
            response_headers[key] = ", ".join(str(v) for v in values)
        return self._reply(start_response, response["statusCode"], response_headers, out)

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
               body: bytes) -> list[bytes]:
        headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
        headers.setdefault("Content-Type", "application/json")
        reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        start_response(f"{status} {reason}", [*headers.items(),
                                              ("Content-Length", str(len(body)))])
        return [body]

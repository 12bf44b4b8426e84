"""HTTP for the chat gateway (chalicelib.usecases.gateway; docs/gateway.md), shared by the
Chalice routes in app.py (Lambda, chalice.test, and non-streamed requests of `annals
serve`) and by chalicelib.local.wsgi, which streams `"stream": true` requests itself
(Chalice buffers every response).

- JSON in, as every route: the same size limit, JSON checks and 400 / 413 / 422 errors.
- Server-sent events out when the request streams: `data: <chunk>` per chunk and
  `data: [DONE]` at the end; a stream that breaks after it began ends with
  `data: {"error": {...}}` (what the OpenAI SDKs raise on) and no [DONE].
- An upstream error keeps its status and body (OpenAI's error JSON passes through), with
  its Content-Type and Retry-After.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from chalice.app import Response

from chalicelib.api.http import json_response, parse_raw
from chalicelib.ports import Services, UpstreamError
from chalicelib.usecases import gateway as gateway_uc
from chalicelib.usecases.gateway import ChatCompletionRequest

log = logging.getLogger("annals.gateway")

SSE_TYPE = "text/event-stream; charset=utf-8"
SSE_HEADERS = {"Content-Type": SSE_TYPE, "Cache-Control": "no-cache",
               "X-Accel-Buffering": "no"}
DONE = b"data: [DONE]\n\n"


def parse_chat(raw: bytes | None) -> ChatCompletionRequest:
    """The request body, checked as every body is (chalicelib.api.http.parse_raw)."""
    return parse_raw(raw, ChatCompletionRequest)


def wants_stream(raw: bytes | None) -> bool:
    """Does this body ask for a stream? (False for anything unreadable: the route then
    answers it, with the same errors.)"""
    try:
        data = json.loads(raw or b"")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("stream") is True


def sse(chunks: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """Chunks as server-sent events. Closing this iterator early (a client gone) closes the
    chunks' iterator too, so the use-case stores nothing and the upstream is let go."""
    try:
        for chunk in chunks:
            yield b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n"
    except UpstreamError as err:
        log.warning("gateway stream broke: %s (%s)", err.status, err)
        yield b"data: " + json.dumps({"error": err.error_object()},
                                     ensure_ascii=False).encode("utf-8") + b"\n\n"
        return
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    yield DONE


def upstream_error(err: UpstreamError) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of an upstream error, as the upstream gave them."""
    headers = {"Content-Type": "application/json"}
    for key, value in err.headers.items():
        headers["-".join(part.capitalize() for part in key.split("-"))] = value
    return err.status, headers, err.body


# ------------------------------------------------------------------ the Chalice routes


def chat_response(services: Services, headers: Mapping[str, str],
                  body: ChatCompletionRequest) -> Response:
    """POST /v1/chat/completions through Chalice: JSON, or when the request streams the
    whole event stream in one body (API Gateway REST buffers responses)."""
    gateway_uc.upstream(services)  # 404 gateway_off before anything else
    space, window = gateway_uc.target(headers, body)
    turn = gateway_uc.prepare(services, space, window, body)
    try:
        if body.stream:
            events = b"".join(sse(gateway_uc.stream(services, turn)))
            return Response(body=events.decode("utf-8"), status_code=200,
                            headers={**SSE_HEADERS, **turn.headers})
        answer = gateway_uc.complete(services, turn)
    except UpstreamError as err:
        return _raw_response(*upstream_error(err))
    response = json_response(answer)
    response.headers.update(turn.headers)
    return response


def models_response(services: Services) -> Response:
    try:
        return json_response(gateway_uc.models(services))
    except UpstreamError as err:
        return _raw_response(*upstream_error(err))


def _raw_response(status: int, headers: dict[str, str], body: bytes) -> Response:
    return Response(body=body.decode("utf-8", "replace"), status_code=status, headers=headers)

"""POST /v1/spaces/{space}/mcp: MCP's streamable HTTP transport inside a Chalice route.

The SDK serves MCP over HTTP as an ASGI app; Chalice (on Lambda, behind waitress locally,
in chalice.test) hands a route one finished request and wants one response back. So each
request runs, on its own anyio event loop, through a fresh StreamableHTTPSessionManager in
the SDK's stateless mode with JSON responses (no sessions, no SSE, nothing kept between
requests — what a Lambda needs), fed the request body and collecting what the SDK sends.

Before the SDK sees it, the body is checked the way every Annals route checks its body
(size, JSON, depth, an object that is a JSON-RPC message): such mistakes answer 400/413/422
with the usual {"error": {...}} shape. Everything else is the SDK's answer, passed through:
200 with a JSON-RPC response (tool errors included), 202 for a notification, or a JSON-RPC
error body with the status the SDK chose for a protocol problem (e.g. an unsupported
MCP-Protocol-Version).

Authentication happened before this (app.py's middleware: the bearer key, read access to
the space); what the key may do with the tools is the MCP server's business
(chalicelib.mcp.server).
"""

from __future__ import annotations

from typing import Any

import anyio
from chalice.app import Request, Response
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.jsonrpc import jsonrpc_message_adapter
from pydantic import ValidationError

from chalicelib.api.http import MAX_BODY_BYTES, load_json
from chalicelib.domain.errors import BadRequest, PayloadTooLarge, validation_error
from chalicelib.mcp.caller import Caller, acting_as
from chalicelib.mcp.server import get_server
from chalicelib.ports import Services
from chalicelib.usecases.keys import KeyScope

JSON_TYPE = "application/json"
# Request headers the SDK reads (the MCP ones, Accept); never the bearer key.
DROPPED_HEADERS = {"authorization", "content-type", "content-length", "host", "cookie"}


def handle(services: Services, space: str, scope: KeyScope, request: Request) -> Response:
    """One MCP message in, the SDK's answer out."""
    body = checked_body(request.raw_body or b"")
    headers = sdk_headers(request.headers or {}, len(body))
    with acting_as(Caller(services=services, space=space, scope=scope)):
        status, out_headers, out = anyio.run(serve_one, headers, body)
    return Response(body=out.decode("utf-8") if out else "", status_code=status,
                    headers=out_headers)


def checked_body(raw: bytes) -> bytes:
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"body is larger than {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        raise BadRequest("a JSON-RPC message is required", code="missing_body")
    data = load_json(raw)
    if not isinstance(data, dict):
        raise BadRequest("the body must be one JSON-RPC message (an object; batches are not "
                         "part of MCP since 2025-06-18)", code="malformed_json")
    try:
        jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        raise validation_error(exc) from None
    return raw


def sdk_headers(headers: Any, length: int) -> list[tuple[bytes, bytes]]:
    """The ASGI headers for the SDK: the client's MCP headers, a JSON body, and an Accept
    that allows JSON (curl and plain HTTP clients often send none; JSON is all we answer)."""
    out = [(k.lower().encode("latin-1"), str(v).encode("latin-1"))
           for k, v in dict(headers).items() if k.lower() not in DROPPED_HEADERS]
    accept = next((v for k, v in out if k == b"accept"), b"").decode("latin-1")
    if "json" not in accept and "*/*" not in accept and "application/*" not in accept:
        out = [(k, v) for k, v in out if k != b"accept"]
        out.append((b"accept", f"{JSON_TYPE}, text/event-stream".encode()))
    out += [(b"content-type", JSON_TYPE.encode()), (b"content-length", str(length).encode()),
            (b"host", b"annals")]
    return out


async def serve_one(headers: list[tuple[bytes, bytes]],
                    body: bytes) -> tuple[int, dict[str, str], bytes]:
    """Run the SDK's stateless, JSON-response transport on one request."""
    manager = StreamableHTTPSessionManager(
        app=get_server()._lowlevel_server, stateless=True, json_response=True,
        max_request_body_size=MAX_BODY_BYTES)
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "https", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
        "root_path": "", "headers": headers, "server": ("annals", 443),
        "client": ("127.0.0.1", 0),
    }
    answered = anyio.Event()
    sent_body = False
    status = 500
    out_headers: dict[str, str] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # nothing more will come: the client "leaves" once answered
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            for key, value in message.get("headers", []):
                name = key.decode("latin-1").lower()
                if name != "content-length":
                    out_headers[name] = value.decode("latin-1")
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    answered.set()
    out_headers.setdefault("content-type", JSON_TYPE)
    return status, {_title(k): v for k, v in out_headers.items()}, b"".join(chunks)


def _title(name: str) -> str:
    return "-".join(part.capitalize() for part in name.split("-"))

"""A local OpenAI-compatible HTTP test double: `POST /v1/chat/completions` on 127.0.0.1.

It speaks the real wire format, so the official `openai` SDK talks to it unchanged:

    with ChatDouble() as llm:
        llm.reply_json({"events": []})            # scripted replies, served in order
        llm.reply_text("not json")                # invalid JSON
        llm.reply_error(429, retry_after_ms=1)    # a rate limit (the SDK retries it)
        llm.reply_json({...}, delay=2.0)          # a slow reply (for timeouts)
        llm.reply(lambda request: Reply(...))     # computed from the request
        llm.reply_text("Hello there", chunks=["Hel", "lo", " there"], chunk_delay=0.05)
        llm.reply_text("Hello there", cut_after=2)        # streamed: connection dropped
        llm.reply_text("Hello there", error_after=1)      # streamed: an error event
        OpenAI(base_url=llm.url, api_key="k")...
        llm.requests                              # every request body received, in order
        llm.served_usage                          # summed usage of the replies it sent
        llm.streams_left_early                    # streams whose client hung up

A request with `"stream": true` is answered with server-sent events (chunked transfer
encoding): a role chunk, the content in `chunks` (default: pieces of 4 characters), a chunk
with the finish_reason, a usage chunk when `stream_options.include_usage`, then
`data: [DONE]`. `GET /v1/models` lists `models`.

Requests are validated like the real endpoint: a Bearer key, JSON body, a non-empty `model`,
non-empty `messages` of {role, content}, a known `response_format` type. A bad request gets
400 with OpenAI's error body; no scripted reply left gets 500.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROLES = {"system", "user", "assistant", "tool", "developer"}
FORMATS = {"text", "json_object", "json_schema"}


@dataclass
class Reply:
    content: str | None = None  # the assistant message (None with an error status)
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering
    prompt_tokens: int | None = None  # default: characters of the prompt / 4
    completion_tokens: int | None = None  # default: characters of the content / 4
    headers: dict[str, str] = field(default_factory=dict)
    error: str = ""
    # streamed replies ("stream": true)
    chunks: list[str] | None = None  # the content in these pieces (default: 4 characters each)
    chunk_delay: float = 0.0  # seconds between chunks
    cut_after: int | None = None  # drop the connection after this many content chunks
    error_after: int | None = None  # send an error event after this many content chunks
    finish_reason: str = "stop"

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        content = self.content or ""
        return [content[i:i + 4] for i in range(0, len(content), 4)]


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def prompt_text(body: dict) -> str:
    parts = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


def validate_request(body: Any) -> str | None:
    """Why the request is invalid, or None."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            return f"messages[{i}].role must be one of {sorted(ROLES)}"
        if not isinstance(m.get("content"), str | list):
            return f"messages[{i}].content must be a string or an array"
    fmt = body.get("response_format")
    if fmt is not None and (not isinstance(fmt, dict) or fmt.get("type") not in FORMATS):
        return "response_format.type must be one of text, json_object, json_schema"
    if fmt and fmt.get("type") == "json_object" and "json" not in prompt_text(body).lower():
        return "'messages' must contain the word 'json' to use response_format json_object"
    return None


class ChatDouble:
    def __init__(self, model_check: Callable[[str], bool] | None = None,
                 models: tuple[str, ...] = ("double-model",)):
        self.models = list(models)
        self.streams_left_early = 0
        self._queue: deque[Reply | Callable[[dict], Reply]] = deque()
        self._lock = threading.Lock()
        self.requests: list[dict] = []  # valid request bodies, in arrival order
        self.rejected: list[tuple[int, str]] = []  # (status, reason) of refused requests
        self.served: list[dict] = []  # usage of every 200 reply sent
        self.model_check = model_check
        self._server: ThreadingHTTPServer | None = None

    # ---------------------------------------------------------------- scripting
    def reply(self, *replies: Reply | Callable[[dict], Reply]) -> ChatDouble:
        with self._lock:
            self._queue.extend(replies)
        return self

    def reply_json(self, obj: Any, **kw) -> ChatDouble:
        return self.reply(Reply(content=json.dumps(obj, ensure_ascii=False), **kw))

    def reply_text(self, text: str, **kw) -> ChatDouble:
        return self.reply(Reply(content=text, **kw))

    def reply_error(self, status: int, message: str = "", *, retry_after_ms: int | None = None,
                    **kw) -> ChatDouble:
        headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
        return self.reply(Reply(status=status, error=message or f"scripted {status}",
                                headers=headers, **kw))

    @property
    def pending(self) -> int:
        return len(self._queue)

    @property
    def served_usage(self) -> dict[str, int]:
        return {k: sum(u[k] for u in self.served)
                for k in ("prompt_tokens", "completion_tokens", "total_tokens")}

    # ---------------------------------------------------------------- server
    @property
    def url(self) -> str:
        assert self._server is not None, "start the double first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ChatDouble:
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                double._handle(self)

            def do_GET(self):
                if self.path.rstrip("/") == "/v1/models":
                    return double._send(self, 200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "double"}
                        for m in double.models]})
                double._send(self, 404, {"error": {"message": "not found", "type":
                                                   "invalid_request_error"}})

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a client that hung up
                import sys

                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ChatDouble:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---------------------------------------------------------------- handling
    def _reject(self, h: BaseHTTPRequestHandler, status: int, message: str,
                kind: str = "invalid_request_error") -> None:
        self.rejected.append((status, message))
        self._send(h, status, {"error": {"message": message, "type": kind, "param": None,
                                         "code": None}})

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        if h.path.rstrip("/") != "/v1/chat/completions":
            return self._reject(h, 404, f"unknown path {h.path}")
        auth = h.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            return self._reject(h, 401, "missing bearer API key", "authentication_error")
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            return self._reject(h, 400, "the body is not valid JSON")
        problem = validate_request(body)
        if problem is None and self.model_check and not self.model_check(body["model"]):
            problem = f"the model {body['model']!r} does not exist"
        if problem:
            return self._reject(h, 400, problem)
        with self._lock:
            self.requests.append(body)
            item = self._queue.popleft() if self._queue else None
        if item is None:
            return self._reject(h, 500, "the double has no scripted reply left", "server_error")
        reply = item(body) if callable(item) else item
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status != 200:
            kind = "rate_limit_error" if reply.status == 429 else "server_error"
            self.rejected.append((reply.status, reply.error))
            return self._send(h, reply.status, {"error": {
                "message": reply.error, "type": kind, "param": None, "code": None}},
                reply.headers)
        content = reply.content or ""
        if body.get("stream") is True:
            return self._stream(h, body, reply)
        usage = {
            "prompt_tokens": reply.prompt_tokens if reply.prompt_tokens is not None
            else estimate_tokens(prompt_text(body)),
            "completion_tokens": reply.completion_tokens if reply.completion_tokens is not None
            else estimate_tokens(content),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        with self._lock:
            self.served.append(usage)
        self._send(h, 200, {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                                                 "refusal": None},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": usage,
            "system_fingerprint": "fp_double",
        }, reply.headers)

    def _stream(self, h: BaseHTTPRequestHandler, body: dict, reply: Reply) -> None:
        """Server-sent events, one HTTP chunk each, as OpenAI streams them."""
        ident, created = "chatcmpl-" + uuid.uuid4().hex[:24], int(time.time())

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {"id": ident, "object": "chat.completion.chunk", "created": created,
                    "model": body["model"], "system_fingerprint": "fp_double",
                    "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                 "finish_reason": finish}]}

        def event(payload: dict | str) -> bytes:
            data = payload if isinstance(payload, str) else json.dumps(payload,
                                                                      ensure_ascii=False)
            raw = f"data: {data}\n\n".encode()
            return f"{len(raw):x}\r\n".encode() + raw + b"\r\n"

        try:
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream; charset=utf-8")
            h.send_header("Transfer-Encoding", "chunked")
            for k, v in reply.headers.items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(event(chunk({"role": "assistant", "content": ""})))
            pieces = reply.pieces()
            for index, piece in enumerate(pieces):
                if reply.cut_after is not None and index >= reply.cut_after:
                    h.close_connection = True  # no closing chunk: a broken stream
                    return
                if reply.error_after is not None and index >= reply.error_after:
                    h.wfile.write(event({"error": {"message": reply.error or "stream failed",
                                                   "type": "server_error", "param": None,
                                                   "code": None}}))
                    h.wfile.write(b"0\r\n\r\n")
                    return
                if reply.chunk_delay:
                    time.sleep(reply.chunk_delay)
                h.wfile.write(event(chunk({"content": piece})))
            h.wfile.write(event(chunk({}, reply.finish_reason)))
            usage = {"prompt_tokens": estimate_tokens(prompt_text(body)),
                     "completion_tokens": estimate_tokens(reply.content or "")}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            if (body.get("stream_options") or {}).get("include_usage"):
                h.wfile.write(event({**chunk({}), "choices": [], "usage": usage}))
            h.wfile.write(event("[DONE]"))
            h.wfile.write(b"0\r\n\r\n")
            with self._lock:
                self.served.append(usage)
        except (BrokenPipeError, ConnectionResetError):  # the client hung up
            with self._lock:
                self.streams_left_early += 1
            h.close_connection = True

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, payload: dict,
              headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            pass

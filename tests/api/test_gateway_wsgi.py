"""The local server's streaming path (chalicelib.local.wsgi) in-process: what `annals serve`
runs for `"stream": true`, called as waitress calls a WSGI app. The e2e suite drives it over
real sockets (tests/e2e/test_gateway_serve.py); here its answers are checked one by one."""

from __future__ import annotations

import io
import json
import time
from wsgiref.util import setup_testing_defaults

import pytest

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.local.wsgi import ChaliceWSGI
from chalicelib.usecases.traffic import PriorityGate
from tests.api.test_gateway import (
    QUESTION,
    SPACE,
    conversation,
    delivered,
    remember,
    stored,
)
from tests.conftest import API_KEY


def call(wsgi, body: dict | bytes, *, key: str = API_KEY, content_type="application/json",
         **headers):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/v1/chat/completions",
               "REQUEST_URI": "/v1/chat/completions", "QUERY_STRING": "",
               "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw)),
               "CONTENT_TYPE": content_type, "HTTP_AUTHORIZATION": f"Bearer {key}",
               **{f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}}
    setup_testing_defaults(environ)
    seen = {}

    def start_response(status, response_headers):
        seen.update(status=int(status.split()[0]), headers=dict(response_headers))

    out = wsgi(environ, start_response)
    return seen, out


@pytest.fixture
def wsgi(gateway):
    from app import app

    return ChaliceWSGI(app, MAX_BODY_BYTES)


def events(out) -> list[str]:
    return [e for e in b"".join(out).decode().split("\n\n") if e]


def test_chunks_leave_as_they_arrive_and_the_turn_is_kept_before_done(wsgi, gateway, double):
    ref = remember(gateway)
    double.reply_text("abcdef", chunks=["ab", "cd", "ef"], chunk_delay=0.2)
    seen, out = call(wsgi, {"model": "m", "messages": conversation(), "stream": True},
                     **{"X-Annals-Space": SPACE, "X-Annals-Window": "w1"})
    started = time.monotonic()  # the upstream has answered its headers, not its content
    assert seen["status"] == 200 and seen["headers"]["Content-Type"].startswith(
        "text/event-stream")
    assert seen["headers"]["X-Annals-Memory"] == "hit" and "Content-Length" not in seen["headers"]
    out = iter(out)
    first = next(out)  # the role chunk, before the upstream has said anything more
    assert time.monotonic() - started < 0.15 and b'"role": "assistant"' in first
    rest = list(out)
    assert time.monotonic() - started > 0.5  # the content came later, 0.2 s a piece
    assert rest[-1] == b"data: [DONE]\n\n"
    pieces = [json.loads(e[6:])["choices"][0]["delta"].get("content")
              for e in (c.decode().strip() for c in rest[:-1])]
    assert "".join(p for p in pieces if p) == "abcdef"
    assert stored(gateway) == [(1, "user", QUESTION), (2, "assistant", "abcdef")]
    assert delivered(gateway) == [ref]


def test_a_stream_closed_early_keeps_nothing_and_lets_the_upstream_go(wsgi, gateway, double):
    remember(gateway)
    double.reply_text("x" * 40, chunks=["x"] * 40, chunk_delay=0.02)
    seen, out = call(wsgi, {"model": "m", "messages": conversation(), "stream": True},
                     **{"X-Annals-Space": SPACE})
    assert seen["status"] == 200
    out = iter(out)
    next(out), next(out)
    out.close()  # what waitress does when the client is gone
    deadline = time.monotonic() + 5
    while double.streams_left_early == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert double.streams_left_early == 1
    assert stored(gateway, "default") == [] and delivered(gateway, "default") == []


def test_refusals_before_the_stream_are_json_as_on_every_route(wsgi, gateway, double):
    body = {"model": "m", "messages": conversation(), "stream": True}
    seen, out = call(wsgi, body, key="nope")
    assert seen["status"] == 401 and json.loads(b"".join(out))["error"]["code"] == "unauthorized"
    seen, out = call(wsgi, body, content_type="application/xml")
    assert seen["status"] == 415
    assert json.loads(b"".join(out))["error"]["code"] == "unsupported_media_type"
    seen, out = call(wsgi, {"stream": True, "messages": []})
    assert seen["status"] == 422
    seen, out = call(wsgi, body, **{"X-Annals-Window": "no spaces"})
    assert seen["status"] == 400 and json.loads(b"".join(out))["error"]["code"] == \
        "invalid_window"
    double.reply_error(429, "slow down", retry_after_ms=10)
    seen, out = call(wsgi, body)
    assert seen["status"] == 429 and seen["headers"]["Retry-After-Ms"] == "10"
    assert json.loads(b"".join(out))["error"]["message"] == "slow down"
    gateway.chat = None
    seen, out = call(wsgi, body)
    assert seen["status"] == 404 and json.loads(b"".join(out))["error"]["code"] == "gateway_off"
    assert stored(gateway, "default") == []


def test_a_broken_stream_ends_with_an_error_event(wsgi, gateway, double):
    double.reply_text("abcdef", chunks=["ab", "cd", "ef"], cut_after=1)
    seen, out = call(wsgi, {"model": "m", "messages": conversation(), "stream": True})
    assert seen["status"] == 200
    last = events(out)[-1]
    assert json.loads(last[6:])["error"]["code"] == "upstream_stream_broken"
    assert stored(gateway, "default") == []


def test_the_gateway_holds_no_write_slot_while_the_model_answers(gateway, double):
    """Two slow completions at once, with a gate of one writer: neither waits for the other's
    upstream call (each takes a write turn only to store its turn)."""
    import threading

    from app import app

    wsgi = ChaliceWSGI(app, MAX_BODY_BYTES)
    gateway.traffic = PriorityGate(max_writers=1)
    double.reply_text("one", delay=0.6).reply_text("two", delay=0.6)
    results = []

    def run(window: str, stream: bool):
        seen, out = call(wsgi, {"model": "m", "messages": conversation(), "stream": stream},
                         **{"X-Annals-Window": window})
        b"".join(out)
        results.append(seen["status"])

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(f"w{i}", i == 0)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [200, 200]
    assert time.monotonic() - started < 1.1  # in parallel, not 1.2 s one after the other
    assert len(stored(gateway, "w0", "default")) == len(stored(gateway, "w1", "default")) == 2

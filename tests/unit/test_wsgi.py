"""The local server's WSGI adapter: paths reach the app as the client sent them."""

from __future__ import annotations

import io
import json
from wsgiref.util import setup_testing_defaults

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.local.wsgi import ChaliceWSGI
from tests.conftest import AUTH


def call(wsgi, method, uri, body=b""):
    path, _, query = uri.partition("?")
    from urllib.parse import unquote

    environ = {"REQUEST_METHOD": method, "PATH_INFO": unquote(path), "QUERY_STRING": query,
               "REQUEST_URI": uri, "wsgi.input": io.BytesIO(body),
               "CONTENT_LENGTH": str(len(body)),
               **{f"HTTP_{k.upper().replace('-', '_')}": v for k, v in AUTH.items()}}
    setup_testing_defaults(environ)
    seen = {}
    out = b"".join(wsgi(environ, lambda status, headers: seen.update(status=status)))
    return int(seen["status"].split()[0]), json.loads(out)


def test_an_encoded_hash_or_question_mark_stays_inside_its_segment(services):
    from app import app
    from chalicelib.domain.models import SaveEventRequest
    from chalicelib.usecases.events import save_event

    event = save_event(services, "sp", SaveEventRequest(summary="奶糖体检"))
    wsgi = ChaliceWSGI(app, MAX_BODY_BYTES)
    assert call(wsgi, "GET", f"/v1/spaces/sp/events/{event.id}")[0] == 200
    for junk in ("%23junk", "%3Fx=1", "%3Bx", "%2Fhistory"):
        status, body = call(wsgi, "DELETE", f"/v1/spaces/sp/events/{event.id}{junk}")
        assert status in (400, 404), (junk, status, body)
    assert services.store.get_event("sp", event.id).status == "active"  # nothing archived
    status, body = call(wsgi, "GET", "/v1/spaces/f%23z/stats")
    assert status == 400 and body["error"]["code"] == "invalid_space"
    status, body = call(wsgi, "GET", "/v1/spaces/sp/events?limit=2")
    assert status == 200 and "events" in body

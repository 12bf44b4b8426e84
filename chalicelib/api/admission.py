"""What every API request passes on its way in and out, on Lambda and `annals serve` alike
(app.authenticate; the streamed chat in chalicelib.local.wsgi takes `admitted` too):

in:  the key's limits (chalicelib.usecases.limits: 429 over one, at once, holding nothing)
     → the traffic gate (chalicelib.usecases.traffic: recalls first, a few writes at once;
     not for the chat gateway, whose use-case takes its own turns) → the request's deadline
     (chalicelib.domain.deadline: its work stops after ANNALS_REQUEST_SECONDS, 503).
     The limits come before the gate, so a refused request never waits in it; the public
     paths (/v1/health, the web app's files) take none of them: nothing queues them.
out: `X-Content-Type-Options: nosniff` on every answer, `Cache-Control: no-store` on the
     API's (a memory is private: no proxy or browser cache keeps it), and a HEAD answered
     as the GET it stands for, without the body.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING

from chalicelib.api.auth import required_access
from chalicelib.api.paths import GATEWAY_PATHS
from chalicelib.domain.deadline import deadline_scope

if TYPE_CHECKING:  # types only: `import app` loads no use-case (a cold start pays per route)
    from chalice.app import Response

    from chalicelib.ports import Services
    from chalicelib.usecases.keys import KeyScope

BOOTSTRAP_KEY = "bootstrap"  # the limits' name for the bootstrap admin key (no key id)


def key_name(scope: KeyScope) -> str:
    return scope.key_id or BOOTSTRAP_KEY


@contextmanager
def admitted(services: Services, scope: KeyScope, method: str, path: str,
             space: str | None) -> Iterator[None]:
    """The limits, the gate and the deadline, in that order, around one request."""
    traffic = services.traffic
    read = required_access(method, path) == "read"
    if path in GATEWAY_PATHS:
        gate = nullcontext()
    else:
        gate = traffic.reading(key_name(scope)) if read else traffic.writing()
    with services.limits.admit(key_name(scope), space, write=not read), gate, \
            deadline_scope(services.settings.request_seconds):
        yield


def finish(response: Response, method: str, path: str) -> Response:
    """The headers every answer carries; a HEAD's body dropped (its length kept)."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    if path.startswith("/v1/"):
        response.headers["Cache-Control"] = "no-store"
    if method.upper() == "HEAD":
        body = response.body
        if isinstance(body, str | bytes):
            response.headers["Content-Length"] = str(len(
                body.encode() if isinstance(body, str) else body))
        response.body = ""
    return response

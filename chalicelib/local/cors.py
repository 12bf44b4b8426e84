"""CORS for browser hosts (`ANNALS_CORS_ORIGINS`): the SillyTavern extension runs on
SillyTavern's own origin (http://127.0.0.1:8000) and calls Annals from the user's browser.

Only the origins the user lists are answered, nothing by default. A preflight (`OPTIONS` with
`Access-Control-Request-Method`) from a listed origin answers 204 with the methods and the
headers Annals reads, before any key check (a browser sends no Authorization on a preflight);
from another origin, 403 `cors_origin_not_allowed`. Every other answer to a listed origin
carries `Access-Control-Allow-Origin` (that origin, never `*`: answers are private) and
exposes the headers a host reads (the gateway's `X-Annals-*`, `Location`,
`Retry-After`). Keys travel
as bearer tokens, never cookies: no `Allow-Credentials`.

Written as a small WSGI wrapper rather than taken from a library: Chalice's CORSConfig takes
one fixed origin per route at import time, and the streamed chat is served outside Chalice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from chalicelib.api.cors import EXPOSED, HEADERS, MAX_AGE, METHODS


class CORS:
    def __init__(self, app: Callable, origins: frozenset[str]):
        self.app = app
        self.origins = origins

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        origin = environ.get("HTTP_ORIGIN")
        if not origin or not self.origins:
            return self.app(environ, start_response)
        allowed = origin.rstrip("/").lower() in self.origins
        if environ["REQUEST_METHOD"].upper() == "OPTIONS" and environ.get(
                "HTTP_ACCESS_CONTROL_REQUEST_METHOD"):
            return self._preflight(origin, allowed, start_response)
        if not allowed:
            return self.app(environ, start_response)

        def with_cors(status: str, headers: list[tuple[str, str]], *exc_info):
            headers = [*headers, ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                       ("Access-Control-Expose-Headers", EXPOSED)]
            return start_response(status, headers, *exc_info)

        return self.app(environ, with_cors)

    @staticmethod
    def _preflight(origin: str, allowed: bool, start_response: Callable) -> list[bytes]:
        if not allowed:
            body = json.dumps({"error": {
                "code": "cors_origin_not_allowed",
                "message": f"origin {origin} is not in ANNALS_CORS_ORIGINS"}}).encode()
            start_response("403 Forbidden", [("Content-Type", "application/json"),
                                             ("Content-Length", str(len(body))),
                                             ("Vary", "Origin")])
            return [body]
        start_response("204 No Content", [
            ("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
            ("Access-Control-Allow-Methods", METHODS),
            ("Access-Control-Allow-Headers", HEADERS),
            ("Access-Control-Max-Age", str(MAX_AGE)), ("Content-Length", "0")])
        return [b""]

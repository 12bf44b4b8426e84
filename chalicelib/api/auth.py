"""Bearer-key auth for every route but the public ones, and what each key may do there.

Who: the bootstrap admin key (ANNALS_API_KEY; on AWS the stack's Secrets Manager secret, its
AWSCURRENT and AWSPREVIOUS values; locally the key file in the data dir), or a key created with
`annals keys create` / POST /v1/keys (chalicelib.usecases.keys). What: a request reads (GET,
HEAD, OPTIONS, POST …/recall, …/hook/recall and …/mcp) or writes (everything else) one space, or
manages keys (/v1/keys, admin only). 401 for a missing, unknown or revoked key; 403 "forbidden" for a key
outside its scope. The scope of the request is a context variable, set for the request only.
"""

from __future__ import annotations

import contextvars
import hmac
import os
import secrets
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from chalicelib.api.paths import CHAT_PATH
from chalicelib.domain.errors import AnnalsError, Unauthorized

if TYPE_CHECKING:  # types only: `import app` loads no use-case (a cold start pays per route)
    from chalicelib.config import Settings
    from chalicelib.ports import Services
    from chalicelib.usecases.keys import Access, KeyScope

READ_METHODS = {"GET", "HEAD", "OPTIONS"}
READ_SUFFIXES = ("/recall", "/hook/recall")  # POST routes that only read
# POST …/mcp is a read at the door: the MCP server refuses write tools to a read key
# (chalicelib.mcp.server), so a read key may list and call the read tools.
READ_SUFFIXES += ("/mcp",)
# GET …/reading hands out reading tasks: it takes leases, so it needs a write key
WRITE_GET_SUFFIXES = ("/reading",)
ADMIN_PREFIX = "/v1/keys"
# The chat gateway (docs/gateway.md) names its space in a header, not in the path; it stores
# the turn, so it writes there. GET /v1/models names no space: any valid key.
HEADER_SPACE_PATHS = {CHAT_PATH}
SPACE_HEADER = "x-annals-space"
DEFAULT_HEADER_SPACE = "default"


class Forbidden(AnnalsError):
    status, code = 403, "forbidden"


def resolve_api_key(settings: Settings, announce: bool = True) -> str:
    """ANNALS_API_KEY if set; in AWS the secret the stack generated (ANNALS_API_KEY_SECRET);
    locally the key kept in the data dir, else a new one, written there (owner-only
    permissions) and printed once so the operator can copy it."""
    if settings.api_key:
        return settings.api_key
    if settings.backend == "aws":
        return key_from_secret(settings)
    path: Path = settings.key_path
    if path.exists():
        kept = path.read_text().strip()
        if kept:
            return kept
        path.unlink()  # an empty file is a crash between create and write: start over
    key = "ak_" + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race; use its key
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    if announce:
        print(f"Annals: generated an API key (kept in {path}):\n  {key}", file=sys.stderr)
    return key


def key_from_secret(settings: Settings) -> str:
    """The API key stored as a plain secret string in Secrets Manager."""
    if not settings.api_key_secret:
        raise RuntimeError("ANNALS_BACKEND=aws needs ANNALS_API_KEY_SECRET or ANNALS_API_KEY")
    from chalicelib.adapters.secrets import read_secret

    return read_secret(settings.api_key_secret, region=settings.region)


def admin_keys(settings: Settings) -> tuple[str, ...]:
    """The bootstrap admin key(s) in force: ANNALS_API_KEY; on AWS both the current and the
    previous value of the stack's secret (so rotating it cuts no client off; a warm container
    sees a rotation within AWS_CACHE_SECONDS); locally the data dir's key file."""
    if settings.api_key or settings.backend != "aws":
        return (resolve_api_key(settings),)
    if not settings.api_key_secret:
        raise RuntimeError("ANNALS_BACKEND=aws needs ANNALS_API_KEY_SECRET or ANNALS_API_KEY")
    from chalicelib.adapters.secrets import read_secret_stages
    from chalicelib.usecases.keys import AWS_CACHE_SECONDS

    return read_secret_stages(settings.api_key_secret, region=settings.region,
                              max_age=AWS_CACHE_SECONDS)


def bearer_token(header: str | None) -> str:
    if not header:
        raise Unauthorized("missing Authorization: Bearer <key> header")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization must be 'Bearer <key>'")
    return token.strip()


def _same(token: str, key: str) -> bool:
    # compare_digest: the time taken does not reveal how much of the key matched.
    return hmac.compare_digest(token.encode("utf-8", "surrogatepass"),
                               key.encode("utf-8", "surrogatepass"))


def check_bearer(header: str | None, key: str) -> None:
    if not _same(bearer_token(header), key):
        raise Unauthorized("invalid API key")


def identify(services: Services, header: str | None) -> KeyScope:
    """The scope of the request's key; Unauthorized for a missing, unknown or revoked key."""
    # loaded at the first request, not at `import app`: a cold start pays per route it serves
    from chalicelib.usecases.keys import AWS_CACHE_SECONDS, BOOTSTRAP_ADMIN, verify_key

    token = bearer_token(header)
    # Every bootstrap key is compared (no early exit), each in constant time.
    matches = [_same(token, key) for key in admin_keys(services.settings) if key]
    if any(matches):
        return BOOTSTRAP_ADMIN
    cache = AWS_CACHE_SECONDS if services.settings.backend == "aws" else 0.0
    scope = verify_key(services, token, cache_seconds=cache)
    if scope is None:
        raise Unauthorized("invalid API key")
    return scope


def required_access(method: str, path: str) -> Access:
    """What a route needs: key management is admin; reads are GET/HEAD/OPTIONS and
    POST …/recall, …/hook/recall and …/mcp; everything else writes. `path` is the route (e.g.
    /v1/spaces/{space}/recall)."""
    if path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/"):
        return "admin"
    if path in HEADER_SPACE_PATHS or path.rstrip("/").endswith(WRITE_GET_SUFFIXES):
        return "write"
    if method.upper() in READ_METHODS or path.rstrip("/").endswith(READ_SUFFIXES):
        return "read"
    return "write"


def request_space(path: str, uri_params: Mapping[str, str] | None,
                  headers: Mapping[str, str] | None = None) -> str | None:
    """The space a request acts on: the {space} of its path, or for the chat gateway the
    X-Annals-Space header ("default" when absent)."""
    if path in HEADER_SPACE_PATHS:
        return ((headers or {}).get(SPACE_HEADER) or "").strip() or DEFAULT_HEADER_SPACE
    return (uri_params or {}).get("space")


def authorize(services: Services, method: str, path: str, uri_params: Mapping[str, str] | None,
              header: str | None, headers: Mapping[str, str] | None = None) -> KeyScope:
    """Who is calling and whether they may: the key's scope, or Unauthorized / Forbidden.
    `headers` (lower-case names, or a case-insensitive mapping) name the space of the routes
    that take it from a header (HEADER_SPACE_PATHS)."""
    scope = identify(services, header)
    access = required_access(method, path)
    space = request_space(path, uri_params, headers)
    if not scope.allows(access, space):
        if access == "admin":
            raise Forbidden("managing API keys needs an admin key")
        if not scope.allows(scope.access, space):
            raise Forbidden(f"this key may not use space {space!r}")
        raise Forbidden(f"this key may only {scope.access}; {method.upper()} {path} writes")
    return scope


_scope: contextvars.ContextVar[KeyScope | None] = contextvars.ContextVar(
    "annals_key_scope", default=None)


@contextmanager
def request_scope(scope: KeyScope) -> Iterator[KeyScope]:
    """Make `scope` the current request's for the block (and only for it)."""
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def current_scope() -> KeyScope:
    """The scope of the request being served; Unauthorized outside an authorised request."""
    scope = _scope.get()
    if scope is None:
        raise Unauthorized("no authorised key for this request")
    return scope

"""`annals mcp --space S`: the MCP server over stdio, for desktop clients (Claude Desktop,
Cursor, Cherry Studio …) that start it as a subprocess.

It works on the local data dir (ANNALS_DATA_DIR, embedded stores) of the user who starts it,
so by default it acts with admin rights on its one space: whoever can run it can read the
files anyway. Given a key (`--key`, or ANNALS_MCP_KEY), it acts with that key's scope
instead: a read key lists and calls only the read tools, and a key that does not cover the
space is refused at start. stdout carries the protocol and nothing else.
"""

from __future__ import annotations

import threading

import anyio

from chalicelib.api.auth import Forbidden, identify
from chalicelib.mcp.caller import Caller, acting_as
from chalicelib.mcp.server import get_server
from chalicelib.ports import Services
from chalicelib.usecases.keys import BOOTSTRAP_ADMIN, KeyScope


def scope_for(services: Services, space: str, key: str | None) -> KeyScope:
    """Admin without a key; else the key's scope, which must cover `space` (Unauthorized for
    an unknown or revoked key, Forbidden for one outside the space)."""
    if not key:
        return BOOTSTRAP_ADMIN
    scope = identify(services, f"Bearer {key}")
    if not scope.allows("read", space):
        raise Forbidden(f"this key may not use space {space!r}")
    return scope


def run_stdio(services: Services, space: str, scope: KeyScope) -> None:
    """Serve MCP on stdin/stdout until the client closes them."""
    server = get_server()
    # Load the embedding model while the client starts up, so the first recall does not wait.
    threading.Thread(target=services.embedder.embed_query, args=("warm up",),
                     daemon=True).start()
    with acting_as(Caller(services=services, space=space, scope=scope)):
        anyio.run(server.run_stdio_async)

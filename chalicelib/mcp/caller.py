"""Who is calling the MCP server, on which space, with what rights.

Set once per HTTP request (chalicelib.mcp.http) or once per `annals mcp` process
(chalicelib.mcp.stdio) as a context variable: the SDK runs each tool in a task or worker
thread that inherits it, so a tool reads the caller with `current_caller()`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from chalicelib.ports import Services
from chalicelib.usecases.keys import KeyScope


@dataclass(frozen=True)
class Caller:
    services: Services
    space: str
    scope: KeyScope

    @property
    def may_write(self) -> bool:
        return self.scope.allows("write", self.space)

    @property
    def may_read(self) -> bool:
        return self.scope.allows("read", self.space)


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "annals_mcp_caller", default=None)


@contextmanager
def acting_as(caller: Caller) -> Iterator[Caller]:
    """Make `caller` the current one for the block (and what it starts)."""
    token = _caller.set(caller)
    try:
        yield caller
    finally:
        _caller.reset(token)


def current_caller() -> Caller:
    caller = _caller.get()
    if caller is None:
        raise RuntimeError("no MCP caller: run the server through chalicelib.mcp.http or .stdio")
    return caller

"""The MCP server: the official SDK's MCPServer with Annals' tools and resource, and the
caller's key applied.

- tools/list shows a key only what it may call: a read key sees recall_memory, read_memory
  and timeline; a write (or admin) key all seven;
- tools/call of a write tool with a read key is refused with a JSON-RPC error (code -32602,
  data.code "forbidden"), before the tool runs; the tools check again themselves;
- resources: annals://{space}/timeline.md, the Markdown chronicle of the caller's space.

One server object serves every request and thread: who is calling is a context variable
(chalicelib.mcp.caller), not state of the server.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ToolAnnotations
from mcp_types import Resource as MCPResource
from mcp_types import Tool as MCPTool

from chalicelib import __version__
from chalicelib.mcp import tools
from chalicelib.mcp.caller import current_caller

NAME = "annals"
INSTRUCTIONS = (
    "Annals is the user's long-term memory: a dated chronicle of events drawn from past "
    "chats (each cites the messages it came from). Before you answer a message that refers "
    "to the past or names a time (\"还记得奶糖体检吗\", \"上周二我说了什么\", \"what did I "
    "book last month?\"), call recall_memory with the user's words. Use only what it "
    "returns; when the verdict is \"forgot\" or \"none\", say you do not remember rather "
    "than guess (\"cooled\": it was given in this chat lately, use that). Report the "
    "cards you used with report_delivery. When the user tells you "
    "something worth keeping (\"记住我对花生过敏\"), save_memory; correct a wrong memory "
    "with edit_memory (read_memory gives its version) and remove one with forget_memory "
    "(it is archived, never deleted). timeline lists what happened between two dates."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
ANNOTATIONS = {
    "recall_memory": ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                     idempotent_hint=False, open_world_hint=False),
    "read_memory": READ_ONLY,
    "timeline": READ_ONLY,
    "find_thread": READ_ONLY,
    "read_thread_materials": READ_ONLY,
    "read_profile": READ_ONLY,
    "save_memory": ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                   idempotent_hint=False, open_world_hint=False),
    "edit_memory": ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                   idempotent_hint=True, open_world_hint=False),
    "forget_memory": ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                     idempotent_hint=True, open_world_hint=False),
    "report_delivery": ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                       idempotent_hint=True, open_world_hint=False),
}
TITLES = {
    "recall_memory": "Recall memories", "read_memory": "Read memories",
    "timeline": "Timeline", "find_thread": "Find a thread",
    "read_thread_materials": "Read a thread's materials", "read_profile": "Read a profile",
    "save_memory": "Save a memory", "edit_memory": "Edit a memory",
    "forget_memory": "Forget a memory", "report_delivery": "Report used memories",
}


class AnnalsMCP(MCPServer):
    """MCPServer with the caller's scope applied to listing and calling tools."""

    async def list_tools(self) -> list[MCPTool]:
        listed = await super().list_tools()
        if current_caller().may_write:
            return listed
        return [t for t in listed if t.name not in tools.WRITE_TOOLS]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        caller = current_caller()
        if name in tools.WRITE_TOOLS and not caller.may_write:
            raise MCPError(code=INVALID_PARAMS,
                           message=f"forbidden: this key may only read space "
                                   f"{caller.space!r}; {name} writes",
                           data={"code": "forbidden", "tool": name, "space": caller.space})
        return await super().call_tool(name, arguments, context)

    async def list_resources(self) -> list[MCPResource]:
        space = current_caller().space
        return [MCPResource(
            uri=tools.timeline_uri(space), name="timeline.md",
            title=f"Timeline of {space}", mime_type="text/markdown",
            description="The chronicle of this space as Markdown: a summary line, the key "
                        "events, then every memory by month (├─ 2026-06-14 …).")]


@functools.cache
def get_server() -> AnnalsMCP:
    """The one server of this process (tools, schemas and handlers built once)."""
    with root_logging_kept():  # MCPServer calls logging.basicConfig: not its call to make here
        server = AnnalsMCP(NAME, title="Annals", version=__version__, instructions=INSTRUCTIONS,
                           description="Long-term memory for AI chat: recall, read, save, "
                                       "edit and forget dated memories.",
                           subscriptions=False, log_level="WARNING")
    for name, fn in tools.TOOLS.items():
        server.add_tool(fn, name=name, title=TITLES[name], description=tools.DESCRIPTIONS[name],
                        annotations=ANNOTATIONS[name])
    server.resource(tools.TIMELINE_URI, name="timeline.md", title="Timeline (Markdown)",
                    mime_type="text/markdown",
                    description="The chronicle of the space as Markdown, oldest first.",
                    # A space id is no file path ("a:b" is not drive a:); the function serves
                    # the caller's own space and nothing else.
                    security=ResourceSecurity(exempt_params={"space"}),
                    )(tools.timeline_markdown)
    return server


@contextmanager
def root_logging_kept() -> Iterator[None]:
    """Leave the root logger's handlers and level as the host process set them."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)

"""The MCP server of Annals: the same memories as the HTTP API, as tools a model calls
(docs/mcp.md). An entry door like app.py, above the use-cases:

- `caller`  — who is calling, on which space (a context variable, set per request/process);
- `tools`   — the seven tools and their result shapes (plain functions over the use-cases);
- `server`  — the MCP server (the official `mcp` SDK's MCPServer) with the key's scope applied:
              a read key neither sees nor may call a write tool;
- `http`    — POST /v1/spaces/{space}/mcp: one HTTP request through the SDK's stateless
              streamable-HTTP transport (JSON responses), inside the Chalice route;
- `stdio`   — `annals mcp --space S` for desktop clients.

Nothing here is imported by `import app`: the SDK loads when /mcp is first called or
`annals mcp` starts.
"""

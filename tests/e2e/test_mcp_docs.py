"""docs/mcp.md's Python SDK snippet, as written there: run as a script against a real `annals
serve` with the bearer key, it lists the tools over streamable HTTP and recalls an imported
memory with `recall_memory`; with a key Annals refuses it fails (the route's 401)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_mcp import ALL_TOOLS, SPACE, HashServer, seed

pytestmark = pytest.mark.e2e

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def snippet() -> str:
    """The first ```python block of docs/mcp.md."""
    text = DOC.read_text(encoding="utf-8")
    block = text[text.index("```python\n") + len("```python\n"):]
    return block[:block.index("```")]


def run(path: Path, url: str, key: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNALS_")}
    env.update(ANNALS_MCP_URL=url, KEY=key)
    return subprocess.run([sys.executable, str(path)], env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_docs_python_sdk_snippet_lists_tools_and_recalls_over_http(tmp_path):
    data = tmp_path / "data"
    seed(data)
    script = tmp_path / "annals_mcp_http.py"
    script.write_text(snippet(), encoding="utf-8")
    server = HashServer(data)
    try:
        server.wait_ready()
        key = (data / "api_key").read_text().strip()
        url = f"{server.url}/v1/spaces/{SPACE}/mcp"
        out = run(script, url, key)
        assert out.returncode == 0, out.stderr
        tools, recalled = out.stdout.strip().splitlines()
        assert set(ast.literal_eval(tools)) == ALL_TOOLS  # the snippet prints a list
        verdict, titles = recalled.split(" ", 1)
        assert verdict == "hit" and "体检" in titles, recalled
        refused = run(script, url, "not-a-key")
        assert refused.returncode != 0 and "MCPError" in refused.stderr, refused.stderr
    finally:
        err = server.stop()
    assert "Traceback" not in err, err

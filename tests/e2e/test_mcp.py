"""End to end with the MCP SDK's own client (mcp.ClientSession): `annals mcp --space S` as a
stdio subprocess, and POST /v1/spaces/{space}/mcp on a running `annals serve` through the
SDK's streamable-HTTP client. Both list the tools, save, recall, read with evidence, edit and
forget; a read-only key sees and may call only the read tools. Hash embedder, for speed."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.server import ANNALS, AnnalsServer, server_env

pytestmark = pytest.mark.e2e

SPACE = "e2e"
ALL_TOOLS = {"recall_memory", "read_memory", "timeline", "save_memory", "edit_memory",
             "forget_memory", "report_delivery", "find_thread", "read_thread_materials",
             "read_profile"}
READ_TOOLS = {"recall_memory", "read_memory", "timeline", "find_thread",
              "read_thread_materials", "read_profile"}
CHAT = [
    {"role": "user", "name": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"role": "assistant", "content": "恭喜！奶糖这个名字真可爱。", "at": "2026-06-01T20:00:05+08:00"},
    {"role": "user", "name": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
]


def env(data_dir: Path, **extra: str) -> dict[str, str]:
    return server_env(data_dir, ANNALS_EMBEDDER="hash", **extra)


def annals(*args: str, data_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(ANNALS), *args], env=env(data_dir), cwd=data_dir.parent,
                          capture_output=True, text=True, timeout=120)


def seed(data_dir: Path) -> None:
    """A chat imported and extracted into events (memories with evidence)."""
    chat = data_dir.parent / "chat.json"
    chat.write_text(json.dumps(CHAT, ensure_ascii=False))
    out = annals("import", str(chat), "--space", SPACE, "--session", "s1", "--extract",
                 data_dir=data_dir)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["events_extracted"] >= 1


def read_key(data_dir: Path, space: str = SPACE) -> str:
    out = annals("keys", "create", "--space", space, "--label", "mcp-reader", data_dir=data_dir)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["key"]


async def full_flow(session: ClientSession) -> None:
    """What a model does with the tools, through the SDK client."""
    init = await session.initialize()
    assert init.server_info.name == "annals"
    assert {t.name for t in (await session.list_tools()).tools} == ALL_TOOLS

    saved = await session.call_tool("save_memory", {
        "summary": "小明对花生过敏，吃了会起疹子", "happened_at": "2026-06-10",
        "tags": ["健康"], "importance": 9})
    assert not saved.is_error, saved.content
    memory = saved.structured_content
    assert memory["version"] == 1 and memory["date"] == "2026-06-10"

    recalled = await session.call_tool("recall_memory", {"query": "小明对什么过敏",
                                                         "max_cards": 3})
    assert memory["ref"] in [c["ref"] for c in recalled.structured_content["cards"]]

    june = (await session.call_tool("timeline", {"from": "2026-06"})).structured_content
    checkup = next(m for m in june["memories"] if "体检" in m["summary"])
    read = await session.call_tool("read_memory", {"ids": [checkup["ref"]],
                                                   "with_evidence": True})
    [full] = read.structured_content["memories"]
    assert any("体检" in m["content"] for m in full["evidence"])  # the cited message itself

    edited = await session.call_tool("edit_memory", {"id": memory["id"], "version": 1,
                                                     "summary": "小明对花生和芒果过敏"})
    assert edited.structured_content["version"] == 2
    stale = await session.call_tool("edit_memory", {"id": memory["id"], "version": 1,
                                                    "importance": 3})
    assert stale.is_error and "version_conflict" in stale.content[0].text

    forgotten = await session.call_tool("forget_memory", {"id": memory["id"]})
    assert forgotten.structured_content["status"] == "archived"
    again = await session.call_tool("recall_memory", {"query": "小明对什么过敏", "max_cards": 3})
    assert memory["ref"] not in [c["ref"] for c in again.structured_content["cards"]]

    [resource] = (await session.list_resources()).resources
    text = (await session.read_resource(str(resource.uri))).contents[0].text
    assert text.startswith(f"# Annals — {SPACE}") and "体检" in text


async def read_only_flow(session: ClientSession) -> None:
    await session.initialize()
    assert {t.name for t in (await session.list_tools()).tools} == READ_TOOLS
    with pytest.raises(MCPError) as refused:
        await session.call_tool("save_memory", {"summary": "不该保存"})
    assert "forbidden" in str(refused.value)
    assert refused.value.error.data["code"] == "forbidden"
    # The session is fine after the refusal: reads still work.
    recalled = await session.call_tool("recall_memory", {"query": "奶糖体检"})
    assert not recalled.is_error and recalled.structured_content["cards"]


def stdio_params(data_dir: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=str(ANNALS), args=["mcp", "--space", SPACE, *args],
                                 env=env(data_dir), cwd=str(data_dir.parent))


async def over_stdio(params: StdioServerParameters, flow) -> None:
    with anyio.fail_after(120):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await flow(session)


def test_stdio_server(tmp_path):
    data = tmp_path / "data"
    seed(data)
    anyio.run(over_stdio, stdio_params(data), full_flow)
    key = read_key(data)
    anyio.run(over_stdio, stdio_params(data, "--key", key), read_only_flow)


def test_stdio_refuses_a_key_for_another_space(tmp_path):
    data = tmp_path / "data"
    key = read_key(data, space="elsewhere")
    out = subprocess.run([str(ANNALS), "mcp", "--space", SPACE, "--key", key], env=env(data),
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, input="")
    assert out.returncode != 0 and "may not use space 'e2e'" in out.stderr
    assert out.stdout == ""  # stdout is the protocol's: nothing else is written there


async def over_http(url: str, key: str, flow) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    with anyio.fail_after(120):
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await flow(session)


def concurrent_calls_get_their_own_answers(url: str, key: str) -> None:
    """waitress serves requests on several threads: each must get the answer to its own
    message (chalicelib.local.wsgi keeps Chalice's current request per thread)."""
    wrong: list[tuple[str, str]] = []

    def client(n: int) -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            for i in range(10):
                query = f"并发 {n}-{i}"
                answer = http.post(url, json={
                    "jsonrpc": "2.0", "id": f"{n}-{i}", "method": "tools/call",
                    "params": {"name": "timeline", "arguments": {"from": "2026-06",
                                                                 "limit": 1 + i}}}).json()
                if "result" not in answer:  # noted, not raised: a thread's error is lost
                    wrong.append((query, json.dumps(answer, ensure_ascii=False)[:200]))
                    continue
                got = len(answer["result"]["structuredContent"]["memories"])
                if answer["id"] != f"{n}-{i}" or got > 1 + i:
                    wrong.append((query, json.dumps(answer, ensure_ascii=False)[:200]))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, wrong


class HashServer(AnnalsServer):
    """`annals serve` on the hash embedder (test_serve.Server runs the default e5)."""

    stop_signal = signal.SIGINT

    def __init__(self, data_dir: Path):
        # six clients of one key at once (concurrent_calls_get_their_own_answers): over the
        # default 4 reads at once per key, which would answer some of them 429
        super().__init__(data_dir, env=env(data_dir, ANNALS_LIMIT_KEY_CONCURRENT="8"),
                         stdout=subprocess.PIPE, cwd=data_dir.parent)


def test_streamable_http_on_annals_serve(tmp_path):
    data = tmp_path / "data"
    seed(data)
    server = HashServer(data)
    try:
        server.wait_ready()
        admin = (data / "api_key").read_text().strip()
        url = f"{server.url}/v1/spaces/{SPACE}/mcp"
        anyio.run(over_http, url, admin, full_flow)
        anyio.run(over_http, url, read_key(data), read_only_flow)
        concurrent_calls_get_their_own_answers(url, admin)
        other = read_key(data, space="elsewhere")
        refused = httpx.post(url, headers={"Authorization": f"Bearer {other}"},
                             json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    finally:
        err = server.stop()
    assert "Traceback" not in err, err


def readme_mcp_config() -> dict:
    """The first MCP client configuration in README.md, as a newcomer would paste it."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## MCP"):]
    block = section[section.index("```json") + len("```json"):]
    return json.loads(block[:block.index("```")])


def test_the_readme_mcp_configuration_recalls_a_memory(tmp_path):
    """README → paste the stdio config (its /path/to/annals replaced by this checkout, as the
    README says) → an MCP client starts the server it names and recalls an imported memory."""
    checkout = ANNALS.parent.parent.parent  # …/.venv/bin/annals → the checkout
    server = readme_mcp_config()["mcpServers"]["annals"]
    command = server["command"].replace("/path/to/annals", str(checkout))
    assert Path(command).resolve() == ANNALS.resolve()
    data = Path(server["env"]["ANNALS_DATA_DIR"].replace("/path/to/annals", str(tmp_path)))
    seed_space = server["args"][server["args"].index("--space") + 1]
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(CHAT, ensure_ascii=False))
    out = subprocess.run([str(ANNALS), "import", str(chat), "--space", seed_space, "--extract"],
                         env=env(data), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    params = StdioServerParameters(command=command, args=server["args"],
                                   env={**env(data), **server["env"],
                                        "ANNALS_DATA_DIR": str(data)})

    async def recall(session: ClientSession) -> None:
        await session.initialize()
        got = await session.call_tool("recall_memory", {"query": "奶糖体检"})
        assert not got.is_error
        assert any("体检" in c["text"] for c in got.structured_content["cards"])

    anyio.run(over_stdio, params, recall)

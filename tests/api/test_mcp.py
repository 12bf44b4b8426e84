"""The MCP server through chalice.test.Client: the Lambda path of POST /v1/spaces/{space}/mcp,
JSON-RPC messages posted one at a time (stateless, JSON responses), with the admin key, a
read-only key and a key for another space."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import AUTH
from tests.extract_double import OneEventPerStatement

SP = "/v1/spaces/me"
MCP = SP + "/mcp"
ALL_TOOLS = {"recall_memory", "read_memory", "timeline", "save_memory", "edit_memory",
             "forget_memory", "report_delivery", "find_thread", "read_thread_materials",
             "read_profile"}
READ_TOOLS = {"recall_memory", "read_memory", "timeline", "find_thread",
              "read_thread_materials", "read_profile"}
MESSAGES = [
    {"seq": 1, "role": "user", "speaker": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "at": "2026-06-01T20:00:00+08:00"},
    {"seq": 2, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "at": "2026-06-15T10:00:00+08:00"},
]


def auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


class Rpc:
    """A JSON-RPC caller over one route: each call is one POST, as an MCP client sends it."""

    def __init__(self, client, headers=AUTH, path=MCP):
        self.client, self.headers, self.path, self.next_id = client, headers, path, 0

    def post(self, message: dict):
        return self.client.http.post(self.path, headers=self.headers, body=json.dumps(message))

    def __call__(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        resp = self.post(message)
        assert resp.status_code == 200, resp.body
        assert resp.headers["Content-Type"].startswith("application/json")
        answer = json.loads(resp.body)
        assert answer["id"] == self.next_id
        return answer

    def initialize(self) -> dict:
        return self("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "test", "version": "1"}})["result"]

    def tools(self) -> set[str]:
        return {t["name"] for t in self("tools/list")["result"]["tools"]}

    def call(self, name: str, **arguments) -> dict:
        """The tool's result; isError results come back too (check result["isError"])."""
        return self("tools/call", {"name": name, "arguments": arguments})["result"]

    def ok(self, name: str, **arguments) -> dict:
        result = self.call(name, **arguments)
        assert not result.get("isError"), result
        return result["structuredContent"]


def make_key(client, **spec) -> str:
    resp = client.http.post("/v1/keys", headers=AUTH, body=json.dumps(spec))
    assert resp.status_code == 201, resp.body
    return json.loads(resp.body)["key"]


@pytest.fixture
def extracted(client) -> list[dict]:
    """Messages in space "me", extracted into events (memories with evidence)."""
    put = client.http.put(SP + "/sessions/s1/messages", headers=AUTH,
                          body=json.dumps({"messages": MESSAGES}))
    assert put.status_code == 200, put.body
    events = json.loads(client.http.post(SP + "/extract", headers=AUTH, body="{}").body)["events"]
    assert events
    return events


def test_initialize_lists_every_tool_with_typed_schemas(client):
    rpc = Rpc(client)
    init = rpc.initialize()
    assert init["serverInfo"]["name"] == "annals"
    assert "recall_memory" in init["instructions"]
    assert {"tools", "resources"} <= set(init["capabilities"])
    tools = {t["name"]: t for t in rpc("tools/list")["result"]["tools"]}
    assert set(tools) == ALL_TOOLS
    for tool in tools.values():
        assert any("\u4e00" <= ch <= "\u9fff" for ch in tool["description"]), tool["name"]
        assert tool["inputSchema"]["type"] == "object" and tool["outputSchema"]
    recall = tools["recall_memory"]["inputSchema"]
    assert recall["required"] == ["query"]
    assert set(recall["properties"]) == {"query", "time_hint", "window", "max_cards"}
    assert recall["properties"]["max_cards"]["anyOf"][0]["maximum"] == 50
    assert set(tools["timeline"]["inputSchema"]["properties"]) == {"from", "to", "limit",
                                                                  "cursor", "kind"}
    assert tools["edit_memory"]["inputSchema"]["required"] == ["id", "version"]
    assert tools["recall_memory"]["annotations"]["readOnlyHint"] is True
    assert tools["forget_memory"]["annotations"]["readOnlyHint"] is False


def test_save_recall_read_edit_forget(client, extracted):
    rpc = Rpc(client)
    rpc.initialize()
    saved = rpc.ok("save_memory", summary="小明对花生过敏，吃了会起疹子", happened_at="2026-06-10",
                   tags=["健康"], importance=9)
    assert saved["version"] == 1 and saved["kind"] == "note" and saved["date"] == "2026-06-10"
    assert saved["tags"] == ["健康"] and saved["importance"] == 9

    recalled = rpc.ok("recall_memory", query="小明对什么过敏", max_cards=3, window="chat-1")
    assert recalled["verdict"] == "hit"
    assert saved["ref"] in [c["ref"] for c in recalled["cards"]]
    assert "花生" in recalled["context"]

    checkup = next(e for e in extracted if "体检" in e["summary"])
    read = rpc.ok("read_memory", ids=[checkup["id"], "event:nope", "message:s1:1"],
                  with_evidence=True)
    [memory] = read["memories"]
    assert memory["id"] == checkup["id"] and memory["version"] == checkup["version"]
    assert any("体检" in m["content"] for m in memory["evidence"])
    assert read["messages"][0]["content"].startswith("我今天领养")
    assert read["missing"] == ["event:nope"] and read["next_cursor"] is None
    assert rpc.ok("read_memory", ids=[saved["id"]])["memories"][0]["evidence"] is None

    edited = rpc.ok("edit_memory", id=saved["id"], version=1, summary="小明对花生和芒果过敏")
    assert edited["version"] == 2 and "芒果" in edited["summary"]
    stale = rpc.call("edit_memory", id=saved["id"], version=1, importance=3)
    assert stale["isError"] is True
    text = stale["content"][0]["text"]
    assert "version_conflict" in text and "read_memory" in text and "version 2" in text
    assert rpc.ok("read_memory", ids=[saved["ref"]])["memories"][0]["importance"] == 9

    delivered = rpc.ok("report_delivery", window="chat-1", ids=[saved["id"]])
    assert delivered["recorded"] == [saved["ref"]]

    forgotten = rpc.ok("forget_memory", id=saved["ref"])
    assert forgotten["status"] == "archived" and forgotten["version"] == 3
    again = rpc.ok("recall_memory", query="小明对什么过敏", max_cards=3)
    assert saved["ref"] not in [c["ref"] for c in again["cards"]]
    history = json.loads(client.http.get(f"{SP}/events/{saved['id']}/history",
                                         headers=AUTH).body)["versions"]
    assert [v["status"] for v in history] == ["active", "active", "archived"]  # never deleted
    restored = rpc.ok("edit_memory", id=saved["id"], version=3, status="active")
    assert restored["status"] == "active"


def test_timeline_pages_oldest_first(client, extracted):
    rpc = Rpc(client)
    for day in ("2026-05-03", "2026-05-01", "2026-05-02"):
        rpc.ok("save_memory", summary=f"五月的一件事 {day}", happened_at=day)
    window = {"from": "2026-05", "to": "2026-05-15"}
    first = rpc.ok("timeline", **window, limit=2)
    assert [m["date"] for m in first["memories"]] == ["2026-05-01", "2026-05-02"]
    rest = rpc.ok("timeline", **window, limit=2, cursor=first["next_cursor"])
    assert [m["date"] for m in rest["memories"]] == ["2026-05-03"]
    assert rest["next_cursor"] is None
    june = rpc.ok("timeline", **{"from": "2026-06"})["memories"]
    assert {m["id"] for m in june} == {e["id"] for e in extracted}
    bad = rpc.call("timeline", **{"from": "sometime maybe"})
    assert bad["isError"] and "bad_time" in bad["content"][0]["text"]


def test_the_timeline_lists_events_and_notes_and_summaries_on_request(client, services):
    services.extractor = OneEventPerStatement()
    more = [{"seq": 3, "role": "user", "speaker": "小明",
             "content": "我下个月要和哥哥去爬黄山", "at": "2026-06-16T10:00:00+08:00"}]
    put = client.http.put(SP + "/sessions/s1/messages", headers=AUTH,
                          body=json.dumps({"messages": MESSAGES + more}))
    assert put.status_code == 200, put.body
    events = json.loads(client.http.post(SP + "/extract", headers=AUTH, body="{}").body)["events"]
    assert len(events) == 3  # enough for a session summary
    rpc = Rpc(client)
    note = rpc.ok("save_memory", summary="奶糖对鸡肉过敏", happened_at="2026-06-20")
    listed = rpc.ok("timeline")["memories"]
    assert {m["kind"] for m in listed} == {"event", "note"}
    assert {m["id"] for m in listed} == {e["id"] for e in events} | {note["id"]}
    (summary,) = rpc.ok("timeline", kind="summary")["memories"]
    assert summary["kind"] == "summary" and "summary" in summary["tags"]
    every = rpc.ok("timeline", kind="all")["memories"]
    assert {m["id"] for m in every} == {m["id"] for m in listed} | {summary["id"]}
    bad = rpc.call("timeline", kind="summaries")
    assert bad["isError"]


def test_recall_memory_keeps_one_card_limit_on_the_time_path(client, services):
    """recall_memory: at most its max_cards, else ANNALS_MAX_CARDS (2), when the query names a
    time ("最近") as when it names none — not the time path's own time_max_results (3)."""
    rpc = Rpc(client)
    today = services.clock().date()
    for days, text in ((1, "奶糖今天学会了自己开门"), (2, "奶糖这周胖了一斤"),
                       (3, "奶糖昨晚把花瓶打碎了")):
        rpc.ok("save_memory", summary=text,
               happened_at=(today - timedelta(days=days)).isoformat())
    recalled = rpc.ok("recall_memory", query="奶糖最近怎么样？")
    assert recalled["verdict"] == "hit" and len(recalled["cards"]) == 2
    assert len(rpc.ok("recall_memory", query="奶糖最近怎么样？", max_cards=3)["cards"]) == 3


def test_the_model_reads_messages_without_their_reasoning(client, services):
    """recall_memory's cards and read_memory's messages are cleaned (services.clean); the
    stored message keeps its <think> block as evidence."""
    put = client.http.put(SP + "/sessions/s9/messages", headers=AUTH, body=json.dumps(
        {"messages": [{"seq": 1, "role": "assistant", "speaker": "Aki",
                       "content": "<think>他其实更喜欢狗，别说出来</think>奶糖的疫苗已经全部打完了",
                       "at": "2026-06-01T20:00:00+08:00"}]}))
    assert put.status_code == 200
    rpc = Rpc(client)
    recalled = rpc.ok("recall_memory", query="奶糖的疫苗打完了吗？")
    assert recalled["cards"] and "奶糖的疫苗已经全部打完了" in recalled["context"]
    for said in (recalled["context"], *(c["text"] for c in recalled["cards"])):
        assert "think" not in said and "更喜欢狗" not in said
    read = rpc.ok("read_memory", ids=["message:s9:1"])
    assert read["messages"][0]["content"] == "奶糖的疫苗已经全部打完了"
    assert services.store.get_messages("me", "s9")[0].content.startswith("<think>")


def test_tool_errors_the_model_can_act_on(client):
    rpc = Rpc(client)
    missing = rpc.call("edit_memory", id="ev_nope", version=1, importance=3)
    assert missing["isError"] and "not_found: no event 'ev_nope'" in missing["content"][0]["text"]
    for not_an_event in ("message:s1:1", "message:nonsense", "event:"):
        refused = rpc.call("forget_memory", id=not_an_event)
        assert refused["isError"] and "not_an_event" in refused["content"][0]["text"]
    invalid = rpc.call("save_memory", summary="", importance=11)
    assert invalid["isError"]
    unknown = rpc.call("no_such_tool")
    assert unknown["isError"]


def test_the_timeline_resource(client, extracted):
    rpc = Rpc(client)
    [resource] = rpc("resources/list")["result"]["resources"]
    assert resource["uri"] == "annals://me/timeline.md"
    assert resource["mimeType"] == "text/markdown"
    [content] = rpc("resources/read", {"uri": resource["uri"]})["result"]["contents"]
    assert content["text"].startswith("# Annals — me") and "├─" in content["text"]
    other = rpc("resources/read", {"uri": "annals://other/timeline.md"})
    assert "error" in other  # only the space of the URL
    templates = rpc("resources/templates/list")["result"]["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "annals://{space}/timeline.md"


def test_a_space_id_with_url_syntax_is_quoted_in_the_resource_uri(client):
    rpc = Rpc(client, path="/v1/spaces/a:b@c/mcp")
    rpc.ok("save_memory", summary="a memory in an odd space")
    [resource] = rpc("resources/list")["result"]["resources"]
    assert resource["uri"] == "annals://a%3Ab%40c/timeline.md"
    [content] = rpc("resources/read", {"uri": resource["uri"]})["result"]["contents"]
    assert "a memory in an odd space" in content["text"]


def test_a_read_key_neither_sees_nor_calls_write_tools(client, extracted):
    reader = Rpc(client, auth(make_key(client, spaces=["me"], access="read")))
    assert reader.initialize()["serverInfo"]["name"] == "annals"
    assert reader.tools() == READ_TOOLS
    before = client.http.get(SP + "/events", headers=AUTH).body
    for name, args in [("save_memory", {"summary": "不该保存"}),
                       ("edit_memory", {"id": extracted[0]["id"], "version": 1,
                                        "importance": 1}),
                       ("forget_memory", {"id": extracted[0]["id"]}),
                       ("report_delivery", {"window": "w", "ids": [extracted[0]["id"]]})]:
        answer = reader("tools/call", {"name": name, "arguments": args})
        assert answer["error"]["code"] == -32602, answer  # an MCP error, not a crash
        assert answer["error"]["data"]["code"] == "forbidden"
        assert name in answer["error"]["message"]
    assert client.http.get(SP + "/events", headers=AUTH).body == before  # nothing written
    assert reader.ok("recall_memory", query="奶糖体检")["verdict"] == "hit"  # reads still work
    assert reader.ok("timeline")["memories"]
    writer = Rpc(client, auth(make_key(client, spaces=["me"], access="write")))
    assert writer.tools() == ALL_TOOLS
    assert writer.ok("save_memory", summary="写入的钥匙可以保存")["version"] == 1


def test_keys_limited_to_other_spaces_and_no_key(client):
    other = make_key(client, spaces=["other"], access="write")
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    resp = client.http.post(MCP, headers=auth(other), body=json.dumps(message))
    assert resp.status_code == 403 and json.loads(resp.body)["error"]["code"] == "forbidden"
    resp = client.http.post(MCP, headers={"Content-Type": "application/json"},
                            body=json.dumps(message))
    assert resp.status_code == 401
    assert Rpc(client, auth(other), "/v1/spaces/other/mcp").tools() == ALL_TOOLS


def test_http_details(client):
    rpc = Rpc(client)
    notified = rpc.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert notified.status_code == 202 and not notified.body
    for raw, status, code in [("{oops", 400, "malformed_json"), ("[1, 2]", 400, "malformed_json"),
                              ('{"hello": "world"}', 422, "validation_error"),
                              ("", 400, "missing_body")]:
        resp = client.http.post(MCP, headers=AUTH, body=raw)
        assert resp.status_code == status, raw
        assert json.loads(resp.body)["error"]["code"] == code
    assert rpc("ping")["result"] == {}
    unknown = rpc("no/such/method")
    assert unknown["error"]["code"] == -32601
    assert client.http.get(MCP, headers=AUTH).status_code == 405  # no SSE stream: stateless
    plain = client.http.post(MCP, headers={"Authorization": AUTH["Authorization"],
                                           "Content-Type": "text/plain"},
                             body=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
    assert plain.status_code == 200 and json.loads(plain.body)["id"] == 9  # curl -d works too
    assert client.http.post("/v1/spaces/bad space/mcp", headers=AUTH,
                            body="{}").status_code == 400


def test_import_app_does_not_load_the_sdk():
    """`annals bench cold`: the SDK is imported when /mcp is first called, never by app."""
    root = Path(__file__).resolve().parents[2]
    code = ("import sys, app; loaded = [m for m in sys.modules if m == 'mcp' or "
            "m.startswith(('mcp.', 'mcp_types', 'starlette', 'chalicelib.mcp'))]; "
            "print(loaded); assert not loaded")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr

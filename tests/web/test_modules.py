"""The page's own modules, run in Chromium: chat files read as chalicelib/usecases/importing.py
reads them, batches within the API's limits, the history diff, and what the recall lab reads
from a trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chalicelib.api import web

pytestmark = pytest.mark.e2e

OPENAI = json.dumps({"messages": [
    {"role": "system", "content": "You are kind."},
    {"role": "user", "name": "小明", "content": "我今天领养了一只橘猫", "timestamp": "2026-06-01T20:00:00+08:00"},
    {"role": "tool", "content": "ignored"},
    {"role": "assistant", "content": [{"type": "text", "text": "太好了"}, {"type": "image"}],
     "created_at": 1780315205},
    {"role": "assistant", "content": ""},
    {"role": "user", "content": "no time"},
]}, ensure_ascii=False)
SILLYTAVERN = "\n".join(json.dumps(x, ensure_ascii=False) for x in [
    {"user_name": "Sam", "character_name": "Aria", "create_date": "2024-06-01@20h30m"},
    {"name": "Sam", "is_user": True, "is_system": False, "send_date": "June 1, 2024 8:30pm", "mes": "Hi Aria"},
    {"name": "Aria", "is_user": False, "send_date": "2024-6-1 @20h 31m 15s 123ms", "mes": "Hello, Sam!"},
    {"name": "System", "is_user": False, "is_system": True, "send_date": "June 1, 2024 8:32pm", "mes": "note"},
    {"name": "Sam", "is_user": True, "send_date": "2024-06-01T12:33:00Z", "mes": "I booked Lisbon"},
])


@pytest.fixture(scope="module")
def modules(browser, server):
    context = browser.new_context(locale="en-US", timezone_id="Asia/Shanghai")
    page = context.new_page()
    page.goto(server.url + "/")
    base = f"{server.url}/web/{web.bundle().version}/"
    yield lambda script, *args: page.evaluate(
        f"async (args) => {{ const base = {base!r}; {script} }}", list(args))
    context.close()


def test_openai_files_read_like_the_cli(modules):
    out = modules("""const m = await import(base + 'importer.js');
      return m.parseChat(args[0], {name: 'chat.json', lastModified: Date.UTC(2026, 0, 1, 0, 0, 0, 500)});""",
                  OPENAI)
    assert out["format"] == "openai"
    assert out["messages"] == [
        {"seq": 0, "role": "system", "content": "You are kind.", "at": "2026-01-01T08:00:00+08:00"},
        {"seq": 1, "role": "user", "content": "我今天领养了一只橘猫", "at": "2026-06-01T20:00:00+08:00",
         "speaker": "小明"},
        {"seq": 2, "role": "assistant", "content": "太好了 ", "at": "2026-06-01T12:00:05.000+00:00"},
        {"seq": 3, "role": "user", "content": "no time", "at": "2026-01-01T08:00:03+08:00"},
    ]


def test_sillytavern_chats_and_their_dates(modules):
    out = modules("""const m = await import(base + 'importer.js');
      return m.parseChat(args[0], {name: 'Aria - 2024-06-01.jsonl'});""", SILLYTAVERN)
    assert out["format"] == "sillytavern"
    assert [(m["role"], m["speaker"], m["content"], m["at"]) for m in out["messages"]] == [
        ("user", "Sam", "Hi Aria", "2024-06-01T20:30:00+08:00"),
        ("assistant", "Aria", "Hello, Sam!", "2024-06-01T20:31:15+08:00"),
        ("user", "Sam", "I booked Lisbon", "2024-06-01T12:33:00+00:00"),
    ]
    assert modules("const m = await import(base + 'importer.js'); return m.sessionName(args[0]);",
                   "Aria - 2024-06-01 (2).jsonl") == "Aria-2024-06-01-2"
    bad = modules("""const m = await import(base + 'importer.js');
      try { m.parseChat('{"nope": 1}', {name: 'x.json'}); } catch (e) { return e.message; }""")
    assert "expected a list of messages" in bad


def test_session_names_follow_the_cli_rule(modules):
    """Issue 36 item 1: the table tests/unit/test_session_names.py runs through
    chalicelib.domain.models.session_id_from_file_name, through importer.js here."""
    table = json.loads((Path(__file__).parents[1] / "data" / "session_names.json").read_text(
        encoding="utf-8"))["cases"]
    got = modules("""const m = await import(base + 'importer.js');
      return args[0].map((c) => m.sessionName(c.file));""", table)
    assert got == [c["session"] for c in table]


def test_a_file_the_page_cannot_read_is_told_what_it_reads(modules):
    """Issue 36 item 6: the import error names the formats (as `annals import` does)."""
    said = modules("""const i = await import(base + 'i18n.js');
      const out = [];
      for (const code of ['en', 'zh']) { i.setLang(code); out.push(i.t('import.bad', {message: 'x'})); }
      i.setLang('en');
      return out;""")
    assert all(w in said[0] for w in ("SillyTavern .jsonl", "OpenAI-style messages JSON", "LoCoMo"))
    assert all(w in said[1] for w in ("SillyTavern", "OpenAI 风格的消息 JSON", "LoCoMo"))


def test_roles_speak_with_the_file_s_names_else_the_given_ones(modules):
    """As chalicelib/usecases/importing.py (tests/unit/test_importers.py): a placeholder or a
    missing name takes the header's name for the role, else the one the form gives."""
    tavern = "\n".join(json.dumps(x, ensure_ascii=False) for x in [
        {"user_name": "小明", "character_name": "{{char}}"},
        {"name": "You", "is_user": True, "mes": "我今天领养了一只橘猫"},
        {"is_user": False, "mes": "好可爱"},
        {"name": "Bo", "is_user": False, "mes": "Hi"}])
    out = modules("""const m = await import(base + 'importer.js');
      return [m.parseChat(args[0], {name: 'a.jsonl'}),
              m.parseChat(args[0], {name: 'a.jsonl', names: {user: 'Mel', assistant: 'Aki'}}),
              m.parseChat(args[1], {name: 'b.json', names: {user: 'Mel', assistant: ''}})]
        .map((chat) => chat.messages.map((msg) => msg.speaker || null));""",
                  tavern, json.dumps([{"role": "user", "content": "hi"},
                                      {"role": "assistant", "content": "hello"}]))
    assert out == [["小明", None, "Bo"], ["小明", "Aki", "Bo"], ["Mel", None]]
    people = modules("""const m = await import(base + 'names.js');
      return args[0].map((n) => m.isPlaceholder(n));""",
                     ["user", "{{char}}", "<USER>", "AI", "用户", "User 2", "Mel", "小明", "Aiden"])
    assert people == [True] * 6 + [False] * 3


def test_batches_stay_within_the_api_limits(modules):
    sizes = modules("""const m = await import(base + 'importer.js');
      const big = 'x'.repeat(15000);
      const msgs = Array.from({length: 1203}, (_, i) => ({seq: i, role: 'user', content: i < 300 ? big : 'hi', at: '2026-01-01T00:00:00Z'}));
      return m.batches(msgs).map(b => [b.length, JSON.stringify({messages: b}).length]);""")
    assert sum(n for n, _ in sizes) == 1203
    assert all(n <= 500 and size < 2 * 1024 * 1024 for n, size in sizes)


def test_the_history_diff_marks_only_what_changed(modules):
    parts = modules("""const m = await import(base + 'diff.js');
      return [m.diffTexts('奶糖昨天进行了体检', '奶糖前天进行了全面体检'),
              m.diffTexts('Sam booked the flight', 'Sam finally booked the flight'),
              m.listChange(['a', 'b'], ['b', 'c'])];""")
    assert parts[0] == [["same", "奶糖"], ["del", "昨"], ["ins", "前"], ["same", "天进行了"],
                        ["ins", "全面"], ["same", "体检"]]
    assert parts[1] == [["same", "Sam "], ["ins", "finally "], ["same", "booked the flight"]]
    assert parts[2] == {"added": ["c"], "removed": ["a"]}


def test_the_recall_lab_reads_gate_and_cooldown_from_the_trace(modules):
    out = modules("""const m = await import(base + 'recall.js');
      return args[0].map(l => [m.classify(l), m.cooledRefs(l)]);""", [
        "[记忆检索] 准入门槛：相关度 ≥ 0.09，2 条通过",
        "[recall] gate: relevance ≥ 0.09, 1 passed",
        "[冷却] 窗口 w 刚用过 2 条，本轮跳过且不补位：event:ev_a, message:s1:3",
        "[cooldown] window w recently injected 1; skipped, not backfilled: event:ev_b",
        "[时间回忆] 第 0 层 2026-06-14：候选 3 条，命中 1 条",
        "[recall] 4 messages not yet embedded (findable by keyword only)",
        "[recall] query: hello",
    ])
    assert out == [["gate", []], ["gate", []], ["cooldown", ["event:ev_a", "message:s1:3"]],
                   ["cooldown", ["event:ev_b"]], ["time", []], ["fresh", []], ["recall", []]]

"""Containment wherever stored text leaves as text for a model: the Markdown export (GET
…/export, `annals export`), the MCP resource annals://{space}/timeline.md and the text of the
MCP tools' results neutralise stored text with recall's context functions
(chalicelib.usecases.recall.context: clean_text, clean_line). The JSON exports are data and
stay verbatim.

Every payload of tests/data/breakout_payloads.json is stored through the API: as a message's
content and speaker (then extracted into memories), as a hand-saved memory's title, summary,
tags and participants, as its location (an edit), and as a thread's title and alias; and, once
more, as events written straight to the store, so text from before today's input checks (a
title with line breaks) is covered too. Then every output must show no way out: no line that
is not the output's own structure, no typed-memory marker or square bracket, no tag opener
(`</system>`, `<|im_start|>`), no fence, no invisible, bidi or control character.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib.domain.dates import when_label
from chalicelib.domain.models import Event, Source, When
from chalicelib.ports import Services
from chalicelib.usecases import export as export_uc
from chalicelib.usecases.events import said_order
from chalicelib.usecases.recall.context import clean_line, clean_text, parse_context
from chalicelib.wiring import set_services
from tests.api.test_mcp import Rpc
from tests.conftest import AUTH, call, make_services
from tests.unit.conftest import CST
from tests.unit.test_context_containment import PAYLOADS, SQUARE_LIKE, markers

SP = "/v1/spaces/me"
NAMES = sorted(PAYLOADS)


def _unicode(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


# The API refuses a lone surrogate (400 invalid_unicode): that payload goes in the store only.
API_NAMES = [name for name in NAMES if _unicode(PAYLOADS[name])]
SQUARES = {chr(cp) for cp in SQUARE_LIKE}
FLOOR = datetime(2026, 3, 1, 12, tzinfo=CST)

# A tag opener as a lenient reader sees it (width folded): < or << before a letter or / | ! ?
TAG_OPENER = re.compile(r"<[<]*(?:[/|!?]|[^\W\d_])")


def day(n: int) -> str:
    return (FLOOR + timedelta(days=n)).isoformat()


# ------------------------------------------------------------------ what a safe text is


def check_chars(text: str, *, lines: bool) -> None:
    """No invisible, bidi, control or separator character (a tab and, where the output has
    lines, \\n excepted); no square bracket or look-alike; no tag opener, chat token or
    fence; no typed-memory marker, however spelled."""
    allowed = "\t\n" if lines else "\t"
    bad = [f"U+{ord(ch):04X}" for ch in text if ch not in allowed
           and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")]
    assert not bad, f"invisible or control characters survived: {bad[:10]}"
    ended = text + "."  # str.splitlines drops a last empty line, split does not
    assert ended.splitlines() == ended.split("\n"), "a line break other than \\n survived"
    assert not SQUARES & set(text), f"a square bracket survived: {SQUARES & set(text)}"
    folded = unicodedata.normalize("NFKC", text)
    assert not TAG_OPENER.search(folded), f"a tag opener survived: {TAG_OPENER.search(folded)}"
    assert "<|" not in folded and "```" not in text and "~~~" not in text
    assert markers(text) == (0, 0)


MONTH = re.compile(r"^### (\d{4}-\d{2})$")
ITEM = re.compile(r"^(├─|-) (\S+) (.+)$")
HEADINGS = re.compile(r"^(# Annals — \S+|## (Summary|Timeline|Summaries|Key events \(importance "
                      r"≥ \d+\)|概要|时间线|摘要|关键事件（重要度 ≥ \d+）))$")
COUNT = re.compile(r"^(\d+ events · importance range \d+–\d+|\d+ 条事件 · 重要度 \d+–\d+)$")


def check_markdown(md: str, events: list[dict], threshold: int = 7) -> None:
    """The export is only its own structure: its headings, and one line per memory (per key
    event, per summary), each memory's text on its line after the structure, as clean_line
    shows it."""
    assert md.endswith("\n")
    check_chars(md, lines=True)
    lines = md[:-1].split("\n")
    items = []
    for n, line in enumerate(lines, 1):
        if not line or HEADINGS.match(line) or MONTH.match(line) or COUNT.match(line):
            continue
        m = ITEM.match(line)
        assert m, f"line {n} is not the export's structure: {line[:120]!r}"
        items.append(line)
    # each day in conversation order, as the export lists it (events.said_order; built
    # without validation: some payloads hold lone surrogates)
    listed = sorted(events, key=lambda e: said_order(Event.model_construct(
        id=e["id"], when=When.model_validate(e["when"]),
        sources=[Source.model_construct(**s) for s in e["sources"]])))
    timeline = [e for e in listed if e["kind"] != "summary"]
    tree = [line for line in items if line.startswith("├─ ")]
    assert len(tree) == len(timeline)  # one line per memory: no line forged, none swallowed
    for line, event in zip(tree, timeline, strict=True):
        label = when_label(When.model_validate(event["when"]))
        marks = (" ★" if event["importance"] >= threshold else "") + (
            " (plan)" if event["plan"] else "") + (
            " (archived)" if event["status"] == "archived" else "")
        # the marks before the text: a summary ending in " ★" cannot pass for a key event
        assert line == f"├─ {label}{marks} {clean_line(event['summary'])}", (line, event)
    key = [e for e in timeline if e["importance"] >= threshold]
    summaries = [e for e in listed if e["kind"] == "summary"]
    assert len(items) - len(tree) == len(key) + len(summaries)  # the "- " lines
    months = {MONTH.match(line).group(1) for line in lines if MONTH.match(line)}
    assert months == {e["when"]["start"][:7] for e in timeline}


SINGLE_LINE = {"title", "speaker", "tags", "participants", "location", "aliases", "preview"}
IDENTIFIERS = {"id", "ref", "session", "recalled_ids", "summaries", "sources", "next_cursor",
               "missing", "recorded", "window"}


def check_tool_output(value, key: str = "") -> int:
    """Every stored text in a tool's structured result, at any depth, is safe (single-line
    fields on one line); recall's context parses as its blocks. The number of texts checked."""
    if isinstance(value, dict):
        return sum(check_tool_output(v, k) for k, v in value.items())
    if isinstance(value, list):
        return sum(check_tool_output(v, key) for v in value)
    if not isinstance(value, str):
        return 0
    if key == "context":
        cards = parse_context(value, "blocks") if value else []
        assert markers(value) == (len(cards), len(cards))
        return 1
    check_chars(value, lines=key not in SINGLE_LINE)
    return 0 if key in IDENTIFIERS else 1


def check_result_text(result: dict) -> None:
    """The result's text content (what a client without structured output reads)."""
    for item in result.get("content", []):
        if item.get("type") == "text":
            text = json.loads(item["text"]) if item["text"][:1] in "{[" else item["text"]
            check_tool_output(text)


# ------------------------------------------------------------------ the hostile space


def stored_event(eid: str, payload: str, n: int, space: str = "me") -> Event:
    """As it might sit in the store, written before today's input checks (model_construct)."""
    start = datetime.fromisoformat(day(n))
    return Event.model_construct(
        id=eid, space=space, title=f"pottery {payload}"[:300], summary=f"pottery class {payload}",
        when=When(start=start, end=start + timedelta(days=1), granularity="day"),
        importance=8 if n % 2 else 5, participants=[payload[:100]], location=payload[:200],
        tags=["quoted", payload[:100]], sources=[], kind="event", status="active", plan=False,
        version=1, created_at=start, updated_at=start)


@dataclass
class Space:
    client: Any
    services: Services
    saved: list[dict]  # the memories saved through the API (after their edit)
    direct: list[Event]  # the events written straight to the store


@pytest.fixture(scope="module")
def hostile_space(tmp_path_factory) -> Iterator[Space]:
    """Every payload in every place the API lets stored text in (and straight in the store),
    built once for the module: the tests only read it."""
    from chalice.test import Client

    from app import app

    # some payloads are long: extracted in the request all the same (extract_sync_max_chars)
    services = make_services(tmp_path_factory.mktemp("hostile"), store="memory",
                             extract_sync_max_chars=10**9)
    set_services(services)
    with Client(app) as client:
        yield fill(client, services)
    set_services(None)


@pytest.fixture
def hostile(hostile_space) -> Iterator[Space]:
    set_services(hostile_space.services)  # a test in between may have set its own
    yield hostile_space
    set_services(None)


def fill(client, services: Services) -> Space:
    # every turn a user's: an assistant turn is no event of its own (extract.offline.tells)
    messages = [{"seq": n, "role": "user",
                 "speaker": PAYLOADS[name][:100] or None,
                 "content": f"I went to a pottery class and said {PAYLOADS[name]}"[:20_000],
                 "at": day(n)} for n, name in enumerate(API_NAMES, 1)]
    for start in range(0, len(messages), 10):  # small backlogs: extracted in the request
        call(client, "put", SP + "/sessions/s1/messages", {"messages": messages[start:start + 10]})
        call(client, "post", SP + "/extract", {})
    saved = []
    for n, name in enumerate(API_NAMES, 1):
        payload = PAYLOADS[name]
        event = call(client, "post", SP + "/events", {
            "summary": f"pottery {payload}"[:4000], "title": f"pottery {payload}"[:200],
            "tags": [f"t {payload}"[:100]], "participants": [f"p {payload}"[:100]],
            "importance": 8 if n % 2 else 4, "happened_at": day(n + 40)}, status=201)
        event = call(client, "patch", f"{SP}/events/{event['id']}",
                     {"version": event["version"], "location": f"at {payload}"[:200]})
        call(client, "post", SP + "/threads", {
            "title": f"pottery thread {payload}"[:200], "aliases": [f"a {payload}"[:100]],
            "events": [event["id"]]}, status=201)
        saved.append(event)
    direct = [stored_event(f"ev_raw{n:02d}", PAYLOADS[name], n + 80)
              for n, name in enumerate(NAMES, 1)]
    for event in direct:
        services.store.create_event(event)
    services.index.index_events(direct)
    return Space(client, services, saved, direct)


def all_events(services, status: str = "active") -> list[dict]:
    """The space's events as the JSON export holds them (through the use-case: the JSON of an
    event stored with a lone surrogate cannot be encoded for a response)."""
    return export_uc.export_json(services, "me", status)


def test_the_corpus_reaches_every_field(hostile):
    """What the checks below see neutralised is really hostile in the store."""
    events = all_events(hostile.services)
    assert len(PAYLOADS) >= 30
    assert len(events) >= 3 * len(PAYLOADS)
    raw = json.dumps(events, ensure_ascii=False)
    for token in ("<|im_start|>system", "[/typed_memory]", "</system>", "\u202e", "\u200b",
                  "\u2028", "```"):
        assert token in raw, token
    caught = 0
    for payload in PAYLOADS.values():  # the checks do catch the payloads as given
        try:
            check_chars(payload, lines=False)
        except AssertionError:
            caught += 1
    assert caught >= len(PAYLOADS) - 3


def test_json_exports_stay_verbatim(client):
    """GET …/events and GET …/export?format=json are data: the payloads come back as stored."""
    sp = "/v1/spaces/verbatim"
    for n, name in enumerate(API_NAMES, 1):
        call(client, "post", sp + "/events", {"summary": f"pottery {PAYLOADS[name]}"[:4000],
                                              "happened_at": day(n)}, status=201)
    listed = call(client, "get", f"{sp}/events?limit=500")["events"]
    exported = call(client, "get", f"{sp}/export?format=json")["events"]
    expected = {f"pottery {PAYLOADS[name]}"[:4000].strip() for name in API_NAMES}
    assert {e["summary"] for e in listed} == {e["summary"] for e in exported} == expected
    assert any("<|im_start|>system" in e["summary"] for e in exported)


# ------------------------------------------------------------------ the Markdown export


@pytest.mark.parametrize("status", ["active", "all"])
def test_markdown_export_contains_every_payload(hostile, status):
    resp = hostile.client.http.get(f"{SP}/export?format=markdown&status={status}",
                                   headers=AUTH)
    assert resp.status_code == 200
    md = resp.body.decode() if isinstance(resp.body, bytes) else resp.body
    check_markdown(md, all_events(hostile.services, status))


def test_markdown_export_use_case_each_payload_alone(services):
    """One payload at a time (a space each), in the summary of a key event and in a session
    summary's title and text (the Summaries section), through the use-case `annals export`
    calls."""
    for n, name in enumerate(NAMES, 1):
        space, payload = f"one{n}", PAYLOADS[name]
        event = stored_event(f"ev_one{n:02d}", payload, 1, space)
        fold = stored_event(f"ev_sum{n:02d}", payload, 2, space).model_copy(
            update={"kind": "summary"})
        services.store.create_event(event)
        services.store.create_event(fold)
        md = export_uc.export_markdown(services, space, 7)
        check_markdown(md, [event.model_dump(mode="json"), fold.model_dump(mode="json")])
        [summary] = [line for line in md.split("\n") if line.startswith("- pottery")]
        assert summary == f"- {clean_line(fold.title)} — {clean_line(fold.summary)}"


# ------------------------------------------------------------------ MCP


def test_the_timeline_resource_contains_every_payload(hostile):
    rpc = Rpc(hostile.client)
    rpc.initialize()
    [content] = rpc("resources/read", {"uri": "annals://me/timeline.md"})["result"]["contents"]
    assert content["mimeType"] == "text/markdown"
    check_markdown(content["text"], all_events(hostile.services))


def test_timeline_tool_contains_every_payload(hostile):
    rpc = Rpc(hostile.client)
    rpc.initialize()
    stored = {e["id"]: e for e in all_events(hostile.services)}
    seen, cursor = [], None
    while True:
        args = {"limit": 100, "kind": "all", **({"cursor": cursor} if cursor else {})}
        result = rpc.call("timeline", **args)
        assert not result.get("isError"), result
        check_result_text(result)
        page = result["structuredContent"]
        assert check_tool_output(page) >= len(page["memories"])
        seen += page["memories"]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(seen) == len(stored)
    for entry in seen:
        event = stored[entry["id"]]
        assert entry["title"] == clean_line(event["title"])
        assert entry["summary"] == clean_text(event["summary"])
        assert entry["tags"] == [t for t in map(clean_line, event["tags"]) if t]


def test_read_memory_with_evidence_contains_every_payload(hostile):
    rpc = Rpc(hostile.client)
    rpc.initialize()
    events = all_events(hostile.services)
    ids = [e["id"] for e in events] + [f"message:s1:{n}" for n in range(1, len(API_NAMES) + 1)]
    memories, messages, checked = [], [], 0
    for start in range(0, len(ids), 5):
        result = rpc.call("read_memory", ids=ids[start:start + 5], with_evidence=True)
        assert not result.get("isError"), result
        check_result_text(result)
        checked += check_tool_output(result["structuredContent"])
        memories += result["structuredContent"]["memories"]
        messages += result["structuredContent"]["messages"]
    assert len(memories) == len(events) and len(messages) == len(API_NAMES)
    assert any(m["evidence"] for m in memories)
    assert checked > 5 * len(events)
    stored = {e["id"]: e for e in events}
    for memory in memories:
        event = stored[memory["id"]]
        assert memory["summary"] == clean_text(event["summary"])
        assert memory["location"] == (clean_line(event["location"])
                                      if event["location"] is not None else None)


def test_recall_memory_contains_every_payload(hostile):
    rpc = Rpc(hostile.client)
    rpc.initialize()
    result = rpc.call("recall_memory", query="pottery class", max_cards=50)
    assert not result.get("isError"), result
    check_result_text(result)
    out = result["structuredContent"]
    assert len(out["cards"]) >= 10
    assert check_tool_output(out) >= 3 * len(out["cards"])


def test_thread_tools_contain_every_payload(hostile):
    rpc = Rpc(hostile.client)
    rpc.initialize()
    found = rpc.ok("find_thread", query="pottery thread")
    assert len(found["threads"]) >= 10
    check_tool_output(found)
    for thread in found["threads"]:
        result = rpc.call("read_thread_materials", id=thread["id"])
        assert not result.get("isError"), result
        check_result_text(result)
        assert check_tool_output(result["structuredContent"]) >= 3


@pytest.mark.parametrize("name", API_NAMES)
def test_write_tools_answer_contained(client, name):
    """save_memory, edit_memory and forget_memory answer with the memory: contained too (what
    is stored is what was given)."""
    rpc = Rpc(client)
    rpc.initialize()
    payload = PAYLOADS[name]
    saved = rpc.call("save_memory", summary=f"pottery {payload}"[:4000],
                     title=f"pottery {payload}"[:200], tags=[f"t {payload}"[:100]])
    assert not saved.get("isError"), saved
    check_result_text(saved)
    check_tool_output(saved["structuredContent"])
    memory = saved["structuredContent"]
    edited = rpc.call("edit_memory", id=memory["id"], version=memory["version"],
                      location=f"at {payload}"[:200], participants=[f"p {payload}"[:100]])
    assert not edited.get("isError"), edited
    check_result_text(edited)
    check_tool_output(edited["structuredContent"])
    forgot = rpc.call("forget_memory", id=memory["id"])
    assert not forgot.get("isError"), forgot
    check_result_text(forgot)
    check_tool_output(forgot["structuredContent"])
    stored = call(client, "get", f"{SP}/events/{memory['id']}")
    assert stored["summary"] == f"pottery {payload}"[:4000].strip()  # the store keeps it verbatim

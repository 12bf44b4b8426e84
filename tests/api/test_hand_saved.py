"""Issue 21 items 1, 2 and 7: memories saved by hand (`annals save`, POST …/events) and
spaces filled by a graph import are visited by the merge job, listed by GET /v1/spaces, and
dated to a day in the configured zone; a recall never shows the same text twice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from chalice.test import Client
from click.testing import CliRunner

from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.cli import main
from chalicelib.client import AnnalsClient
from chalicelib.domain.records import MergeState
from chalicelib.local.scheduler import Scheduler
from chalicelib.local.wsgi import ChaliceWSGI
from chalicelib.ports import iter_events
from chalicelib.wiring import set_services
from tests.conftest import API_KEY, AUTH, FixedClock, make_services

NOTE = "奶糖对鸡肉过敏"
ALL = ("active", "archived", "superseded")


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """`annals …` on the data dir of tmp_path (what make_services(tmp_path) opens)."""
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    monkeypatch.setenv("ANNALS_SCHEDULE", "off")
    monkeypatch.delenv("ANNALS_TZ", raising=False)

    def run(*args: str) -> dict:
        out = CliRunner().invoke(main, list(args))
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    return run


@contextmanager
def http(services) -> Iterator[Client]:
    """The app through chalice.test.Client on these services."""
    from app import app

    set_services(services)
    try:
        with Client(app) as client:
            yield client
    finally:
        set_services(None)


def by_status(services, space: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for event in iter_events(services.store, space, ALL):
        out.setdefault(event.status, []).append(event)
    return out


# ------------------------------------------------------------------ item 1: the merge job


def test_six_identical_saves_merge_in_one_scheduled_pass(tmp_path, cli):
    saved = [cli("save", "--space", "me", NOTE)["id"] for _ in range(6)]
    result = cli("jobs", "run", "merge")
    assert result["spaces"]["me"]["superseded"] == 5
    services = make_services(tmp_path)
    events = by_status(services, "me")
    assert len(events["active"]) == 1 and len(events["superseded"]) == 5
    assert {e.id for e in events["active"] + events["superseded"]} == set(saved)
    for gone in events["superseded"]:
        versions = services.store.event_history("me", gone.id)
        assert [v.status for v in versions] == ["active", "superseded"]
    again = cli("jobs", "run", "merge")  # nothing new: the space is not read again
    assert again["spaces"] == {}


def test_the_scheduler_tick_merges_notes_saved_by_hand(tmp_path):
    services = make_services(tmp_path, store="memory")
    with http(services) as client:
        for _ in range(6):
            resp = client.http.post("/v1/spaces/notes/events", headers=AUTH,
                                    body=json.dumps({"summary": NOTE}))
            assert resp.status_code == 201
    Scheduler(services, 60, jobs=["merge"]).tick()
    events = by_status(services, "notes")
    assert len(events["active"]) == 1 and len(events["superseded"]) == 5


def test_a_space_holding_only_hand_saved_events_is_visited(tmp_path, cli):
    cli("save", "--space", "notes", NOTE)
    cli("jobs", "run", "merge")
    state = make_services(tmp_path).store.get_record(MergeState, "notes")
    assert state is not None and state.pending == 1  # read: one new event, fewer than 5


def test_notes_saved_after_a_pass_move_the_fingerprint_of_a_space_with_sessions(tmp_path, cli):
    services = make_services(tmp_path)
    from chalicelib.domain.models import MessageIn, PutMessagesRequest
    from chalicelib.usecases import ingest

    at = datetime(2026, 6, 1, 20, 0, tzinfo=UTC)
    ingest.put_messages(services, "me", "s1", PutMessagesRequest(messages=[
        MessageIn(seq=1, role="user", speaker="Sam", content="I bought a bike", at=at)]))
    cli("jobs", "run", "merge")  # the sessions' fingerprint is noted
    for _ in range(5):
        cli("save", "--space", "me", NOTE)
    result = cli("jobs", "run", "merge")
    assert result["spaces"]["me"]["superseded"] == 4
    assert len([e for e in by_status(make_services(tmp_path), "me")["active"]
                if e.kind == "note"]) == 1


# ------------------------------------------------------------------ item 1: one card per text


@pytest.fixture
def annals(services):
    from app import app

    wsgi = ChaliceWSGI(app, MAX_BODY_BYTES)
    with AnnalsClient("http://annals.test", API_KEY,
                      transport=httpx.WSGITransport(app=wsgi)) as client:
        yield client


def test_the_readme_client_snippet_twice_never_shows_one_text_twice(annals):
    for _ in range(2):  # README, "Python client", run twice
        annals.save_event("me", NOTE, importance=8)
        hook = annals.hook_recall("me", "奶糖能吃鸡肉吗？", window="chat-1")
        assert len(hook.recalled_ids) <= 1
        if hook.recalled_ids:
            annals.deliveries("me", "chat-1", hook.recalled_ids)
    plain = annals.recall("me", "奶糖能吃鸡肉吗？", max_cards=2, min_relevance=0)
    assert [c.text for c in plain.cards] == [NOTE]
    other = annals.hook_recall("me", "奶糖能吃鸡肉吗？", window="chat-2")
    assert len(other.recalled_ids) == 1  # another window: the note, once


# ------------------------------------------------------------------ item 2: known spaces


def test_a_space_filled_by_a_cli_graph_import_is_listed_and_merged(tmp_path, cli):
    for _ in range(6):
        cli("save", "--space", "me", NOTE)
    out = CliRunner().invoke(main, ["export", "--space", "me", "--format", "graph"])
    graph = tmp_path / "graph.json"
    graph.write_text(out.stdout)
    assert cli("import", str(graph), "--space", "copy", "--format", "graph")[
        "events_created"] == 6
    with http(make_services(tmp_path)) as client:
        listed = json.loads(client.http.get("/v1/spaces", headers=AUTH).body)
    assert listed["spaces"] == ["copy", "me"]
    assert cli("jobs", "run", "merge")["spaces"]["copy"]["superseded"] == 5


def test_a_space_filled_by_post_graph_is_listed(client):
    doc = json.loads(client.http.get("/v1/spaces/empty/graph", headers=AUTH).body)
    saved = client.http.post("/v1/spaces/me/events", headers=AUTH,
                             body=json.dumps({"summary": NOTE}))
    doc["events"] = [json.loads(saved.body)]
    resp = client.http.post("/v1/spaces/copy/graph", headers=AUTH, body=json.dumps(doc))
    assert resp.status_code == 200, resp.body
    listed = json.loads(client.http.get("/v1/spaces", headers=AUTH).body)
    assert listed["spaces"] == ["copy", "me"]


# ------------------------------------------------------------------ item 7: dated to a day


def test_cli_save_without_at_is_today_in_annals_tz(cli, monkeypatch):
    monkeypatch.setenv("ANNALS_TZ", "Asia/Tokyo")
    when = cli("save", "--space", "me", NOTE)["when"]
    start = datetime.fromisoformat(when["start"])
    assert when["granularity"] == "day"
    assert start.utcoffset() == timedelta(hours=9) and start.time().isoformat() == "00:00:00"
    assert start.date() == datetime.now(start.tzinfo).date()
    assert datetime.fromisoformat(when["end"]) - start == timedelta(days=1)


def test_cli_save_without_at_or_annals_tz_is_today_on_this_machine(cli):
    when = cli("save", "--space", "me", NOTE)["when"]
    start = datetime.fromisoformat(when["start"])
    local = datetime.now().astimezone()
    assert when["granularity"] == "day" and start.time().isoformat() == "00:00:00"
    assert start.utcoffset() == local.utcoffset() and start.date() == local.date()


@pytest.mark.parametrize("tz, start", [
    (None, "2026-06-01T00:00:00Z"),  # no ANNALS_TZ: a server's day is UTC's
    ("Asia/Shanghai", "2026-06-02T00:00:00+08:00"),  # 20:30 UTC is the 2nd there
])
def test_post_events_without_happened_at_is_a_day_in_annals_tz_else_utc(tmp_path, tz, start):
    services = make_services(tmp_path, store="memory", tz=tz)
    services.clock = FixedClock(datetime(2026, 6, 1, 20, 30, tzinfo=UTC))
    with http(services) as client:
        resp = client.http.post("/v1/spaces/me/events", headers=AUTH,
                                body=json.dumps({"summary": NOTE}))
    when = json.loads(resp.body)["when"]
    assert resp.status_code == 201 and when["granularity"] == "day"
    assert datetime.fromisoformat(when["start"]) == datetime.fromisoformat(start)
    assert (datetime.fromisoformat(when["end"]) - datetime.fromisoformat(when["start"])
            == timedelta(days=1))


def test_notes_of_one_day_stay_in_the_order_they_were_saved(tmp_path):
    services = make_services(tmp_path, store="memory")
    clock = services.clock = FixedClock(datetime(2026, 6, 1, 8, 0, tzinfo=UTC))
    with http(services) as client:
        for i, text in enumerate(["first", "second", "third", "fourth"]):
            clock.now = datetime(2026, 6, 1, 8, 0, tzinfo=UTC) + timedelta(seconds=7 * i)
            client.http.post("/v1/spaces/me/events", headers=AUTH,
                             body=json.dumps({"summary": f"The {text} note"}))
        listed = json.loads(client.http.get("/v1/spaces/me/events", headers=AUTH).body)
    assert [e["summary"] for e in listed["events"]] == [
        "The first note", "The second note", "The third note", "The fourth note"]
    assert {e["when"]["start"] for e in listed["events"]} == {"2026-06-01T00:00:00Z"}

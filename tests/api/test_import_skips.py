"""Issue 36 item 2: one message over the API's content limit (20,000 characters) no longer
aborts `annals import` with pydantic's text: the rest is imported, and the line and the limit
are said in plain words on stderr and in the answer's `skipped`; the exit status is 0."""

from __future__ import annotations

import json
from datetime import UTC

from click.testing import CliRunner

from chalicelib.cli import main
from chalicelib.usecases import importing
from tests.conftest import make_services, write_jsonl

LIMIT = 20_000


def tavern(tmp_path, long: int):
    lines = [{"user_name": "Sam", "character_name": "Aria"},
             {"name": "Sam", "is_user": True, "send_date": "2026-06-01T20:00:00+08:00",
              "mes": "I booked the flight to Lisbon"},
             {"name": "Aria", "is_user": False, "send_date": "2026-06-01T20:01:00+08:00",
              "mes": "长" * long},
             {"name": "Sam", "is_user": True, "send_date": "2026-06-01T20:02:00+08:00",
              "mes": "We leave on the 12th"}]
    path = tmp_path / "Aria.jsonl"
    write_jsonl(path, lines)
    return path


def test_one_oversize_message_is_skipped_and_the_rest_imported(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    out = CliRunner().invoke(main, ["import", str(tavern(tmp_path, LIMIT + 13)), "--space",
                                    "me", "--no-embed"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    reason = "the message is 20,013 characters, over the limit of 20,000"
    assert report["skipped"] == [{"session": "Aria", "line": 3, "reason": reason}]
    assert f"warning: skipped line 3 of session Aria: {reason}" in out.stderr
    assert "pydantic" not in out.output
    assert report["sessions"][0]["accepted"] == 2
    stored = make_services(tmp_path).store.get_messages("me", "Aria")
    assert [(m.seq, m.content) for m in stored] == [(0, "I booked the flight to Lisbon"),
                                                    (2, "We leave on the 12th")]


def test_a_message_at_the_limit_is_imported_and_nothing_is_skipped(tmp_path):
    sessions = importing.read_file(tavern(tmp_path, LIMIT), "auto", None, None,
                                   UTC)
    assert importing.skipped(sessions) == []
    assert len(sessions[0].messages) == 3


def test_a_time_out_of_range_is_said_plainly(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi", "timestamp": "1850-01-01"},
                                {"role": "user", "content": "hello"}]))
    sessions = importing.read_file(path, "auto", None, None, UTC)
    [left] = importing.skipped(sessions)
    assert (left.line, left.reason) == (1, "its time: time must be from 1900-01-01 to before "
                                           "2200-01-01")
    assert [m.seq for m in sessions[0].messages] == [1]

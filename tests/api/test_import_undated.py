"""Issue 21 item 8: `annals import` of a file without message times says so — a warning on
stderr and `undated` / `warning` in its answer, pointing to --start — and --start dates the
first message, the others one second apart."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta

from click.testing import CliRunner

from chalicelib.cli import main
from tests.conftest import make_services

MTIME = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
CHAT = [{"role": "user", "name": "Sam", "content": "I booked the flight to Lisbon."},
        {"role": "assistant", "name": "Aria", "content": "When do you leave?"},
        {"role": "user", "name": "Sam", "content": "On the 12th.",
         "timestamp": "2026-06-01T20:05:00+00:00"}]


def chat_file(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT))
    os.utime(path, (MTIME.timestamp(), MTIME.timestamp()))
    return path


def run(tmp_path, monkeypatch, *args: str):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    out = CliRunner().invoke(main, ["import", str(chat_file(tmp_path)), "--space", "me", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout), out.stderr


def times(tmp_path) -> list[datetime]:
    return [m.at for m in make_services(tmp_path).store.get_messages("me", "chat")]


def test_undated_messages_are_reported_with_the_time_they_got(tmp_path, monkeypatch):
    report, stderr = run(tmp_path, monkeypatch)
    assert report["undated"] == 2
    assert "2 messages had no time in the file" in report["warning"]
    assert MTIME.isoformat() in report["warning"] and "--start" in report["warning"]
    assert f"warning: {report['warning']}" in stderr
    assert times(tmp_path)[:2] == [MTIME, MTIME + timedelta(seconds=1)]


def test_start_dates_the_first_message_and_spaces_the_rest(tmp_path, monkeypatch):
    start = datetime(2026, 6, 1, 20, 0, tzinfo=UTC)
    report, stderr = run(tmp_path, monkeypatch, "--start", start.isoformat())
    assert report["undated"] == 2 and "dated from --start" in report["warning"]
    assert "give --start" not in report["warning"] and "--start" in stderr
    assert times(tmp_path) == [start, start + timedelta(seconds=1),
                               datetime(2026, 6, 1, 20, 5, tzinfo=UTC)]


def test_a_file_with_every_time_says_nothing(tmp_path, monkeypatch):
    dated = [dict(m, timestamp=f"2026-06-01T20:0{i}:00+00:00") for i, m in enumerate(CHAT)]
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    path = tmp_path / "dated.json"
    path.write_text(json.dumps(dated))
    out = CliRunner().invoke(main, ["import", str(path), "--space", "me"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["undated"] == 0 and "warning" not in report
    assert "warning" not in out.stderr

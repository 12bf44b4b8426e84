"""Issue 36 item 5: POST …/events with a 1-character summary and 3,999 characters of details
— each within its own limit — built an event summary of 4,001 characters, and the event's
validation error escaped as a 500 internal_error. Now: 422 naming both lengths (HTTP, and
`annals save` says the same); at 4,000 together the note is stored whole."""

from __future__ import annotations

import json

from click.testing import CliRunner

from chalicelib.cli import main
from tests.conftest import AUTH

EVENTS = "/v1/spaces/notes/events"


def test_summary_and_details_over_one_memory_are_a_422_not_a_500(client):
    resp = client.http.post(EVENTS, headers=AUTH,
                            body=json.dumps({"summary": "x", "details": "y" * 3999}))
    assert resp.status_code == 422, resp.body
    error = json.loads(resp.body)["error"]
    assert error["code"] == "validation_error"
    assert "4,001 characters" in error["message"] and "shorten them by 1" in error["message"]


def test_summary_and_details_that_fit_are_stored_whole(client):
    resp = client.http.post(EVENTS, headers=AUTH,
                            body=json.dumps({"summary": "x", "details": "y" * 3998}))
    assert resp.status_code == 201, resp.body
    assert json.loads(resp.body)["summary"] == "x\n" + "y" * 3998


def test_the_cli_says_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    out = CliRunner().invoke(main, ["save", "--space", "notes", "x", "--details", "y" * 3999])
    assert out.exit_code == 1 and "4,001 characters" in out.output
    assert "Traceback" not in out.output

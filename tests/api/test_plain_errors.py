"""Issue 36 item 6: a 405 says `method_not_allowed`, plain like `not_found` (not Chalice's
MethodNotAllowedError turned `method_not_allowed_error`); a file `annals import` cannot read
is refused with the formats it does read (the web importer's words: tests/web/test_modules.py)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from chalicelib.cli import main
from tests.conftest import AUTH


def test_a_wrong_method_is_method_not_allowed(client):
    resp = client.http.put("/v1/spaces/me/events", headers=AUTH, body="{}")
    assert resp.status_code == 405
    assert json.loads(resp.body)["error"]["code"] == "method_not_allowed"


def test_a_file_import_cannot_read_names_what_it_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    for name, text in (("chat.json", "{oops"), ("chat.jsonl", "[1, 2]"),
                       ("other.json", '{"nothing": "here"}')):
        path = tmp_path / name
        path.write_text(text)
        out = CliRunner().invoke(main, ["import", str(path), "--space", "me"])
        assert out.exit_code == 1
        for words in ("SillyTavern chat (.jsonl)", "OpenAI-style messages JSON",
                      "LoCoMo conversation"):
            assert words in out.output, (name, out.output)

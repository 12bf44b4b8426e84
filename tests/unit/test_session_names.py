"""Issue 36 item 1: one rule makes a session id of a chat file's name, for `annals import`
(chalicelib.domain.models.session_id_from_file_name) and the web importer (importer.js
`sessionName`, run over the same table in tests/web/test_modules.py), and every id it makes
is one the API takes: letters of any script are kept, nothing else that a URL or key splits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chalicelib.domain.errors import BadRequest
from chalicelib.domain.models import check_session, session_id_from_file_name, session_ok

CASES = json.loads((Path(__file__).parents[1] / "data" / "session_names.json").read_text(
    encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["file"][:24] for c in CASES])
def test_each_file_name_gives_its_session_id_and_the_api_takes_it(case):
    session = session_id_from_file_name(case["file"])
    assert session == case["session"]
    assert check_session(session) == session


def test_the_rule_keeps_chinese_and_drops_what_splits_a_url():
    assert session_id_from_file_name("沈砚 - 2026-11-02@20h05m00s.jsonl").startswith("沈砚-")
    for bad in ("Mika - 2026", "a/b", "a#b", "a%20b", "a?b", "a|b", "..", "", "记" * 86):
        assert not session_ok(bad), bad
        with pytest.raises(BadRequest) as err:
            check_session(bad)
        assert err.value.code == "invalid_session"

"""Issue 36 (a new user's first steps): `annals import` without --extract leaves the messages
waiting for the quiet window, and the next `annals export` said only "No memories yet." — in
English for a Chinese chat — so a new user saw nothing and did not know why. The import now
says on stderr how many messages wait and what reads them; the export of a space with no
event says so too, in the chat's language; both say nothing of it once they are read."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from chalicelib.cli import main
from tests.conftest import write_jsonl

ZH = ["我上周辞职了，下个月搬去杭州。", "好突然！那团子呢？", "团子跟我一起去，已经订好宠物托运了。"]
EN = ["I quit my job last week and I'm moving to Leeds next month.", "Wow, and Biscuit?",
      "Biscuit comes with me, the cat carrier is booked."]


def tavern(tmp_path, turns: list[str]):
    lines = [{"user_name": "小林", "character_name": "Mika"}]
    for i, text in enumerate(turns):
        lines.append({"name": "小林" if i % 2 == 0 else "Mika", "is_user": i % 2 == 0,
                      "send_date": f"2026-11-24T20:0{i}:00+08:00", "mes": text})
    path = tmp_path / "Mika - 2026-11-24@20h00m00s.jsonl"
    write_jsonl(path, lines)
    return path


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")

    def run(*args: str):
        out = CliRunner().invoke(main, list(args))
        assert out.exit_code == 0, out.output
        return out
    return run


@pytest.mark.parametrize("turns, waiting, done", [
    (ZH, "还没有记忆：3 条消息等待读取", "## 时间线"),
    (EN, "No memories yet: 3 messages wait to be read", "## Timeline"),
])
def test_an_import_left_for_the_quiet_window_says_so_and_so_does_the_export(
        cli, tmp_path, turns, waiting, done):
    imported = cli("import", str(tavern(tmp_path, turns)), "--space", "me", "--no-embed")
    assert "note: 3 new messages wait to be read into memories" in imported.stderr
    assert "annals extract --space me" in imported.stderr
    assert json.loads(imported.stdout)["events_extracted"] == 0
    before = cli("export", "--space", "me").stdout
    assert waiting in before and "annals extract --space me" in before
    cli("extract", "--space", "me")
    after = cli("export", "--space", "me").stdout
    assert done in after and "wait" not in after and "等待" not in after


def test_an_import_read_at_once_or_unchanged_says_nothing_of_waiting(cli, tmp_path):
    path = tavern(tmp_path, EN)
    first = cli("import", str(path), "--space", "me", "--no-embed", "--extract")
    assert "wait to be read" not in first.stderr
    again = cli("import", str(path), "--space", "me", "--no-embed")
    assert json.loads(again.stdout)["sessions"][0]["unchanged"] == 3
    assert "wait to be read" not in again.stderr


def test_an_empty_space_is_said_empty_in_its_own_words(cli, tmp_path):
    cli("import", str(tavern(tmp_path, ["哈哈", "嗯嗯", "好的"])), "--space", "me",
        "--no-embed", "--extract")
    out = cli("export", "--space", "me").stdout
    assert "还没有记忆。" in out and "等待" not in out

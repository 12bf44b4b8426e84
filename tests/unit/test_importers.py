"""`annals import`: OpenAI-style JSON, SillyTavern .jsonl and LoCoMo files become sessions of
messages through the normal ingest path; re-importing changes nothing; roles speak with the
file's own names, else the names given (--user-name / --assistant-name)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from chalicelib.cli import main
from chalicelib.usecases import importing as importers

T0 = datetime(2026, 6, 1, 20, 0, tzinfo=UTC)


def test_openai_messages_keep_roles_names_and_times():
    data = {"messages": [
        {"role": "system", "content": "You are Aria."},
        {"role": "user", "name": "Sam", "content": "I adopted a cat", "timestamp": 1780000000},
        {"role": "assistant", "content": [{"type": "text", "text": "Lovely!"}]},
        {"role": "tool", "content": "{}"},
        {"role": "assistant", "content": None},
    ]}
    [s] = importers.openai_messages(data, "chat", T0, UTC)
    assert [(m.seq, m.role, m.speaker, m.content) for m in s.messages] == [
        (0, "system", None, "You are Aria."), (1, "user", "Sam", "I adopted a cat"),
        (2, "assistant", None, "Lovely!")]
    assert s.messages[1].at == datetime.fromtimestamp(1780000000, UTC)
    assert s.messages[2].at == T0.replace(second=2)  # no time in the file: start + seq s


def test_sillytavern_jsonl_skips_the_header_and_reads_human_dates():
    lines = [json.dumps({"user_name": "小明", "character_name": "Aki", "create_date": "x"}),
             json.dumps({"name": "小明", "is_user": True, "send_date": "June 1, 2024 8:30pm",
                         "mes": "奶糖昨天体检了"}),
             json.dumps({"name": "Aki", "is_user": False, "send_date": 1717273800000,
                         "mes": "结果怎么样？"}),
             json.dumps({"name": "System", "is_system": True, "mes": "[hidden]"})]
    [s] = importers.sillytavern(lines, "st", T0, UTC)
    assert [(m.role, m.speaker) for m in s.messages] == [("user", "小明"), ("assistant", "Aki")]
    assert s.messages[0].at == datetime(2024, 6, 1, 20, 30, tzinfo=UTC)


@pytest.mark.parametrize(("value", "expected"), [
    # SillyTavern's humanized times (older versions' send_date; every chat file's name), local
    ("2024-6-5 @14h 56m 50s 682ms", datetime(2024, 6, 5, 14, 56, 50, 682000, tzinfo=UTC)),
    ("2024-07-12@01h31m37s123ms", datetime(2024, 7, 12, 1, 31, 37, 123000, tzinfo=UTC)),
    ("2024-7-12@01h31m37s", datetime(2024, 7, 12, 1, 31, 37, tzinfo=UTC)),
    ("1717273800000", datetime(2024, 6, 1, 20, 30, tzinfo=UTC)),  # epoch ms as text
    ("June 19, 2023 2:20pm", datetime(2023, 6, 19, 14, 20, tzinfo=UTC)),
    # what has no whole date is no time: never today's date at some hour
    ("12h30m", None), ("yesterday", None), ("3 days ago", None), ("2024-13-45@10h00m00s", None),
])
def test_sillytavern_times_in_every_form_it_wrote(value, expected):
    """dateparser read "2024-07-12@01h31m37s" as today at 01:31: an older SillyTavern export
    (send_date in the humanized form) dated every message the day it was imported."""
    assert importers.parse_time(value, UTC) == expected


def test_an_older_sillytavern_export_keeps_its_dates():
    lines = st_lines({"user_name": "小明", "character_name": "Aki"},
                     {"name": "小明", "is_user": True, "send_date": "2024-6-5 @14h 56m 50s 682ms",
                      "mes": "奶糖昨天体检了"},
                     {"name": "Aki", "is_user": False, "send_date": "2024-6-5@14h57m02s",
                      "mes": "结果怎么样？"})
    [s] = importers.sillytavern(lines, "st", T0, UTC)
    assert [m.at.date().isoformat() for m in s.messages] == ["2024-06-05", "2024-06-05"]
    assert not s.untimed


def st_lines(header: dict, *messages: dict) -> list[str]:
    return [json.dumps(x, ensure_ascii=False) for x in (header, *messages)]


def test_sillytavern_speaks_with_the_header_s_names_where_a_line_has_none():
    lines = st_lines({"user_name": "小明", "character_name": "Aki"},
                     {"is_user": True, "mes": "我今天领养了一只橘猫"},  # no name
                     {"name": "{{char}}", "is_user": False, "mes": "好可爱"},  # a placeholder
                     {"name": "You", "is_user": True, "mes": "取名叫奶糖"},
                     {"name": "Bo", "is_user": False, "mes": "Hi"})  # a group chat's other
    [s] = importers.sillytavern(lines, "st", T0, UTC,
                                importers.RoleNames(user="Mel", assistant="Kai"))
    assert [m.speaker for m in s.messages] == ["小明", "Aki", "小明", "Bo"]  # the file's first


def test_names_given_for_the_roles_fill_in_where_the_file_has_placeholders_only():
    lines = st_lines({"user_name": "User", "character_name": "Assistant"},
                     {"name": "User", "is_user": True, "mes": "I moved to Berlin"},
                     {"is_user": False, "mes": "Congratulations!"})
    [kept] = importers.sillytavern(lines, "st", T0, UTC)
    assert [m.speaker for m in kept.messages] == ["User", None]  # stored as roles: no one
    [named] = importers.sillytavern(lines, "st", T0, UTC,
                                    importers.RoleNames(user="Mel", assistant="Kai"))
    assert [m.speaker for m in named.messages] == ["Mel", "Kai"]


def test_openai_messages_keep_their_own_names_and_take_the_given_ones_otherwise():
    data = [{"role": "system", "content": "Be kind."},
            {"role": "user", "content": "I moved to Berlin"},
            {"role": "assistant", "name": "Aria", "content": "Welcome!"},
            {"role": "user", "name": "user", "content": "Thanks"}]
    [s] = importers.openai_messages(data, "chat", T0, UTC,
                                    importers.RoleNames(user="Mel", assistant="Kai"))
    assert [(m.role, m.speaker) for m in s.messages] == [
        ("system", None), ("user", "Mel"), ("assistant", "Aria"), ("user", "Mel")]


def test_locomo_sessions_map_to_dia_ids():
    data = {"speaker_a": "Ann", "speaker_b": "Bo",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Hi"}],
            "session_2_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I paint",
                           "blip_caption": "a lake"}],
            "session_1_date_time": "2:00 pm on 1 May, 2023"}
    out = importers.locomo(data, UTC)
    assert [s.session for s in out] == ["1", "2"]
    assert out[0].messages[0].content == "I paint [shares a photo: a lake]"
    assert out[1].messages[0].at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_bad_files_are_clear_errors(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{oops")
    with pytest.raises(importers.ImportFormatError, match="not JSON"):
        importers.read_file(bad, "auto", None, T0, UTC)


def run(args: list[str]) -> dict:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("{"):])


def test_cli_import_is_idempotent_and_can_extract(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([
        {"role": "user", "name": "Sam", "content": "I booked the flight to Lisbon."},
        {"role": "assistant", "name": "Aria", "content": "When do you leave?"}]))
    args = ["import", str(chat), "--space", "me", "--start", "2026-06-01T20:00:00+00:00"]
    report = run([*args, "--extract"])
    assert report["sessions"] == [{"session": "chat", "accepted": 2, "unchanged": 0,
                                   "changed": 0}]
    assert report["events_extracted"] >= 1
    assert run(args)["sessions"][0]["unchanged"] == 2
    missing = CliRunner().invoke(main, ["import", str(tmp_path / "nope.json"), "--space", "me"])
    assert missing.exit_code != 0


def test_cli_import_names_the_roles_and_refuses_a_placeholder_for_a_name(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([
        {"role": "user", "content": "I booked the flight to Lisbon."},
        {"role": "assistant", "content": "When do you leave?"}]))
    args = ["import", str(chat), "--space", "me", "--start", "2026-06-01T20:00:00+00:00"]
    run([*args, "--user-name", "Sam", "--assistant-name", "Aria"])
    from chalicelib.config import Settings
    from chalicelib.domain.records import Person
    from chalicelib.wiring import build_services

    store = build_services(Settings()).store
    assert [m.speaker for m in store.get_messages("me", "chat")] == ["Sam", "Aria"]
    assert {p.key for p in store.list_records(Person, "me")} == {"Sam", "Aria"}
    refused = CliRunner().invoke(main, [*args, "--user-name", "{{user}}"])
    assert refused.exit_code != 0 and "not a name" in refused.output


def test_a_file_without_times_reimports_unchanged_even_after_it_is_touched_or_grows(
        tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    chat = tmp_path / "chat.json"
    turns = [{"role": "user", "name": "Sam", "content": "I booked the flight to Lisbon."},
             {"role": "assistant", "name": "Aria", "content": "When do you leave?"}]
    chat.write_text(json.dumps(turns))
    os.utime(chat, (1_780_000_000, 1_780_000_000))
    first = run(["import", str(chat), "--space", "me"])["sessions"][0]
    assert first["accepted"] == 2
    os.utime(chat, (1_790_000_000, 1_790_000_000))  # touched: another modification time
    assert run(["import", str(chat), "--space", "me"])["sessions"][0]["unchanged"] == 2
    chat.write_text(json.dumps([*turns, {"role": "user", "name": "Sam",
                                         "content": "Next Friday."}]))
    grown = run(["import", str(chat), "--space", "me"])["sessions"][0]
    assert (grown["accepted"], grown["unchanged"], grown["changed"]) == (1, 2, 0)
    from chalicelib.config import Settings
    from chalicelib.wiring import build_services

    stored = build_services(Settings()).store.get_messages("me", "chat")
    assert stored[0].at.timestamp() == 1_780_000_000  # the file's time at the first import
    assert stored[0].at < stored[1].at < stored[2].at


def test_cli_exports_a_graph_and_imports_it_into_another_space(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([
        {"role": "user", "name": "Sam", "content": "I booked the flight to Lisbon."},
        {"role": "assistant", "name": "Aria", "content": "When do you leave?"},
        {"role": "user", "name": "Sam", "content": "Next Friday, for Ana's wedding in Lisbon."}]))
    run(["import", str(chat), "--space", "me", "--start", "2026-06-01T20:00:00+00:00",
         "--extract"])
    result = CliRunner().invoke(main, ["export", "--space", "me", "--format", "graph"])
    assert result.exit_code == 0, result.output
    graph = json.loads(result.stdout)
    assert graph["events"] and any(e["name"] == "Lisbon" for e in graph["entities"])
    doc = tmp_path / "graph.json"
    doc.write_text(result.stdout)
    imported = run(["import", str(doc), "--space", "copy", "--format", "graph"])
    assert imported["events_created"] == len(graph["events"])
    assert run(["import", str(doc), "--space", "copy", "--format", "graph"])[
        "events_created"] == 0
    found = run(["recall", "--space", "copy", "Lisbon wedding", "--json"])
    assert any("Lisbon" in c["text"] for c in found["cards"])
    bad = tmp_path / "bad.json"
    bad.write_text('{"events": [{"id": 1}]}')
    failed = CliRunner().invoke(main, ["import", str(bad), "--space", "x", "--format", "graph"])
    assert failed.exit_code != 0 and "not a graph document" in failed.output

"""The companion-chat bench (bench/companion.py, bench/data/companion/): the key loads and
checks against the files, questions are scored from given cards, profile facts are judged
right / stale / other, the no-event rule, the tables. No model; the one run end to end uses
the hash embedder on one chat."""

from __future__ import annotations

import importlib.util
import json
import re
import time
from datetime import datetime

import pytest
from click.testing import CliRunner

from bench import companion as C
from bench.cli import bench
from chalicelib.domain.models import ID_PATTERN


@pytest.fixture(scope="module")
def key() -> dict:
    return C.load_key()


# ------------------------------------------------------------------ the key and the files


def test_every_chat_of_the_key_is_there_and_checks(key):
    spec = importlib.util.spec_from_file_location("check_key", C.DATA / "check_key.py")
    check_key = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_key)
    assert len(key) == 6
    for name, entry in key.items():
        assert (C.DATA / name).exists(), name
        assert check_key.check(name, entry, False) == [], name


def test_questions_are_asked_at_their_own_now_else_an_hour_after_the_last_message(key):
    entry = key["阿澈 - 2026-09-15@22h03m05s.jsonl"]
    qs = {q.id: q for q in C.questions(entry)}
    assert len(qs) == 16
    assert qs["c1-q06"].now == datetime.fromisoformat("2026-09-24T20:30:00+08:00")
    assert qs["c1-q01"].now == datetime.fromisoformat("2026-10-21T21:03:00+08:00")
    assert qs["c1-q01"].evidence == [65, 75] and not qs["c1-q01"].abstain
    assert qs["c1-q10"].superseded == [16]
    assert qs["c1-q15"].abstain and qs["c1-q15"].evidence == []


def test_chat_files_default_to_the_keys_and_only_picks_by_name(key):
    assert [p.name for p in C.chat_files([], key)] == list(key)
    assert [p.name for p in C.chat_files([], key, only="juni")] == [
        "Juniper - 2026-11-08@20h10m47s.jsonl"]
    assert [p.name for p in C.chat_files([], key, only="温言")] == [
        "温言 - 2026-10-11@21h40m33s.jsonl"]
    with pytest.raises(KeyError):
        C.entry_for(key, C.DATA / "nobody.jsonl")


def test_a_characters_name_becomes_a_valid_space_id_unique_per_name(key):
    ids = [C.space_id(e["character"]) for e in key.values()]
    assert all(re.fullmatch(ID_PATTERN, i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    assert C.space_id("Ilse Marrow") == "Ilse-Marrow"
    assert C.space_id("阿澈") != C.space_id("沈砚")
    assert C.space_id("阿澈").startswith("xn--")
    assert re.fullmatch(ID_PATTERN, C.space_id("Zoë's cat"))
    assert C.space_id("...") == "chat"


# ------------------------------------------------------------------ scoring a question


def card(*turns: str) -> dict:
    return {"sources": list(turns), "text": "x"}


EV = ["Dc1:5", "Dc1:7"]


def test_found_at_10_needs_an_evidence_turn_in_one_of_the_first_ten_cards():
    cards = [card(f"Dc1:{90 + i}") for i in range(9)] + [card("Dc1:6", "Dc1:7")]
    assert C.score_cards(EV, cards)["found@10"] is True
    late = [card(f"Dc1:{90 + i}") for i in range(10)] + [card("Dc1:5")]
    assert C.score_cards(EV, late)["found@10"] is False


def test_recall_at_k_counts_distinct_turns_and_a_wide_card_spends_them():
    wide = card(*(f"Dc1:{i}" for i in range(10, 16)), "Dc1:5")  # 5 is the 7th distinct turn
    got = C.score_cards(EV, [wide, card("Dc1:7")])
    assert got["R@5"] == 0.0 and got["R@10"] == 1.0 and got["found@10"] is True


def test_the_hook_hits_only_in_its_first_two_cards_and_abstains_with_none():
    assert C.score_hook(EV, [], [card("Dc1:1"), card("Dc1:7")])["hit@2"] is True
    assert C.score_hook(EV, [], [card("Dc1:1"), card("Dc1:2"), card("Dc1:5")])["hit@2"] is False
    assert C.score_hook([], [], [])["abstained"] is True
    assert "hit@2" not in C.score_hook([], [], [card("Dc1:1")])
    stale = C.score_hook(EV, ["Dc1:3"], [card("Dc1:3")])
    assert stale["stale@2"] is True and stale["hit@2"] is False
    assert C.score_hook(EV, ["Dc1:3"], [card("Dc1:3"), card("Dc1:5")])["stale@2"] is False


def test_a_never_said_question_has_no_found_figure_only_whether_cards_came_back():
    got = C.score_cards([], [])
    assert got["zero_cards"] is True and "found@10" not in got


# ------------------------------------------------------------------ facts

ENTRY = {
    "current": [{"attribute": "works_at", "any": ["安安宠物医院", "安安"]},
                {"attribute": "pet", "any": ["煤球"]},
                {"attribute": "lives_in", "any": ["成都", "Chengdu"]}],
    "closed": [{"attribute": "works_at", "any": ["皓齿口腔", "皓齿"], "ended_at_message": 63},
               {"attribute": "owns", "any": ["滑板", "skateboard"], "ended_at_message": 81}],
}


def test_a_fact_is_right_stale_or_other_by_attribute_and_substring_either_way():
    assert C.judge_fact("works_at", "安安宠物医院", ENTRY) == "right"
    assert C.judge_fact("works_at", "安安宠物医院的前台", ENTRY) == "right"
    assert C.judge_fact("lives_in", "chengdu", ENTRY) == "right"  # case-insensitive
    assert C.judge_fact("works_at", "皓齿", ENTRY) == "stale"
    assert C.judge_fact("owns", "a Skateboard", ENTRY) == "stale"
    assert C.judge_fact("pet", "成都", ENTRY) == "other"  # right value, wrong attribute
    assert C.judge_fact("pet", "", ENTRY) == "other"


def test_fact_scores_give_precision_over_shown_and_completeness_over_the_key():
    got = C.fact_scores([("works_at", "安安"), ("works_at", "皓齿口腔"), ("pet", "土豆"),
                         ("lives_in", "成都")], ENTRY)
    assert (got["shown"], got["right"], got["stale"], got["other"]) == (4, 2, 1, 1)
    assert got["precision"] == 0.5
    assert got["current_matched"] == 2 and got["completeness"] == pytest.approx(2 / 3)
    assert got["missed"] == ["pet=煤球"]
    assert C.fact_scores([], ENTRY)["precision"] is None


def test_stale_in_core_counts_closed_values_the_core_block_says_under_their_attribute():
    core = ("关于对方（当前）：\n- 小满: 住在 成都; 工作单位 皓齿口腔; 不喜欢 皓齿的老板\n"
            "- 阿凯: 拥有 Skateboard")
    assert C.core_facts(core) == [("lives_in", "成都"), ("works_at", "皓齿口腔"),
                                  ("dislikes", "皓齿的老板"), ("owns", "Skateboard")]
    assert C.stale_in_core(core, ENTRY) == ["works_at=皓齿口腔", "owns=Skateboard"]
    english = "About them (now):\n- Nora: lives in Chengdu; works at 皓齿 (old); likes 皓齿"
    assert C.stale_in_core(english, ENTRY) == ["works_at=皓齿 (old)"]
    assert C.stale_in_core(None, ENTRY) == []


# ------------------------------------------------------------------ the chronicle


def test_an_event_counts_as_from_no_event_turns_only_when_every_cited_turn_is_one():
    no_event = {"Dc1:0", "Dc1:1", "Dc1:2", "Dc1:4"}
    character = {"Dc1:0", "Dc1:2", "Dc1:4"}
    events = [C.event_view("greeting", [("c1", 0, 2)]),
              C.event_view("a fact", [("c1", 2, 3)]),
              C.event_view("her reply", [("c1", 4, 4)]),
              C.event_view("no sources", [])]
    got = C.chronicle(events, 8, no_event, character)
    assert got["events"] == 4 and got["events_per_message"] == 0.5
    assert got["no_event_only"] == 2 and got["no_event_only_titles"] == ["greeting", "her reply"]
    assert got["character_only"] == 1 and got["character_only_titles"] == ["her reply"]


# ------------------------------------------------------------------ summaries and tables


def _record(kind: str, abstain: bool, found: bool | None, hit: bool | None,
            hook_cards: int) -> dict:
    annals = {"zero_cards": False, "R@5": 1.0 if found else 0.0, "R@10": 1.0 if found else 0.0}
    hook = {"abstained": hook_cards == 0, "verdict": "hit" if hook_cards else "none",
            "cards": [card("Dc1:1")] * hook_cards, "core_sent": True,
            "second": {"verdict": "hit", "cards": 1, "core_sent": False}}
    if not abstain:
        annals["found@10"] = found
        hook["hit@2"] = hit
    return {"kind": kind, "abstain": abstain, "results": {"annals": annals, "hook": hook}}


def test_summaries_keep_answerable_and_never_said_apart():
    rows = [_record("plain", False, True, True, 2), _record("crosslingual", False, False, False, 0),
            _record("never_said", True, None, None, 0), _record("never_said", True, None, None, 1)]
    s = C.summarize(rows)
    assert s["found@10"] == {"k": 1, "n": 2, "share": 0.5}
    assert s["hook_hit@2"]["k"] == 1
    assert s["abstention"] == {"k": 1, "n": 2, "share": 0.5}
    assert s["false_abstain"]["k"] == 1
    assert s["crosslingual_found@10"] == {"k": 0, "n": 1, "share": 0.0}
    assert s["R@5 annals"] == 0.5 and s["R@5 bm25"] is None
    assert s["hook_cards"] == 0.75 and s["core_sent"]["k"] == 4
    assert s["second_call"]["core_sent"] == {"k": 0, "n": 4, "share": 0.0}
    assert list(C.by_kind(rows)) == ["plain", "crosslingual", "never_said"]


def test_the_table_has_its_rows_in_the_issues_order():
    rows = [_record("plain", False, True, True, 2), _record("never_said", True, None, None, 0)]
    chat = {"chat": "阿澈", "questions": C.summarize(rows),
            "facts": C.fact_scores([("works_at", "安安")], ENTRY), "stale_in_core": 0,
            "chronicle": C.chronicle([], 10, set(), set()), "runtime_s": 12.0}
    report = {"chats": [chat], "pooled": C.pooled([chat], rows), "by_kind": C.by_kind(rows)}
    lines = C.format_table(report)
    assert lines[0] == "|  | 阿澈 | pooled |"
    names = [line.split(" | ")[0].removeprefix("| ") for line in lines[2:]]
    assert names == list(C.ROW_NAMES)
    assert lines[2].endswith("| 1/1 | 1/1 = 1.000 |")
    kinds = C.format_kinds(report)
    assert kinds[2].startswith("| plain | 1 |") and "never_said" in kinds[-1]


# ------------------------------------------------------------------ end to end


def test_one_chat_end_to_end_with_the_hash_embedder(tmp_path, monkeypatch):
    from bench.locomo import PlainBaselines

    search = PlainBaselines.search

    def broken_bm25(self, services, conv, kind, query, k=C.CARDS):
        if kind == "bm25":
            raise RuntimeError("bm25 is down")
        return search(self, services, conv, kind, query, k)

    monkeypatch.setattr(PlainBaselines, "search", broken_bm25)
    started = time.perf_counter()
    report = C.run(only="Sol", embedder="hash", data_dir=tmp_path / "d",
                   json_path=tmp_path / "r.json", dump_path=tmp_path / "q.jsonl",
                   progress=False)
    assert time.perf_counter() - started < 20
    # an error in one system of a question is reported; the rest is still measured
    assert {e["system"] for e in report["errors"]} == {"bm25"}
    assert len(report["errors"]) == 16
    (chat,) = report["chats"]
    assert chat["space"] == "Sol" and chat["person"] == "Vivi"
    assert chat["build"]["messages"] == 97 and chat["chronicle"]["messages"] == 97
    q = chat["questions"]
    assert q["questions"] == 16 and q["found@10"]["n"] == 14 and q["abstention"]["n"] == 2
    assert q["R@5 annals"] is not None and q["R@5 dense"] is not None
    first = report["per_question"][0]["results"]["hook"]
    assert first["trace"] and "second" in first and first["window"].startswith("bench-c6-q01-")
    assert len((tmp_path / "q.jsonl").read_text(encoding="utf-8").splitlines()) == 16
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["chats"][0]["space"] \
        == "Sol"
    assert "| found@10 (answerable) |" in C.format_report(report)

    monkeypatch.setattr(PlainBaselines, "search", search)
    again = C.run(only="Sol", embedder="hash", data_dir=tmp_path / "d", progress=False)
    assert again["errors"] == [] and again["chats"][0]["build"]["reused"] is True
    assert again["chats"][0]["questions"]["found@10"] == q["found@10"]


def test_the_cli_command_is_there_and_says_when_nothing_matches():
    runner = CliRunner()
    helped = runner.invoke(bench, ["companion", "--help"])
    assert helped.exit_code == 0
    assert all(o in helped.output for o in ("--data-dir", "--json", "--dump", "--only",
                                            "--quiet", "--key"))
    missed = runner.invoke(bench, ["companion", "--only", "no such chat", "--quiet"])
    assert missed.exit_code != 0 and "no chat file matches" in missed.output

"""The Chinese and cross-lingual benches (bench/zh.py, bench/data/zh_life.json,
crosslingual.json): the data validates and matches its generator, the validator catches
broken evidence and windows, and the scoring / tables are right. No model: the one run end
to end uses the hash embedder on a two-session space."""

from __future__ import annotations

import copy
import json
import math
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from bench import zh as Z
from bench.cli import bench

DATA = Path(Z.__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def zh_life() -> dict:
    return json.loads((DATA / "zh_life.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def crosslingual() -> dict:
    return json.loads((DATA / "crosslingual.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the data


def test_the_data_validates(zh_life, crosslingual):
    assert Z.validate_zh_life(zh_life) == []
    assert Z.validate_crosslingual(crosslingual, zh_life) == []


def test_the_data_has_the_sizes_the_bench_promises(zh_life, crosslingual):
    s = Z.sizes(zh_life, crosslingual)
    total = s["zh_life_total"]
    assert 3 <= total["spaces"] <= 4
    assert 150 <= total["questions"] <= 250
    assert all(n >= 15 for n in total["kinds"].values()), total["kinds"]
    for sid, space in s["zh_life"].items():
        assert space["sessions"] >= 8, sid
        lo, hi = space["turns_per_session"]
        assert lo >= 30 and hi <= 60, (sid, lo, hi)
    x = s["crosslingual"]
    assert x["en_questions_about_zh"] >= 60
    assert x["zh_questions_about_en"] == x["en_questions_about_en"] >= 60


def test_the_files_are_what_the_generator_writes(zh_life, crosslingual):
    sys.path.insert(0, str(DATA))
    try:
        import make_zh_life
    finally:
        sys.path.remove(str(DATA))
    built_zh, built_xl = make_zh_life.build_all()
    assert json.loads(json.dumps(built_zh, ensure_ascii=False)) == zh_life
    assert json.loads(json.dumps(built_xl, ensure_ascii=False)) == crosslingual


def test_every_time_question_names_its_window_and_has_a_look_alike_outside(zh_life):
    for space in zh_life["spaces"]:
        facts = {f["id"]: f for f in space["facts"]}
        for q in space["questions"]:
            if q["kind"] != "time":
                continue
            lo, hi = q["window"]
            assert all(lo <= facts[f]["on"][0] < hi for f in q["facts"]), q["id"]
            topics = {t for f in q["facts"] for t in facts[f]["topics"]}
            assert any(set(f["topics"]) & topics and not lo <= f["on"][0] < hi
                       for f in facts.values()), q["id"]


def test_latin_names_stay_latin_in_the_chinese_questions(crosslingual):
    zh = [q["question"] for q in crosslingual["questions_about_en"] if q["lang"] == "zh"]
    for name in ("Pickle", "Miso", "Jess", "Dan"):
        assert any(name in text for text in zh), name


def test_the_licence_is_stated(zh_life, crosslingual):
    assert "CC0" in zh_life["licence"] and "CC0" in crosslingual["licence"]


# ------------------------------------------------------------------ the validator


def _first_time_question(data: dict) -> tuple[dict, dict]:
    space = data["spaces"][0]
    return space, next(q for q in space["questions"] if q["kind"] == "time")


def test_the_validator_catches_missing_evidence(zh_life):
    data = copy.deepcopy(zh_life)
    _space, q = _first_time_question(data)
    q["evidence"].append({"session": 1, "seq": 9999})
    problems = Z.validate_zh_life(data)
    assert any("does not exist" in p for p in problems)


def test_the_validator_catches_assistant_evidence_and_evidence_said_after_now(zh_life):
    data = copy.deepcopy(zh_life)
    space = data["spaces"][0]
    q = space["questions"][0]
    q["evidence"] = [{"session": 1, "seq": 2}]  # the companion's reply to the greeting
    q["now"] = "2020-01-01T00:00:00+08:00"
    problems = Z.validate_zh_life(data)
    assert any("not a user turn" in p for p in problems)
    assert any("after now" in p for p in problems)


def test_the_validator_catches_a_window_that_misses_the_fact(zh_life):
    data = copy.deepcopy(zh_life)
    _space, q = _first_time_question(data)
    q["window"] = ["2030-01-01", "2030-01-02"]
    assert any("outside" in p for p in Z.validate_zh_life(data))
    q["window"] = None
    assert any("needs a window" in p for p in Z.validate_zh_life(data))


def test_the_validator_wants_a_look_alike_outside_the_window(zh_life):
    data = copy.deepcopy(zh_life)
    _space, q = _first_time_question(data)
    q["window"] = ["2000-01-01", "2100-01-01"]  # every fact inside: no look-alike outside
    assert any("no look-alike" in p for p in Z.validate_zh_life(data))


def test_the_validator_checks_cross_lingual_twins(zh_life, crosslingual):
    data = copy.deepcopy(crosslingual)
    data["en_questions_about_zh"][0]["evidence"] = [{"session": 1, "seq": 1}]
    data["questions_about_en"][0]["evidence"] = [{"session": 1, "seq": 1}]
    problems = Z.validate_crosslingual(data, zh_life)
    assert any("evidence differs" in p for p in problems)
    assert any("twin differs" in p for p in problems)


# ------------------------------------------------------------------ loading


def test_loading_groups_the_questions_and_keeps_twins_on_identical_evidence(zh_life,
                                                                          crosslingual):
    spaces, questions = Z.load(zh_life, crosslingual, ("zh", "crosslingual"))
    assert {s.id for s in spaces} == {s["id"] for s in zh_life["spaces"]} | {"en-maya"}
    groups = {g: [q for q in questions if q.group == g] for g in
              ("zh", "xl_en_zh", "xl_en_zh_same", "xl_zh_en", "xl_zh_en_same")}
    assert len(groups["zh"]) == sum(len(s["questions"]) for s in zh_life["spaces"])
    assert len(groups["xl_en_zh"]) == len(groups["xl_en_zh_same"])
    for cross, same in zip(groups["xl_en_zh"], groups["xl_en_zh_same"], strict=True):
        assert cross.same_as == same.id and cross.evidence == same.evidence
        assert cross.lang == "en" and same.lang == "zh" and cross.now == same.now
    assert all(q.lang == "zh" for q in groups["xl_zh_en"])
    assert all(q.lang == "en" for q in groups["xl_zh_en_same"])
    q = next(q for q in groups["zh"] if q.id == "xy-t04")
    assert q.window == (date(2026, 9, 22), date(2026, 9, 23))
    assert q.now.utcoffset() == timedelta(hours=8)
    assert all(e.startswith("D") and ":" in e for e in q.evidence)
    turn = spaces[0].sessions[0].turns[0]
    assert turn.at.tzinfo is not None and spaces[0].space == "zh-xiaoyu"


# ------------------------------------------------------------------ scoring


def _card(sources, start=None, end=None):
    when = None if start is None else SimpleNamespace(start=start, end=end)
    return SimpleNamespace(sources=[SimpleNamespace(session=s, seq_start=a, seq_end=b)
                                    for s, a, b in sources], when=when, text="t")


def test_card_dates_are_read_in_the_space_time_zone():
    # 2026-05-23 17:30 UTC is 2026-05-24 01:30 in Shanghai
    start = datetime(2026, 5, 23, 17, 30, tzinfo=UTC)
    rec = Z.card_record(_card([("6", 3, 4)], start, start + timedelta(minutes=1)),
                        "Asia/Shanghai")
    assert rec["sources"] == ["D6:3", "D6:4"]
    assert rec["date_start"] == "2026-05-24" and rec["date_end"] == "2026-05-25"
    assert Z.card_record(_card([("1", 1, 1)]), "Asia/Shanghai")["date_start"] is None


def _question(qid, kind, evidence, window=None, group="zh", same_as=None):
    return Z.Question(id=qid, space="s", group=group, kind=kind, lang="zh", question=qid,
                      now=datetime(2026, 11, 1, tzinfo=UTC), evidence=evidence, window=window,
                      same_as=same_as)


def test_score_counts_distinct_turns_and_temporal_hits():
    q = _question("q", "time", ["D2:5"], (date(2026, 9, 22), date(2026, 9, 23)))
    cards = [{"sources": ["D1:1", "D1:2"], "date_start": "2026-09-22"},
             {"sources": ["D2:5"], "date_start": "2026-09-23"}]
    s = Z.score(q, cards)
    assert s["R@1"] == 0.0 and s["R@5"] == 1.0 and s["hit@10"] == 1.0
    assert s["temporal_hit@5"] is False  # it cites the evidence but is dated outside
    cards[1]["date_start"] = "2026-09-22"
    assert Z.score(q, cards)["temporal_hit@5"] is True


def _results(r10, hook=None, t=None):
    out = {k: {"R@1": r10, "R@5": r10, "R@10": r10, "hit@10": float(r10 > 0),
               "temporal_hit@5": t, "ms": 1.0, "cards": 20 if r10 else 0}
           for k in Z.SYSTEMS}
    if hook is not None:
        out["hook"] = {"cards": 2, "hit@1": hook, "hit@2": hook}
    return out


def test_the_table_is_per_kind_and_overall_with_the_delta_vs_the_best_baseline():
    a = _question("a", "single", ["D1:1"])
    a.results = _results(1.0, hook=1.0)
    a.results["bm25"]["R@10"] = 0.5
    a.results["dense"]["R@10"] = 0.0
    b = _question("b", "time", ["D1:2"], (date(2026, 1, 1), date(2026, 1, 2)))
    b.results = _results(0.0, hook=0.0, t=False)
    b.results["dense"]["R@10"] = 1.0
    b.results["dense"]["temporal_hit@5"] = True
    t = Z.table([a, b])
    assert set(t) == {"single", "time", "all"}
    assert t["single"]["delta_vs_best_baseline"]["R@10"] == pytest.approx(0.5)
    assert t["time"]["delta_vs_best_baseline"]["R@10"] == pytest.approx(-1.0)
    assert t["time"]["annals"]["temporal_hit@5"] == 0.0
    assert t["time"]["dense"]["temporal_hit@5"] == 1.0
    assert t["single"]["annals"]["temporal_questions"] == 0
    assert t["all"]["annals"]["R@10"] == pytest.approx(0.5)
    assert t["all"]["hook"]["hit@2"] == pytest.approx(0.5)
    assert t["time"]["annals"]["zero_cards"] == 1.0 and t["single"]["annals"]["zero_cards"] == 0
    lines = Z.format_zh(t)
    assert lines[0].startswith("kind") and any(line.startswith("all") for line in lines)


def test_errors_are_left_out_of_the_means():
    a = _question("a", "single", ["D1:1"])
    a.results = _results(1.0)
    b = _question("b", "single", ["D1:2"])
    b.results = {k: {"error": "boom"} for k in Z.SYSTEMS}
    assert Z.summarize([a, b], "annals")["R@10"] == 1.0
    assert Z.summarize([a, b], "annals")["questions"] == 1


def test_cross_lingual_ratios_compare_identical_evidence():
    cross = [_question(f"c{i}", "single", ["D1:1"], group="xl_en_zh") for i in range(2)]
    same = [_question(f"s{i}", "single", ["D1:1"], group="xl_en_zh_same") for i in range(2)]
    for q, r in zip(cross + same, (0.0, 1.0, 1.0, 1.0), strict=True):
        q.results = _results(r, hook=r)
    x = Z.crosslingual_table(cross + same)
    assert set(x) == {"en→zh"}
    row = x["en→zh"]
    assert row["annals"]["cross"]["R@10"] == 0.5 and row["annals"]["same"]["R@10"] == 1.0
    assert row["annals"]["ratio@10"] == 0.5
    assert row["by_kind"]["single"]["annals"] == {"cross": 0.5, "same": 1.0}
    assert any("ratio" in line for line in Z.format_crosslingual(x))


def test_a_ratio_over_nothing_is_none():
    cross = [_question("c", "single", ["D1:1"], group="xl_zh_en")]
    same = [_question("s", "single", ["D1:1"], group="xl_zh_en_same")]
    cross[0].results, same[0].results = _results(1.0), _results(0.0)
    assert Z.crosslingual_table(cross + same)["zh→en"]["annals"]["ratio@10"] is None
    assert not math.isnan(Z.crosslingual_table(cross + same)["zh→en"]["annals"]["cross"]
                          ["R@10"])


# ------------------------------------------------------------------ end to end (hash)


def _tiny_zh_life() -> dict:
    def turn(seq, role, text, minute):
        return {"seq": seq, "role": role, "speaker": "小雨" if role == "user" else "阿狸",
                "content": text, "at": f"2026-09-2{minute // 100}T21:{minute % 100:02d}:00+08:00"}

    s1 = [turn(1, "user", "在吗", 201), turn(2, "assistant", "在的", 202),
          turn(3, "user", "今天带年糕去宠物医院打了疫苗", 203), turn(4, "assistant", "它乖吗", 204)]
    s2 = [turn(1, "user", "晚上好", 701), turn(2, "assistant", "晚上好呀", 702),
          turn(3, "user", "今天去牙医那里补了牙", 703), turn(4, "assistant", "疼不疼", 704)]
    facts = [{"id": "vet", "session": 1, "seqs": {"a": [3]}, "on": ["2026-09-22"] * 2,
              "topics": ["doctor"]},
             {"id": "tooth", "session": 2, "seqs": {"a": [3]}, "on": ["2026-09-27"] * 2,
              "topics": ["doctor"]}]
    questions = [
        {"id": "q1", "kind": "time", "lang": "zh", "question": "9月22号我带年糕去干嘛了",
         "now": "2026-09-29T20:00:00+08:00", "evidence": [{"session": 1, "seq": 3}],
         "facts": ["vet"], "answer": "打疫苗", "window": ["2026-09-22", "2026-09-23"]},
        {"id": "q2", "kind": "single", "lang": "zh", "question": "我补牙了吗",
         "now": "2026-09-29T20:00:00+08:00", "evidence": [{"session": 2, "seq": 3}],
         "facts": ["tooth"], "answer": "补了"}]
    return {"licence": "CC0-1.0", "spaces": [{
        "id": "zh-tiny", "lang": "zh", "time_zone": "Asia/Shanghai", "user": "小雨",
        "assistant": "阿狸", "now": "2026-09-29T20:00:00+08:00",
        "sessions": [{"session": 1, "turns": s1}, {"session": 2, "turns": s2}],
        "facts": facts, "questions": questions}]}


def test_the_bench_runs_end_to_end_with_the_hash_embedder(tmp_path):
    data = _tiny_zh_life()
    assert Z.validate_zh_life(data) == []
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    started = time.perf_counter()
    report = Z.run(("zh",), embedder="hash", zh_path=path, json_path=tmp_path / "r.json",
                   dump_path=tmp_path / "d.jsonl", progress=False)
    assert time.perf_counter() - started < 30
    assert report["errors"] == [], report["errors"][:1]
    assert report["zh"]["all"]["questions"] == 2
    assert report["zh"]["time"]["annals"]["temporal_questions"] == 1
    assert report["zh"]["all"]["bm25"]["R@10"] is not None
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["parts"] == ["zh"]
    assert len((tmp_path / "d.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    assert "Chinese bench" in Z.format_report(report)


def test_the_cli_has_both_commands():
    runner = CliRunner()
    for name in ("zh", "crosslingual"):
        result = runner.invoke(bench, [name, "--help"])
        assert result.exit_code == 0 and "--json" in result.output
    assert "--crosslingual" in runner.invoke(bench, ["zh", "--help"]).output

"""The LoCoMo bench's hook-sized and foreign-question passes (bench/locomo.py, metrics.py),
on two tiny made-up conversations with the hash embedder (no data files)."""

from __future__ import annotations

import json
import math

from bench import metrics as M
from bench.locomo import (
    foreign_pairs,
    format_table,
    load_conversation,
    run_locomo,
    swap_names,
)
from tests.unit.test_bench_smoke import CONVERSATION


def card(*sources: str) -> dict:
    return {"sources": list(sources), "date_start": None, "date_end": None, "text": "x"}


def test_card_hits_count_cards_not_turns():
    wide = card(*(f"D1:{i}" for i in range(1, 9)))  # cites D1:8 as its 8th turn
    assert M.card_hit(["D1:8"], [wide], 1) == 1.0
    assert M.hit_at_k(["D1:8"], [wide], 1) == 0.0  # the turn-based metric would not count it
    assert M.card_hit(["D2:1"], [card("D1:1"), card("D2:1")], 1) == 0.0
    assert M.card_hit(["D2:1"], [card("D1:1"), card("D2:1")], 2) == 1.0
    assert M.card_hit(["D2:1"], [], 2) == 0.0
    assert math.isnan(M.card_hit([], [card("D1:1")], 2))
    assert (M.abstained([]), M.abstained([card("D1:1")])) == (1.0, 0.0)


def write(tmp_path, name: str, data: dict):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def other_conversation() -> dict:
    """Different people and different things: Cleo and Dev garden and bake."""
    return {
        "speaker_a": "Cleo", "speaker_b": "Dev",
        "session_1_date_time": "9:00 am on 1 June, 2023",
        "session_1": [
            {"speaker": "Cleo", "dia_id": "D1:1", "text": "My tomatoes finally turned red."},
            {"speaker": "Dev", "dia_id": "D1:2", "text": "I baked sourdough bread for Ben."},
        ],
        "qa": [{"question": "What did Dev bake?", "answer": "sourdough",
                "evidence": ["D1:2"], "category": 4}],
    }


def test_names_are_swapped_as_whole_words_in_one_pass(tmp_path):
    ana = load_conversation(write(tmp_path, "a", CONVERSATION))
    cleo = load_conversation(write(tmp_path, "c", other_conversation()))
    assert swap_names("When did Ana adopt Ben's puppy? Anatole, Bend", ana, cleo) == (
        "When did Cleo adopt Dev's puppy? Anatole, Bend")
    # a swap never feeds another: Dev → Ben in the other direction leaves Cleo's Ana alone
    assert swap_names("Did Dev and Cleo meet?", cleo, ana) == "Did Ben and Ana meet?"
    assert foreign_pairs([ana, cleo]) == [(ana, cleo), (cleo, ana)]
    assert foreign_pairs([ana]) == []


def test_the_report_has_hook_and_foreign_numbers(tmp_path):
    paths = [write(tmp_path, "a", CONVERSATION), write(tmp_path, "c", other_conversation())]
    report = run_locomo(paths, embedder="hash", progress=False,
                        json_path=tmp_path / "r.json")
    assert report["errors"] == [], report["errors"][:1]
    hook = report["hook"]
    assert (hook["max_cards"], hook["min_relevance"]) == (2, 0.06)
    assert hook["foreign_pairs"] == [["a", "c"], ["c", "a"]]
    for side in ("gated", "ungated"):
        assert hook["own"][side]["questions"] == 6
        assert hook["foreign"][side]["questions"] == 6
        assert 0 <= hook["foreign"][side]["abstention"] <= 1
    assert hook["per_space"]["c"]["foreign_from"] == ["a"]
    assert hook["per_space"]["c"]["foreign"]["gated"]["questions"] == 5
    assert hook["own"]["ungated"]["cards_returned"] > 0
    per = next(q for q in report["per_question"] if q["conversation"] == "c")["results"]
    assert per["foreign_gated"]["asked_in"] == "a"
    assert set(per["hook_gated"]) >= {"cards", "hit@1", "hit@2", "abstained", "relevance"}
    assert json.loads((tmp_path / "r.json").read_text())["hook"]["own_hit@2_drop"] is not None
    table = format_table(report)
    assert "foreign abstention (n=6)" in table and "own hit@2" in table
    assert "space c:" in table


def test_one_conversation_has_no_foreign_pass(tmp_path):
    report = run_locomo([write(tmp_path, "a", CONVERSATION)], embedder="hash",
                        progress=False, limit_questions=2)
    assert report["hook"]["foreign"] is None
    assert "needs two or more conversations" in format_table(report)

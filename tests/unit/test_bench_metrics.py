"""The LoCoMo bench metrics, on hand-built cards and answers (no data files)."""

from __future__ import annotations

import math
from datetime import date

import pytest

from bench import metrics as M


def card(*sources: str, start: str | None = "2023-05-08", end: str | None = "2023-05-09",
         text: str = "x") -> dict:
    return {"sources": list(sources), "date_start": start, "date_end": end, "text": text}


# ------------------------------------------------------------------ turns


def test_turn_ids_from_source_ranges():
    assert M.turn_id("3", 7) == "D3:7"
    assert M.turn_id("session_3", 7) == "D3:7"
    assert M.source_turns([("1", 3, 5), ("2", 1, 1), ("1", 4, 4)]) == [
        "D1:3", "D1:4", "D1:5", "D2:1"]


def test_split_evidence_cleans_joined_and_odd_ids():
    assert M.split_evidence(["D8:6; D9:17", "D1:3", " D 2 : 4 ", "D1:3", "junk"]) == [
        "D8:6", "D9:17", "D1:3", "D2:4"]


def test_ranked_turns_are_distinct_and_a_wide_card_spends_the_budget():
    cards = [card(*[f"D1:{i}" for i in range(1, 8)]), card("D1:2", "D2:5"), card("D3:1")]
    assert M.ranked_turns(cards, 5) == ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5"]
    # the repeated D1:2 costs nothing; D2:5 is the 8th distinct turn
    assert M.ranked_turns(cards, 9) == [*(f"D1:{i}" for i in range(1, 8)), "D2:5", "D3:1"]
    assert M.ranked_turns(cards) == M.ranked_turns(cards, 100)


def test_recall_and_hit_at_k():
    cards = [card("D1:1"), card("D1:2", "D1:3"), card("D4:4")]
    ev = ["D1:3", "D4:4"]
    assert M.recall_at_k(ev, cards, 1) == 0.0
    assert M.recall_at_k(ev, cards, 3) == 0.5
    assert M.recall_at_k(ev, cards, 4) == 1.0
    assert M.hit_at_k(ev, cards, 2) == 0.0
    assert M.hit_at_k(ev, cards, 3) == 1.0
    assert math.isnan(M.recall_at_k([], cards, 5))
    assert M.recall_at_k(ev, [], 10) == 0.0


def test_wide_card_pushes_evidence_out_of_the_budget():
    wide = card(*[f"D1:{i}" for i in range(1, 11)])
    assert M.recall_at_k(["D2:1"], [wide, card("D2:1")], 10) == 0.0
    assert M.recall_at_k(["D2:1"], [card("D2:1"), wide], 10) == 1.0


def test_context_chars_counts_top_k_texts():
    cards = [card("D1:1", text="abc"), card("D1:2", text=""), card("D1:3", text="hello")]
    assert M.context_chars(cards, 2) == 3
    assert M.context_chars(cards) == 8


# ------------------------------------------------------------------ answer windows


@pytest.mark.parametrize(("answer", "window"), [
    ("7 May 2023", ("2023-05-07", "2023-05-08")),
    ("19 January, 2023", ("2023-01-19", "2023-01-20")),
    (" 23 July, 2023", ("2023-07-23", "2023-07-24")),
    ("May 7, 2023", ("2023-05-07", "2023-05-08")),
    ("on 7 May 2023.", ("2023-05-07", "2023-05-08")),
    ("May 2023", ("2023-05-01", "2023-06-01")),
    ("February, 2023", ("2023-02-01", "2023-03-01")),
    ("December 2022", ("2022-12-01", "2023-01-01")),
    ("2022", ("2022-01-01", "2023-01-01")),
    (2022, ("2022-01-01", "2023-01-01")),
    ("The week before 9 June 2023", ("2023-06-02", "2023-06-09")),
    ("two weeks before 9 June 2023", ("2023-05-26", "2023-06-02")),
    # 17 July 2023 is a Monday: the weekend before is Sat 15 – Sun 16
    ("the weekend before 17 July 2023", ("2023-07-15", "2023-07-17")),
    ("two weekends before 17 July 2023", ("2023-07-08", "2023-07-10")),
    # 16 July 2023 is a Sunday: its own weekend is not over, so the one before
    ("The weekend before 16 July 2023", ("2023-07-08", "2023-07-10")),
    # 25 May 2023 is a Thursday
    ("The Sunday before 25 May 2023", ("2023-05-21", "2023-05-22")),
    # 15 July 2023 is a Saturday
    ("The Friday before 15 July 2023", ("2023-07-14", "2023-07-15")),
    # a Friday before a Friday is a week earlier
    ("The Friday before 14 July 2023", ("2023-07-07", "2023-07-08")),
    ("The Tuesday before 20 July 2023", ("2023-07-18", "2023-07-19")),
    ("The day before 1 March 2024", ("2024-02-29", "2024-03-01")),
    ("3 days before 10 May 2023", ("2023-05-07", "2023-05-08")),
    ("the month before 3 January 2023", ("2022-12-01", "2023-01-01")),
    ("the year before 3 January 2023", ("2022-01-01", "2023-01-01")),
    # 23 August 2023 is a Wednesday: its Monday–Sunday week
    ("The week of 23 August 2023", ("2023-08-21", "2023-08-28")),
])
def test_answer_window(answer, window):
    got = M.answer_window(answer)
    assert got == (date.fromisoformat(window[0]), date.fromisoformat(window[1]))


@pytest.mark.parametrize("answer", [
    "10 years ago", "Since 2016", "A few years ago", "4 years", "last year", "",
    "Psychology, counseling certification", "Sweden", "The week before next", "13 August",
    "The weekend before May 2023",
])
def test_unresolvable_answers_have_no_window(answer):
    assert M.answer_window(answer) is None


def test_day_without_year_takes_the_reference_year():
    assert M.answer_window("13 August", date(2023, 9, 1)) == (date(2023, 8, 13),
                                                            date(2023, 8, 14))


def test_looks_temporal():
    assert M.looks_temporal("10 years ago")
    assert M.looks_temporal("4 years")
    assert M.looks_temporal("Since 2016")
    assert not M.looks_temporal("Psychology, counseling certification")


# ------------------------------------------------------------------ temporal accuracy


def test_temporal_hit_needs_evidence_and_a_start_inside_the_window():
    window = (date(2023, 6, 2), date(2023, 6, 9))
    right = card("D3:1", start="2023-06-05", end="2023-06-06")
    msg_day = card("D3:1", start="2023-06-09", end="2023-06-10")  # the day it was said
    other = card("D3:2", start="2023-06-05", end="2023-06-06")
    assert M.temporal_hit(["D3:1"], [right], window)
    assert not M.temporal_hit(["D3:1"], [msg_day], window)
    assert not M.temporal_hit(["D3:1"], [other], window)
    assert not M.temporal_hit(["D3:1"], [*(other,) * 5, right], window)  # 6th card: too late
    assert M.temporal_hit(["D3:1"], [*(other,) * 4, right], window)


def test_temporal_start_within_vs_overlap():
    window = (date(2023, 7, 14), date(2023, 7, 15))
    year = card("D8:2", start="2023-01-01", end="2024-01-01")
    assert not M.temporal_hit(["D8:2"], [year], window)
    assert M.temporal_overlap_hit(["D8:2"], [year], window)
    undated = card("D8:2", start=None, end=None)
    assert not M.temporal_hit(["D8:2"], [undated], window)
    assert not M.temporal_overlap_hit(["D8:2"], [undated], window)


# ------------------------------------------------------------------ aggregation


def test_percentile_and_mean():
    assert M.percentile([], 50) is None
    assert M.percentile([5.0], 95) == 5.0
    assert M.percentile([1, 2, 3, 4], 50) == 2.5
    assert M.percentile(list(range(101)), 95) == 95
    assert M.mean([1.0, math.nan, 3.0]) == 2.0
    assert M.mean([]) is None


def test_question_scores_keys():
    scores = M.question_scores(["D1:1"], [card("D1:1", text="abcd")],
                               (date(2023, 5, 8), date(2023, 5, 9)))
    assert scores["R@1"] == 1.0 and scores["hit@10"] == 1.0
    assert scores["temporal_hit@5"] is True
    assert scores["chars@10"] == 4 and scores["cards"] == 1
    assert M.question_scores(["D1:1"], [], None)["temporal_hit@5"] is None

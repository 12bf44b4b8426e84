"""Held-back evaluation of the time-expression parser over hand-written sentences.

Each line of tests/data/time_expressions.jsonl names a sentence, the reference time and zone,
and the window a person would give it. Scoring:
  - exact expressions: start and end must match exactly;
  - vague ones (几天前, recently, early August): the predicted window must contain the
    expected centre, and its length must be within x0.5..x2 of the expected length;
  - sentences that name no time: start must be null.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from chalicelib.domain.timeparse import when_json

DATA = Path(__file__).resolve().parents[1] / "data" / "time_expressions.jsonl"
MIN_PASS_RATE = 0.95


def load_cases() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def passes(case: dict[str, Any], got: dict[str, Any]) -> bool:
    if case["start"] is None:
        return got["start"] is None
    if got["start"] is None:
        return False
    start, end = (datetime.fromisoformat(got[k]) for k in ("start", "end"))
    want_start, want_end = (datetime.fromisoformat(case[k]) for k in ("start", "end"))
    if not case["vague"]:
        return start == want_start and end == want_end
    centre = want_start + (want_end - want_start) / 2
    ratio = (end - start) / (want_end - want_start)
    return start <= centre < end and 0.5 <= ratio <= 2


def test_data_set_shape() -> None:
    cases = load_cases()
    assert len(cases) >= 220
    assert sum(1 for c in cases if c["start"] is None) >= 25
    assert len({c["now"] for c in cases}) >= 10
    for case in cases:
        assert set(case) == {"text", "now", "tz", "start", "end", "granularity", "vague"}


def test_pass_rate() -> None:
    cases = load_cases()
    failures = []
    for case in cases:
        got = when_json(case["text"], datetime.fromisoformat(case["now"]), case["tz"])
        if not passes(case, got):
            failures.append((case, got))
    for case, got in failures:
        kind = "vague" if case["vague"] else "exact"
        print(f"FAIL {case['text']!r} now={case['now']} tz={case['tz']}\n"
              f"     want {case['start']} .. {case['end']} ({kind})\n"
              f"     got  {got['start']} .. {got['end']} matched={got['matched']!r}")
    rate = 1 - len(failures) / len(cases)
    print(f"time expressions: {len(cases) - len(failures)}/{len(cases)} passed ({rate:.1%})")
    assert rate >= MIN_PASS_RATE

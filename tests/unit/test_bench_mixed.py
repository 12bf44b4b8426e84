"""`annals bench load --mixed`, run tiny: every phase runs, every figure the issue asks for is
printed, and what the bench checks holds on a short run (keyword findability, nothing lost)."""

from __future__ import annotations

import sys

from bench.mixed import format_mixed, run_mixed


def test_a_short_mixed_run_reports_every_line(tmp_path):
    interval = sys.getswitchinterval()  # the bench tunes it as `annals serve` does
    try:
        report = run_mixed(duration=1.5, writers=3, batch=5, embedder="hash", seed_messages=20,
                           progress=False, json_path=str(tmp_path / "mixed.json"))
    finally:
        sys.setswitchinterval(interval)
    mixed = report["mixed"]
    assert mixed["put_messages"] > 0 and not mixed["put_errors"]
    assert report["verify"]["found"] == report["verify"]["sampled"] > 0
    kw = mixed["keyword_after_put"]
    assert kw["found"] == kw["checked"]
    assert report["embedding"]["rounds"] == 3 and report["embedding"]["vector_lane_per_s"] > 0
    assert set(report["put_breakdown_us"]) >= {"validate", "build", "docs", "tokenize", "write"}
    ceiling = report["sql_ceiling_us"]
    assert set(ceiling) == {"group_1", "group_4"} and all(v > 0 for v in ceiling.values())
    text = format_mixed(report)
    for needle in ("PUT throughput", "raw sqlite3", "one writer alone", "its SQL alone", "keyword recall right "
                   "after the PUT", "findable by meaning", "vector lane idle", "short recall"):
        assert needle in text
    assert (tmp_path / "mixed.json").stat().st_size > 0

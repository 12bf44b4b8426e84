"""`annals bench load --fair` end to end on a small backlog (hash embedder): a new message in
another space is in the next batch the vector lane takes, and the figures are printed."""

from __future__ import annotations

from click.testing import CliRunner

from bench.cli import bench
from bench.load import bench_fairness, format_fair


def test_the_fair_section_measures_a_new_space_beside_a_backlog(tmp_path):
    fair = bench_fairness(tmp_path, backlog=400, probes=2, embedder="hash", progress=False)
    assert fair["a_queued_before"] == 400
    assert fair["served"] == 2 and fair["served_in_next_batch"] == 2
    assert fair["found_by_vector"] == 2
    assert all(r["batches_passed"] == 0 for r in fair["runs"])
    assert fair["batch_s"]["p50"] > 0 and fair["wait_max_s"] is not None
    assert fair["wait_over_batch_under_way"] is not None


def test_bench_load_fair_prints_the_delay_beside_one_batch(tmp_path):
    out = CliRunner().invoke(bench, ["load", "--fair", "--fair-backlog", "300",
                                     "--fair-probes", "2", "--quiet",
                                     "--json", str(tmp_path / "fair.json")])
    assert out.exit_code == 0, out.output
    assert "fair vector lane: space A has 300 messages queued" in out.output
    assert "one vector batch (32 entries)" in out.output
    assert "in the next batch taken      : 2/2 → True" in out.output
    assert "recall through" not in out.output  # the section alone


def test_format_fair_reads_a_report():
    fair = {"a_queued_before": 10, "a_queued_after": 5, "probes": 1, "embedder": "hash",
            "vector_batch": 32, "batch_s": {"p50": 0.5, "p95": 0.6, "mean": 0.5},
            "batches": 3, "wait_s": {"p50": 0.2, "p95": 0.2, "mean": 0.2}, "wait_max_s": 0.2,
            "findable_s": {"p50": 0.7, "p95": 0.7, "mean": 0.7}, "findable_max_s": 0.7,
            "wait_over_batch_under_way": 0.4,
            "idle_findable_s": {"p50": None, "p95": None, "mean": None},
            "served_in_next_batch": 1, "served": 1, "found_by_vector": 1,
            "fifo_ahead_entries": 10, "fifo_estimate_s": 0.16}
    lines = format_fair({"fair": fair, "verdicts": {"fair_wait_within_one_batch": True,
                                                    "fair_served_in_next_batch": True}})
    assert any("200.0 ms median, 200.0 ms max = 0.40 / 0.40 of one batch; at most 0.40 of the"
               " batch under way (target ≤ 1 batch → True)" in x for x in lines)

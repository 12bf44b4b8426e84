"""`annals bench load --same-key`, run tiny on a real `annals serve`: every line printed, and
what it checks holds on a short run (every recall finds its batch, none answered 429)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from bench.same_key import Phase, format_same_key, report, run_same_key


def test_a_short_same_key_run_reports_every_line():
    r = run_same_key(seconds=2, idle_seconds=1, writers=2, batch=5, embedder="hash",
                     progress=False)
    load = r["load"]
    assert load["recalls"] > 0 and load["found"] == load["recalls"]
    assert load["read_429"] == 0 and load["batches_acked"] > 0
    assert r["idle"]["found"] == r["idle"]["recalls"] > 0
    assert r["idle_after"]["recalls"] > 0
    json.dumps(r)  # --json writes it
    text = format_same_key(r)
    for needle in ("idle:", "under its own writes", "reads sent", "batches acked",
                   "idle again after", "PASS  every recall finds its batch"):
        assert needle in text


def test_the_targets_fail_on_a_refused_or_missed_recall():
    idle, load = Phase("u", "k"), Phase("u", "k")
    for seconds in (0.010, 0.012):
        idle.recalls.add(seconds, 200)
    idle.checked = idle.found = 2
    load.recalls.add(0.020, 200)
    load.recalls.add(1.030, 200)  # answered after a 429 and its Retry-After
    load.read_statuses.update({200: 2, 429: 1})
    load.checked, load.found, load.seconds = 2, 1, 1.0
    targets = report(idle, load, writers=4, batch=20, embedder="hash")["targets"]
    assert not any(targets.values())


def test_the_load_command_offers_it():
    from bench.cli import bench

    out = CliRunner().invoke(bench, ["load", "--help"]).output
    assert "--same-key" in out and "--idle-seconds" in out

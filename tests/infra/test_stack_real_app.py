"""The stack around the repo's real Chalice app (a copy without requirements.txt), pointed at
an existing managed domain. Whatever handlers app.py has today, every SQS and DynamoDB-stream
event source must end up on this stack's queue / table stream with partial batch failures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import NEEDS_CDK, Synth, copy_real_app, offline_env, synthesize

pytestmark = [pytest.mark.infra, NEEDS_CDK]

ENDPOINT = "https://search-shared-abc123xyz.us-east-1.es.amazonaws.com"
ORIGIN = "http://127.0.0.1:8000"  # the SillyTavern extension's (issue 38)


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Synth:
    work = tmp_path_factory.mktemp("real-app")
    app = copy_real_app(work / "app")
    return synthesize(work, {"user": "bob", "region": "us-east-1", "source_dir": str(app),
                             "opensearch_endpoint": ENDPOINT, "cors_origin": ORIGIN})


def test_real_app_packages_and_passes_nag(synth):
    functions = synth.of_type("AWS::Serverless::Function")
    assert "APIHandler" in functions
    assert synth.report["pluginReports"][0]["conclusion"] == "success"


def test_existing_domain_is_used_not_created(synth):
    assert not synth.of_type("AWS::OpenSearchService::Domain")
    _, role = synth.one("AWS::IAM::Role")
    stmts = {s["Sid"]: s for s in role["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]}
    resources = json.dumps(stmts["Search"]["Resource"])
    assert ":es:us-east-1:" in resources and ":domain/shared" in resources
    for fn in synth.of_type("AWS::Serverless::Function").values():
        env = fn["Properties"]["Environment"]["Variables"]
        assert env["ANNALS_OPENSEARCH_ENDPOINT"] == ENDPOINT
        assert env["ANNALS_OPENSEARCH_INDEX"] == "annals-bob"
        assert env["ANNALS_OPENSEARCH_SERVICE"] == "es"
        assert env["ANNALS_BACKEND"] == "aws"


def test_the_api_answers_cors_for_the_one_origin_it_was_given(synth):
    """API Gateway answers every route's preflight itself (a mock OPTIONS method naming the
    origin), and the Lambda sees the origin to put on its answers (chalicelib/api/cors.py)."""
    (_, api), = synth.of_type("AWS::Serverless::Api").items()
    paths = api["Properties"]["DefinitionBody"]["paths"]
    hook = paths["/v1/spaces/{space}/hook/recall"]["options"]
    params = hook["x-amazon-apigateway-integration"]["responses"]["default"][
        "responseParameters"]
    assert params["method.response.header.Access-Control-Allow-Origin"] == f"'{ORIGIN}'"
    assert "Authorization" in params["method.response.header.Access-Control-Allow-Headers"]
    assert all("options" in methods for methods in paths.values())
    for fn in synth.of_type("AWS::Serverless::Function").values():
        assert fn["Properties"]["Environment"]["Variables"]["ANNALS_CORS_ORIGINS"] == ORIGIN
    # what API Gateway answers itself (its 429, an unknown route's 404, …) names it too
    responses = [r["Properties"] for r in synth.of_type("AWS::ApiGateway::GatewayResponse")
                 .values()]
    assert {r["ResponseType"] for r in responses} >= {"THROTTLED", "DEFAULT_4XX", "DEFAULT_5XX"}
    for response in responses:
        headers = response["ResponseParameters"]
        assert headers["gatewayresponse.header.Access-Control-Allow-Origin"] == f"'{ORIGIN}'"
        assert headers["gatewayresponse.header.Vary"] == "'Origin'"


def test_every_event_source_points_at_this_stack(synth):
    queue = next(k for k in synth.of_type("AWS::SQS::Queue") if k.startswith("ExtractQueue"))
    table = synth.one("AWS::DynamoDB::Table")[0]
    for name, fn in synth.of_type("AWS::Serverless::Function").items():
        for ev_name, event in (fn["Properties"].get("Events") or {}).items():
            p = event["Properties"]
            if event["Type"] == "SQS":
                assert p["Queue"] == {"Fn::GetAtt": [queue, "Arn"]}, (name, ev_name)
                assert p["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
            elif event["Type"] == "DynamoDB":
                assert p["Stream"] == {"Fn::GetAtt": [table, "StreamArn"]}, (name, ev_name)
                assert p["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    text = json.dumps(synth.template)
    assert ":annals-extract" not in text and "${Token[" not in text


def _template_file(synth: Synth, tmp_path) -> str:
    path = tmp_path / "template.json"
    path.write_text(json.dumps(synth.template))
    return str(path)


def test_cfn_lint_is_clean(synth, tmp_path):
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    if not cfn_lint.exists():
        pytest.skip("cfn-lint is not installed (infra extra)")
    proc = subprocess.run([str(cfn_lint), _template_file(synth, tmp_path)], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_cdk_assertions_on_the_template(synth, tmp_path):
    script = Path(__file__).with_name("cdk_assertions.py")
    proc = subprocess.run([sys.executable, str(script), _template_file(synth, tmp_path)],
                          capture_output=True, text=True, timeout=180, env=offline_env())
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


def test_one_function_per_schedule_and_the_workers(synth):
    functions = synth.of_type("AWS::Serverless::Function")
    for name in ("QuietWindow", "Merge", "Cooldown"):
        events = functions[name]["Properties"]["Events"]
        assert [e["Type"] for e in events.values()] == ["Schedule"], name
    assert {"ExtractWorker", "IndexStream", "APIHandler"} <= set(functions)
    synth.one("AWS::Serverless::Api")


def test_import_routes_are_throttled_below_the_stage(synth):
    settings = {(m["HttpMethod"], m["ResourcePath"]): (m["ThrottlingRateLimit"],
                                                       m["ThrottlingBurstLimit"])
                for m in synth.resources["RestAPI"]["Properties"]["MethodSettings"]}
    assert settings == {
        ("*", "/*"): (50, 100),
        ("PUT", "/~1v1~1spaces~1{space}~1sessions~1{session}~1messages"): (2, 5),
        ("POST", "/~1v1~1spaces~1{space}~1extract"): (2, 5),
        ("POST", "/~1v1~1spaces~1{space}~1graph"): (2, 5),
        ("POST", "/~1v1~1spaces~1{space}~1consolidate"): (2, 5),
    }
    # every setting names a route the API has (API Gateway refuses others)
    paths = synth.resources["RestAPI"]["Properties"]["DefinitionBody"]["paths"]
    for method, path in settings:
        if method != "*":
            assert method.lower() in paths[path[1:].replace("~1", "/")], (method, path)


def test_real_app_workers_have_reserved_concurrency(synth):
    got = {name: fn["Properties"].get("ReservedConcurrentExecutions")
           for name, fn in synth.of_type("AWS::Serverless::Function").items()}
    assert got == {"ExtractWorker": 3, "IndexStream": 3, "QuietWindow": 1, "Merge": 1,
                   "Cooldown": 1, "APIHandler": None}

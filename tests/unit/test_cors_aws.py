"""Issue 38 on AWS: with ANNALS_BACKEND=aws and one ANNALS_CORS_ORIGINS, app.py gives every
route Chalice's CORS (an OPTIONS method API Gateway answers, the headers on each answer);
locally nothing changes (`annals serve` answers CORS in front of the app, every listed
origin); more than one origin is refused for AWS. The app is imported fresh in a subprocess
under each environment: Chalice reads the default when the routes are declared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chalicelib.api.cors import chalice_cors, one_origin

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = "http://127.0.0.1:8000"
PROBE = """
import json
import app as annals
from chalice.deploy.swagger import SwaggerGenerator
from chalice.test import Client
swagger = SwaggerGenerator("us-east-1", {"api_handler_arn": "arn:aws:lambda:us-east-1:1:function:x",
                                         "api_handler_name": "x"}).generate_swagger(annals.app)
with Client(annals.app) as client:
    answer = client.http.get("/v1/health", headers={"Origin": "http://127.0.0.1:8000"})
print(json.dumps({"paths": swagger["paths"], "headers": dict(answer.headers)}))
"""


def probe(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANNALS_")}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env={**clean, "AWS_DEFAULT_REGION": "us-east-1", **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_on_aws_every_route_answers_the_origins_preflight_and_its_answers_carry_it():
    seen = probe(ANNALS_BACKEND="aws", ANNALS_CORS_ORIGINS=ORIGIN + "/")
    preflight = seen["paths"]["/v1/spaces/{space}/sessions/{session}/messages"]["options"]
    headers = preflight["x-amazon-apigateway-integration"]["responses"]["default"][
        "responseParameters"]
    assert headers["method.response.header.Access-Control-Allow-Origin"] == f"'{ORIGIN}'"
    assert "PUT" in headers["method.response.header.Access-Control-Allow-Methods"]
    assert "X-Annals-Memory" in headers["method.response.header.Access-Control-Expose-Headers"]
    assert all("options" in methods for methods in seen["paths"].values())
    assert seen["headers"]["Access-Control-Allow-Origin"] == ORIGIN


def test_locally_and_without_an_origin_the_app_declares_no_cors():
    for env in ({"ANNALS_CORS_ORIGINS": ORIGIN}, {"ANNALS_BACKEND": "aws"}):
        seen = probe(**env)
        assert not any("options" in methods for methods in seen["paths"].values()), env
        assert "Access-Control-Allow-Origin" not in seen["headers"]


def test_aws_takes_one_origin():
    assert one_origin(" http://127.0.0.1:8000/ ") == ORIGIN
    assert one_origin("") is None and one_origin(None) is None
    with pytest.raises(ValueError, match="on AWS, one origin"):
        one_origin("http://a.example, http://b.example")
    with pytest.raises(ValueError, match="not an origin"):
        chalice_cors({"ANNALS_BACKEND": "aws", "ANNALS_CORS_ORIGINS": "127.0.0.1:8000/x"})
    assert chalice_cors({"ANNALS_CORS_ORIGINS": ORIGIN}) is None

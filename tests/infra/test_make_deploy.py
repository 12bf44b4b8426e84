"""`make deploy USER=… [SYNTH=1]`: one command from a clone. No AWS account here: SYNTH=1
writes the template offline (the fixture Chalice app stands in for the repo's, whose Lambda
wheels would be downloaded), and a real deploy without credentials stops with a clear
message. The venv's stamps are taken as up to date (`make -o`), so nothing is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import NEEDS_CDK, REPO, copy_fixture_app, offline_env

MAKE = shutil.which("make")
VENV = Path(sys.executable).parent.parent  # the venv running the tests
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def make(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in env.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    cmd = [str(MAKE), "--no-print-directory", f"VENV={VENV}",
           "-o", f"{VENV}/.installed-stamp", "-o", f"{VENV}/.infra-stamp", *args]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_make_deploy_asks_for_a_user():
    out = make("deploy", env={**os.environ, "USER": "root"})  # a login name is not enough
    assert out.returncode == 2
    assert "usage: make deploy USER=<name>" in out.stderr


def test_make_deploy_without_credentials_is_a_clear_error():
    out = make("deploy", "USER=alice", env=offline_env(AWS_DEFAULT_REGION="us-east-1"))
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "no AWS credentials found" in text and "--synth-only" in text
    assert "Traceback" not in text


def test_make_deploy_rejects_a_bad_user_name():
    out = make("deploy", "USER=Bob_Smith", "SYNTH=1", env=offline_env())
    assert out.returncode != 0
    assert "Invalid value for '--user'" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.infra
@NEEDS_CDK
def test_make_deploy_synth_writes_the_template_offline(tmp_path):
    app = copy_fixture_app(tmp_path / "app")
    out = tmp_path / "out"
    proc = make("deploy", "USER=ci-make", "SYNTH=1", "REGION=eu-west-1", f"DEPLOY_OUT={out}",
                f"DEPLOY_ARGS=--source-dir {app}", env=offline_env(), timeout=240)
    assert proc.returncode == 0, proc.stderr[-4000:]
    template_path = Path(proc.stdout.strip().splitlines()[-1])
    assert template_path == out / "Annals-ci-make.template.json"
    template = json.loads(template_path.read_text())
    assert "AWS::DynamoDB::Table" in {r["Type"] for r in template["Resources"].values()}
    assert ":logs:eu-west-1:" in json.dumps(template)

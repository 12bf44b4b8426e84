"""`annals deploy` (chalicelib/deploy.py): input validation, the credentials check and the
offline `--synth-only` path. No network: AWS credentials are made unreachable, the CDK CLI is
never started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from chalicelib import deploy as d

from .conftest import NEEDS_CDK, REPO, copy_fixture_app, offline_env

NO_CREDS = {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "AWS_SESSION_TOKEN": None,
            "AWS_PROFILE": None, "AWS_DEFAULT_PROFILE": None,
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": None,
            "AWS_CONTAINER_CREDENTIALS_FULL_URI": None, "AWS_WEB_IDENTITY_TOKEN_FILE": None,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "AWS_CONFIG_FILE": os.devnull,
            "AWS_EC2_METADATA_DISABLED": "true", "AWS_DEFAULT_REGION": "us-east-1"}


def invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(d.deploy, list(args), env={**NO_CREDS, **(env or {})})


@pytest.mark.parametrize("user", ["Alice", "bob_smith", "x" * 21, "-bob", "a b", ""])
def test_bad_user_names_are_rejected(user):
    result = invoke("--user", user, "--synth-only")
    assert result.exit_code == 2
    assert "Invalid value for '--user'" in result.output


@pytest.mark.parametrize(("args", "needle"), [
    (["--opensearch-endpoint", "http://search-abc-x1.us-east-1.es.amazonaws.com"], "https"),
    (["--opensearch-endpoint", "https://search-abc-x1.eu-west-1.es.amazonaws.com"],
     "--region eu-west-1"),
    (["--opensearch-service", "aoss"], "needs --opensearch-endpoint"),
    (["--opensearch-service", "solr"], "'solr' is not one of"),
    (["--cors-origin", "http://a.example, http://b.example"], "on AWS, one origin"),
    (["--cors-origin", "127.0.0.1:8000"], "is not an origin"),
])
def test_bad_search_options_are_rejected(args, needle):
    result = invoke("--user", "alice", "--region", "us-east-1", "--synth-only", *args)
    assert result.exit_code == 2
    assert needle in result.output


def test_no_credentials_is_a_clear_error(tmp_path):
    result = invoke("--user", "alice", "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "no AWS credentials found" in result.output
    assert "--synth-only" in result.output
    assert "Traceback" not in result.output


def test_deploy_needs_requirements_txt(tmp_path, monkeypatch):
    monkeypatch.setattr(d, "caller_identity", lambda region: {"Account": "123456789012",
                                                             "Arn": "arn:aws:iam::1:user/t"})
    app = copy_fixture_app(tmp_path / "app")  # no requirements.txt
    result = invoke("--user", "alice", "--source-dir", str(app), "--out", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert "requirements.txt is missing" in result.output


def test_deploy_needs_the_cdk_cli(tmp_path, monkeypatch):
    monkeypatch.setattr(d, "caller_identity", lambda region: {"Account": "123456789012"})
    monkeypatch.setattr(d, "_need_cdk_lib", lambda: None)
    monkeypatch.setattr(d.shutil, "which", lambda name: None)
    app = copy_fixture_app(tmp_path / "app")
    (app / "requirements.txt").write_text("")
    result = invoke("--user", "alice", "--source-dir", str(app), "--out", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert "AWS CDK CLI" in result.output


def test_deploy_runs_cdk_and_reports_outputs(tmp_path, monkeypatch):
    """The deploy path with the CDK CLI replaced by a recorder (no AWS, no npm)."""
    monkeypatch.setattr(d, "caller_identity", lambda region: {"Account": "123456789012"})
    monkeypatch.setattr(d, "_need_cdk_lib", lambda: None)
    monkeypatch.setattr(d, "_bootstrapped", lambda region: True)
    monkeypatch.setattr(d.shutil, "which", lambda name: f"/usr/bin/{name}")
    app = copy_fixture_app(tmp_path / "app")
    (app / "requirements.txt").write_text("")
    out = tmp_path / "out"
    calls = []

    def fake_run(cmd, env, cwd):
        calls.append((cmd, env))
        outputs = {"Annals-alice": {
            "ApiUrl": "https://abc.execute-api.eu-west-1.amazonaws.com/api/",
            "ApiKeySecretArn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:k-AbCdEf",
            "ApiKeySecretName": "k"}}
        Path(cmd[cmd.index("--outputs-file") + 1]).write_text(json.dumps(outputs))
        return 0

    monkeypatch.setattr(d, "_run", fake_run)
    result = invoke("--user", "alice", "--region", "eu-west-1", "--source-dir", str(app),
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    ((cmd, env),) = calls
    assert cmd[:3] == ["cdk", "deploy", "Annals-alice"]
    assert "user=alice" in cmd and "region=eu-west-1" in cmd
    assert cmd[cmd.index("--output") + 1] == str(out.resolve())
    assert env["CDK_DEFAULT_ACCOUNT"] == "123456789012"
    assert "https://abc.execute-api.eu-west-1.amazonaws.com/api/" in result.output
    assert ("aws secretsmanager get-secret-value --region eu-west-1 --secret-id "
            "arn:aws:secretsmanager:eu-west-1:123456789012:secret:k-AbCdEf") in result.output


@pytest.mark.infra
@NEEDS_CDK
def test_synth_only_writes_a_template_offline(tmp_path):
    app = copy_fixture_app(tmp_path / "app")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "chalicelib.deploy", "--user", "ci-test", "--region",
         "eu-west-1", "--synth-only", "--out", str(out), "--source-dir", str(app)],
        cwd=REPO, env=offline_env(), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-4000:]
    path = Path(proc.stdout.strip().splitlines()[-1])
    assert path == out / "Annals-ci-test.template.json"
    template = json.loads(path.read_text())
    assert "AWS::DynamoDB::Table" in {r["Type"] for r in template["Resources"].values()}
    assert ":logs:eu-west-1:" in json.dumps(template)
    assert not (REPO / "chalice.out").exists()

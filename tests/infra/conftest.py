"""Infra tests: synthesis runs `python infra/app.py` in a subprocess (CDK_OUTDIR and
CDK_CONTEXT_JSON set, a timeout, everything under a temp dir) and the tests read the JSON it
writes. Nothing from aws-cdk-lib is imported into the pytest process."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
INFRA_APP = REPO / "infra" / "app.py"
FIXTURE_APP = Path(__file__).resolve().parent / "fixture_app"
SYNTH_TIMEOUT_S = 180

MISSING = [m for m in ("aws_cdk", "cdk_nag", "constructs") if importlib.util.find_spec(m) is None]
if not shutil.which("node"):
    MISSING.append("node (Node.js)")
NEEDS_CDK = pytest.mark.skipif(
    bool(MISSING),
    reason=f"infra extra not installed ({', '.join(MISSING)}): pip install -e '.[infra]'")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "infra: synthesises the CDK app in a subprocess (needs the infra extra)")


def offline_env(**extra: str) -> dict[str, str]:
    """The environment for a synthesis subprocess: no AWS credentials reachable, no EC2
    metadata probing, jsii quiet about the Node version."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "CDK_", "ANNALS_"))}
    env.update({
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_CONFIG_FILE": os.devnull,
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18,20",
        "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION": "1",
    })
    env.update(extra)
    return env


def copy_fixture_app(dest: Path) -> Path:
    shutil.copytree(FIXTURE_APP, dest, ignore=shutil.ignore_patterns("__pycache__",
                                                                     "deployments"))
    return dest


def copy_real_app(dest: Path) -> Path:
    """The repo's Chalice project without requirements.txt (packaging it would download the
    Lambda wheels from PyPI; the stack does not depend on them)."""
    dest.mkdir(parents=True)
    shutil.copy2(REPO / "app.py", dest / "app.py")
    ignore = shutil.ignore_patterns("__pycache__", "deployments", "venv")
    shutil.copytree(REPO / "chalicelib", dest / "chalicelib", ignore=ignore)
    shutil.copytree(REPO / ".chalice", dest / ".chalice", ignore=ignore)
    return dest


@dataclass
class Synth:
    out: Path
    template: dict[str, Any]
    report: dict[str, Any]
    log: str

    @property
    def resources(self) -> dict[str, Any]:
        return self.template["Resources"]

    def of_type(self, kind: str) -> dict[str, Any]:
        return {k: v for k, v in self.resources.items() if v["Type"] == kind}

    def one(self, kind: str) -> tuple[str, dict[str, Any]]:
        found = self.of_type(kind)
        assert len(found) == 1, f"expected one {kind}, found {sorted(found)}"
        return next(iter(found.items()))

    def logical_id(self, prefix: str, kind: str) -> str:
        ids = [k for k in self.of_type(kind) if k.startswith(prefix)]
        assert len(ids) == 1, (prefix, kind, ids)
        return ids[0]


def synthesize(work: Path, context: dict[str, str], **env_extra: str) -> Synth:
    """`env_extra`: more environment for app.py (e.g. ANNALS_STACK_* limits)."""
    out = work / "cdk.out"
    env = offline_env(CDK_OUTDIR=str(out), CDK_CONTEXT_JSON=json.dumps(context), **env_extra)
    proc = subprocess.run([sys.executable, str(INFRA_APP)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=SYNTH_TIMEOUT_S)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"synthesis failed:\n{log[-6000:]}"
    template = json.loads((out / f"Annals-{context['user']}.template.json").read_text())
    report = json.loads((out / "validation-report.json").read_text())
    return Synth(out=out, template=template, report=report, log=log)

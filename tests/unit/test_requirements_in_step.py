"""requirements.txt (what Chalice bundles for Lambda) must name every runtime dependency the
Lambda code needs, with the same lower bound as pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_IN_LAMBDA = {"chalice", "boto3", "click", "tqdm", "dateparser", "waitress"}  # runtime-provided, CLI or local server


def names(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            name = re.split(r"[\[<>=~!]", line, maxsplit=1)[0].strip().lower()
            out[name] = re.sub(r"\[.*?\]", "", line).replace(" ", "")
    return out


def test_lambda_requirements_follow_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = {n: spec for n, spec in names(project).items() if n not in NOT_IN_LAMBDA}
    bundled = names((ROOT / "requirements.txt").read_text().splitlines())
    assert bundled == wanted

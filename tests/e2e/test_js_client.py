"""The JavaScript client (sillytavern/extension/annals-client.js) in Node against a real `annals serve`:
the calls the SillyTavern extension makes — store turns under SillyTavern's own chat name,
the hook (with and without `in_context`), deliveries, a reading task and its answer, a
delete, the chronicle and the people — and its errors: a wrong key is an AnnalsError with
the status and code, a server that is down a network error."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.server import AnnalsServer, server_env

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
KEY = "ak_js_client_test_key_0123456789abcdef"


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_the_js_client_against_annals_serve(tmp_path):
    server = AnnalsServer(tmp_path, env=server_env(tmp_path, ANNALS_API_KEY=KEY,
                                                   ANNALS_EMBEDDER="hash"))
    try:
        server.wait_ready()
        run = subprocess.run(
            [NODE, str(ROOT / "tests" / "e2e" / "js_client_flow.mjs"),
             (ROOT / "sillytavern" / "extension" / "annals-client.js").as_uri(),
             (ROOT / "chalicelib" / "web" / "importer.js").as_uri(), server.url, KEY],
            capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["health"] == "ok" and seen["put"] == 3
    assert seen["hook"]["verdict"] == "hit" and seen["hook"]["ids"]
    session = "message:Mika-2026-11-24@20h05m00s:"  # SillyTavern's name, made a valid id
    assert not any(ref.startswith(session) for ref in seen["in_context_ids"])
    assert seen["delivered"] == len(seen["hook"]["ids"])
    assert seen["task"] == {"seq_from": 0, "seq_to": 2, "roles": ["system", "user"]}
    assert seen["read"] == "host" and seen["deleted"]
    assert "小林" in seen["profiles"]
    assert seen["wrong_key"] == "401 unauthorized"
    assert seen["down"] in ("TypeError", "TimeoutError")

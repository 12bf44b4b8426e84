"""Issue 6's quiet-window acceptance through the CLI, on the data dir a server (started with
ANNALS_SCHEDULE=off) would use: nothing at +10 min, extraction at +25 min; with only 4 reply
packs nothing until the maximum wait."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from chalicelib.cli import main
from chalicelib.domain.models import MessageIn, PutMessagesRequest
from chalicelib.usecases import ingest
from tests.conftest import make_services

T0 = datetime(2026, 6, 1, 20, 0, tzinfo=UTC)


def seed(tmp_path, packs: int) -> datetime:
    services = make_services(tmp_path, embedder="hash")
    msgs = []
    for i in range(packs):
        msgs += [MessageIn(seq=2 * i, role="user", speaker="Sam", at=T0 + timedelta(minutes=2 * i),
                           content=f"I visited museum number {i} with my sister today."),
                 MessageIn(seq=2 * i + 1, role="assistant", speaker="Aria",
                           at=T0 + timedelta(minutes=2 * i + 1), content=f"How was museum {i}?")]
    ingest.put_messages(services, "me", "s1", PutMessagesRequest(messages=msgs))
    return msgs[-1].at


def run_job(tmp_path, monkeypatch, now: datetime) -> dict:
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    monkeypatch.setenv("ANNALS_SCHEDULE", "off")
    out = CliRunner().invoke(main, ["jobs", "run", "quiet-window", "--now", now.isoformat()])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_five_packs_wait_for_twenty_quiet_minutes(tmp_path, monkeypatch):
    last = seed(tmp_path, packs=5)
    assert run_job(tmp_path, monkeypatch, last + timedelta(minutes=10))["sessions"] == 0
    done = run_job(tmp_path, monkeypatch, last + timedelta(minutes=25))
    assert done["extracted"] == ["me/s1"] and done["events"] >= 1  # told over turns: joined


# The wait counts from the oldest pending message (T0); the last one is 7 minutes later.
@pytest.mark.parametrize("hours, sessions", [(1, 0), (5.8, 0), (6.0, 1)])
def test_four_packs_wait_for_the_maximum(tmp_path, monkeypatch, hours, sessions):
    last = seed(tmp_path, packs=4)
    assert run_job(tmp_path, monkeypatch, last + timedelta(hours=hours))["sessions"] == sessions

"""`annals extract` and `annals import --extract` on the local data dir run the extraction as a
background job in the CLI's own process: progress on stderr while it runs (a line per step
when stderr is not a terminal), the result on stdout, the job listed by GET …/jobs."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from chalicelib.cli import main
from chalicelib.usecases import background
from tests.conftest import make_services
from tests.synthetic import conversation, fingerprint, put_all


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
    monkeypatch.setenv("ANNALS_SCHEDULE", "off")
    return tmp_path


def locomo_file(folder, chat) -> str:
    """The conversation as a LoCoMo-shaped file (made up here, not a LoCoMo one)."""
    doc = {"speaker_a": "Caroline", "speaker_b": "Melanie"}
    for session, messages in chat:
        doc[f"session_{session}_date_time"] = messages[0]["at"]
        doc[f"session_{session}"] = [{"speaker": m["speaker"], "dia_id": f"D{session}:{m['seq']}",
                                      "text": m["content"]} for m in messages]
    path = folder / "chat.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_extract_shows_progress_and_prints_the_events(env, tmp_path):
    chat = conversation(sessions=3, per_session=10)
    put_all(make_services(env), "me", chat)  # the CLI's data dir (make_services' layout)
    out = CliRunner().invoke(main, ["extract", "--space", "me"])
    assert out.exit_code == 0, out.output + out.stderr
    lines = out.stderr.splitlines()
    assert lines[0].startswith("extracting: 0/30 messages")
    assert lines[-1] == f"extracting: 30/30 messages, {len(json.loads(out.stdout)['events'])} " \
                        "events (done)"
    events = json.loads(out.stdout)["events"]
    reference = make_services(tmp_path / "reference", store="memory")
    put_all(reference, "me", chat)
    from chalicelib.usecases.extract import run_extraction

    assert fingerprint(events) == fingerprint(run_extraction(reference, "me"))
    (job,) = background.list_jobs(make_services(env), "me")
    assert job.status == "done" and job.progress.events == len(events)
    assert background.tickets(make_services(env)) == []  # run here, never queued


def test_import_with_extract_shows_the_job(env, tmp_path):
    path = locomo_file(tmp_path, conversation(sessions=4, per_session=10))
    out = CliRunner().invoke(main, ["import", path, "--space", "me", "--extract",
                                    "--no-embed"])
    assert out.exit_code == 0, out.output + out.stderr
    report = json.loads(out.stdout)
    assert len(report["sessions"]) == 4 and report["events_extracted"] > 0
    assert "extracting: 40/40 messages" in out.stderr

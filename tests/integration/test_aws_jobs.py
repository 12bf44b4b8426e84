"""Background jobs on the AWS path (DynamoDB and SQS on moto, OpenSearch on the in-repo double,
the real Chalice handlers): POST …/extract of a 700-message imported conversation answers 202
in under 10 s and sends a "run-job" message; the extract worker runs the job — pausing before
the Lambda's time is up and queueing the rest — until it is done, with the events a
synchronous run writes (same ids, same text).

moto is slow at this size: it deep-copies the whole table for every item of every transaction
(to roll back a cancelled one), which made this test take minutes. No transaction of this flow
is cancelled — asserted — so the copy is skipped here. moto also reads the whole table for
every index query, so the cost grows with sessions × table size: the 700 messages come in
four long sessions, nine turns in ten small talk (about 70 events)."""

from __future__ import annotations

import copy
import json
import time

import moto.dynamodb.models as moto_dynamodb
import pytest
from chalice.test import Client
from moto.dynamodb.models.table import Table

from app import app
from chalicelib.usecases import jobs
from chalicelib.usecases.extract import run_extraction
from tests.conftest import AUTH, make_services
from tests.integration.test_aws_flow import aws, sqs_event  # noqa: F401 (the fixture)
from tests.synthetic import conversation, fingerprint, put_all

SP = "/v1/spaces/me"


class NoTableCopy:
    """moto's `copy` module, but a Table is not deep-copied (see the module doc)."""

    def __getattr__(self, name):
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value, memo=None):
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


@pytest.fixture
def cancelled(monkeypatch) -> list:
    """Transactions moto cancelled (there must be none: nothing would roll them back)."""
    seen: list = []
    real = moto_dynamodb.DynamoDBBackend.transact_write_items

    def recording(self, items):
        try:
            return real(self, items)
        except Exception as exc:
            seen.append(exc)
            raise

    monkeypatch.setattr(moto_dynamodb, "copy", NoTableCopy())
    monkeypatch.setattr(moto_dynamodb.DynamoDBBackend, "transact_write_items", recording)
    return seen


def test_700_messages_become_a_job_the_sqs_worker_finishes(aws, cancelled, tmp_path,  # noqa: F811
                                                           monkeypatch):
    _services, sqs, queue_url, _stream = aws
    chat = conversation(sessions=4, per_session=175, facts_every=10)  # 700 messages
    # chalice's test Lambda context has 3 s: each invocation may take new steps for 0.5 s
    # (a step, one session, always runs), so the job crosses several invocations, as a long
    # one does on AWS (60 s, less 20) — with 2 s, a quiet machine extracted all four sessions
    # in one (the companion's turns no longer make events: less work per session).
    monkeypatch.setattr(jobs, "JOB_MARGIN_SECONDS", 2.5)
    with Client(app) as client:
        for session, messages in chat:
            put = client.http.put(f"{SP}/sessions/{session}/messages", headers=AUTH,
                                  body=json.dumps({"messages": messages}))
            assert put.status_code == 200, put.body
        sqs.purge_queue(QueueUrl=queue_url)  # the ingest's readiness checks: not this test's

        began = time.monotonic()
        resp = client.http.post(f"{SP}/extract", headers=AUTH, body="{}")
        answered = time.monotonic() - began
        assert answered < 10, answered
        assert resp.status_code == 202, resp.body
        job = json.loads(resp.body)["job"]
        assert resp.headers["Location"] == f"{SP}/jobs/{job['id']}"
        assert job["progress"]["total"] == 700

        invocations, progress = 0, []
        while True:
            event = sqs_event(sqs, queue_url)
            if not event["Records"]:
                break
            assert [json.loads(r["body"]) for r in event["Records"]] == [
                {"kind": "run-job", "space": "me", "job": job["id"]}]
            out = client.lambda_.invoke("extract_worker", event).payload
            assert out == {"batchItemFailures": []}
            for record in event["Records"]:
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=record["receiptHandle"])
            invocations += 1
            now = json.loads(client.http.get(f"{SP}/jobs/{job['id']}", headers=AUTH).body)
            progress.append(now["progress"]["done"])
            assert invocations < 40, progress
        done = json.loads(client.http.get(f"{SP}/jobs/{job['id']}?events=true",
                                          headers=AUTH).body)
    assert cancelled == []
    assert done["status"] == "done", done
    assert invocations > 1 and progress == sorted(progress) and progress[-1] == 700
    reference = make_services(tmp_path / "reference", store="memory")
    put_all(reference, "me", chat)
    assert fingerprint(done["events"]) == fingerprint(run_extraction(reference, "me"))

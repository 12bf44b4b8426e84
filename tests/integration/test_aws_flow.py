"""The AWS path end to end without an AWS account: DynamoDB and SQS on moto, OpenSearch on the
in-repo double, the real Chalice handlers invoked with Lambda-shaped events.

PUT messages → a check job on SQS; the quiet-window schedule → an extract job on SQS; the
extract worker (idempotent, partial batch failures) → events in DynamoDB; the table stream →
the index_stream handler → OpenSearch; recall over HTTP finds the event.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from unittest import mock

import boto3
import pytest
from chalice.test import Client
from moto import mock_aws

from app import app
from chalicelib.adapters.dynamodb.table import create_table
from chalicelib.config import Settings
from chalicelib.usecases import jobs
from chalicelib.wiring import build_services, set_services
from tests.conftest import API_KEY, AUTH
from tests.opensearch_double import running_server

REGION = "us-east-1"
TABLE = "annals-flow"
SP = "/v1/spaces/me"
T0 = datetime(2026, 6, 15, 10, 0, tzinfo=UTC)
FAKE_ENV = {"AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
            "AWS_EC2_METADATA_DISABLED": "true"}
CHAT = [
    {"seq": i, "role": role, "speaker": who, "content": text,
     "at": (T0 + timedelta(minutes=i)).isoformat()}
    for i, (role, who, text) in enumerate([
        ("user", "小明", "奶糖昨天进行了体检，结果一切正常"),
        ("assistant", "Aki", "太好了，奶糖很健康"),
        ("user", "小明", "我们决定下个月带它去打疫苗"),
        ("assistant", "Aki", "记得提前预约"),
    ])
]


@pytest.fixture
def aws(tmp_path):
    with mock.patch.dict(os.environ, FAKE_ENV), mock_aws(), running_server("es") as endpoint:
        ddb = boto3.client("dynamodb", region_name=REGION)
        create_table(ddb, TABLE)
        sqs = boto3.client("sqs", region_name=REGION)
        queue_url = sqs.create_queue(QueueName="annals-extract")["QueueUrl"]
        settings = Settings(_env_file=None, backend="aws", embedder="hash", api_key=API_KEY,
                            table=TABLE, queue_url=queue_url, region=REGION,
                            opensearch_endpoint=endpoint, opensearch_service="none",
                            opensearch_index="annals-flow", extract_delay_seconds=0,
                            min_reply_packs=2, data_dir=tmp_path)
        services = build_services(settings)
        services.clock = lambda: T0 + timedelta(hours=1)
        set_services(services)
        stream = StreamReader(ddb)
        yield services, sqs, queue_url, stream
        set_services(None)


class StreamReader:
    """What Lambda's stream poller would hand the index_stream handler.

    moto records the table's stream but answers DescribeStream with "Not yet implemented"
    (moto 5.x), so the records are rebuilt from table snapshots instead: every item that
    appeared, changed or vanished since the last read becomes an INSERT, MODIFY or REMOVE
    record in DynamoDB's wire format (NEW_AND_OLD_IMAGES), in key order."""

    def __init__(self, ddb):
        self.ddb = ddb
        self.seen: dict[tuple, dict] = {}
        self.sequence = 0
        self.arn = ddb.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]

    def snapshot(self) -> dict[tuple, dict]:
        items = {}
        for page in self.ddb.get_paginator("scan").paginate(TableName=TABLE):
            for item in page["Items"]:
                items[(item["pk"]["S"], item["sk"]["S"])] = item
        return items

    def record(self, name: str, key: tuple, new: dict | None, old: dict | None) -> dict:
        self.sequence += 1
        body = {"Keys": {"pk": {"S": key[0]}, "sk": {"S": key[1]}},
                "SequenceNumber": f"{self.sequence:021d}", "SizeBytes": 100,
                "StreamViewType": "NEW_AND_OLD_IMAGES",
                "ApproximateCreationDateTime": 1781510400}
        if new is not None:
            body["NewImage"] = new
        if old is not None:
            body["OldImage"] = old
        return {"eventID": str(self.sequence), "eventName": name, "eventVersion": "1.1",
                "eventSource": "aws:dynamodb", "awsRegion": REGION, "dynamodb": body,
                "eventSourceARN": self.arn}

    def lambda_event(self) -> dict:
        now = self.snapshot()
        records = []
        for key in sorted(set(now) | set(self.seen)):
            new, old = now.get(key), self.seen.get(key)
            if old is None:
                records.append(self.record("INSERT", key, new, None))
            elif new is None:
                records.append(self.record("REMOVE", key, None, old))
            elif new != old:
                records.append(self.record("MODIFY", key, new, old))
        self.seen = now
        return {"Records": records}


def sqs_event(sqs, queue_url) -> dict:
    got = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
    return {"Records": [
        {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
         "attributes": {}, "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
         "eventSource": "aws:sqs", "awsRegion": REGION,
         "eventSourceARN": f"arn:aws:sqs:{REGION}:123456789012:annals-extract"}
        for m in got]}


def test_ingest_queue_worker_stream_and_recall(aws):
    services, sqs, queue_url, stream = aws
    with Client(app) as client:
        put = client.http.put(f"{SP}/sessions/s1/messages", headers=AUTH,
                              body=json.dumps({"messages": CHAT}))
        assert put.status_code == 200 and json.loads(put.body)["accepted"] == 4

        # The request did not index inline; the stream does.
        assert client.lambda_.invoke("index_stream", stream.lambda_event()).payload == {
            "batchItemFailures": []}
        assert services.keywords.count("me") == 4

        # Ingest asked for a readiness check; it is quiet (1 h), with 2 packs: extract.
        check = sqs_event(sqs, queue_url)
        assert [json.loads(r["body"])["kind"] for r in check["Records"]] == ["check-session"]
        result = client.lambda_.invoke("extract_worker", check).payload
        assert result == {"batchItemFailures": []}
        events = services.store.list_events("me").events
        assert any("体检" in e.summary for e in events)

        # A redelivery of the same message is answered from the idempotency record.
        with mock.patch.object(jobs, "extract_session",
                               side_effect=AssertionError("ran twice")):
            assert client.lambda_.invoke("extract_worker", check).payload == {
                "batchItemFailures": []}

        # Events reach OpenSearch through the stream, and recall finds them.
        assert client.lambda_.invoke("index_stream", stream.lambda_event()).payload == {
            "batchItemFailures": []}
        recall = json.loads(client.http.post(f"{SP}/recall", headers=AUTH, body=json.dumps(
            {"query": "奶糖体检", "now": "2026-06-15T12:00:00+00:00"})).body)
        assert recall["cards"] and "体检" in recall["cards"][0]["text"]


def test_quiet_window_schedule_fans_out_to_the_queue(aws):
    _services, sqs, queue_url, _ = aws
    with Client(app) as client:
        client.http.put(f"{SP}/sessions/s2/messages", headers=AUTH,
                        body=json.dumps({"messages": CHAT}))
        sqs.purge_queue(QueueUrl=queue_url)
        event = client.events.generate_cw_event(
            source="aws.events", detail_type="Scheduled Event", detail={}, resources=[])
        event["time"] = "2026-06-15T11:00:00Z"
        out = client.lambda_.invoke("quiet-window", event).payload
        assert out["extracted"] == ["me/s2"] and out["events"] == 0  # the worker extracts
        jobs = [json.loads(r["body"]) for r in sqs_event(sqs, queue_url)["Records"]]
        assert jobs == [{"kind": "extract-session", "space": "me", "session": "s2"}]


def test_partial_batch_failures_are_reported_per_message(aws):
    _services, sqs, queue_url, _ = aws
    for session in ("good", "bad"):
        sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps(
            {"kind": "extract-session", "space": "me", "session": session}))
    sqs.send_message(QueueUrl=queue_url, MessageBody="{not json")  # dropped, never retried
    event = sqs_event(sqs, queue_url)
    real = jobs.extract_session

    def flaky(services, space, session, now=None):
        if session == "bad":
            raise RuntimeError("boom")
        return real(services, space, session, now)

    with Client(app) as client, mock.patch.object(jobs, "extract_session", flaky):
        out = client.lambda_.invoke("extract_worker", event).payload
    bad = [r["messageId"] for r in event["Records"] if '"bad"' in r["body"]]
    assert out == {"batchItemFailures": [{"itemIdentifier": bad[0]}]}


def test_stream_failure_reports_the_failed_record_and_the_rest(aws):
    services, _, _, stream = aws
    with Client(app) as client:
        client.http.put(f"{SP}/sessions/s3/messages", headers=AUTH,
                        body=json.dumps({"messages": CHAT[:2]}))
        event = stream.lambda_event()
        records = [r for r in event["Records"]
                   if r["dynamodb"].get("NewImage", {}).get("entity", {}).get("S") == "message"]
        assert len(records) == 2
        with mock.patch.object(services.keywords, "upsert", side_effect=[None, RuntimeError("x")]):
            out = client.lambda_.invoke("index_stream", {"Records": records}).payload
    assert out == {"batchItemFailures": [
        {"itemIdentifier": records[1]["dynamodb"]["SequenceNumber"]}]}


def test_api_key_comes_from_the_stacks_secret(aws):
    services, *_ = aws
    secrets = boto3.client("secretsmanager", region_name=REGION)
    arn = secrets.create_secret(Name="annals/me/api-key", SecretString="sm-key-123\n")["ARN"]
    services.settings = services.settings.model_copy(update={"api_key": None,
                                                             "api_key_secret": arn})
    with Client(app) as client:
        # stats: a read that answers a space nothing was written to (events: unknown_space)
        ok = client.http.get(f"{SP}/stats", headers={"Authorization": "Bearer sm-key-123"})
        assert ok.status_code == 200
        bad = client.http.get(f"{SP}/stats", headers=AUTH)  # the local test key
        assert bad.status_code == 401

"""Scoped API keys on the AWS backend without an AWS account: key records in the DynamoDB
table (moto), the per-container cache bound on revocation, and the bootstrap admin key from
Secrets Manager, where both AWSCURRENT and AWSPREVIOUS are accepted."""

from __future__ import annotations

import hashlib
import json
import os
from unittest import mock

import boto3
import pytest
from chalice.test import Client
from moto import mock_aws

from app import app
from chalicelib.adapters import secrets as secrets_adapter
from chalicelib.adapters.dynamodb import DynamoDBStore
from chalicelib.adapters.dynamodb.table import create_table
from chalicelib.config import Settings
from chalicelib.usecases import keys as keys_uc
from chalicelib.wiring import build_services, set_services
from tests.conftest import API_KEY, AUTH
from tests.opensearch_double import running_server

REGION = "us-east-1"
TABLE = "annals-keys"
FAKE_ENV = {"AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
            "AWS_EC2_METADATA_DISABLED": "true"}
MSG = [{"seq": 1, "role": "user", "speaker": "小明", "content": "奶糖昨天进行了体检",
        "at": "2026-06-15T10:00:00+08:00"}]


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
                            opensearch_index="annals-keys", data_dir=tmp_path)
        services = build_services(settings)
        set_services(services)
        with Client(app) as client:
            yield services, ddb, client
        set_services(None)


def body(resp):
    return json.loads(resp.body)


def auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


def make_key(client, headers=AUTH, **spec) -> dict:
    resp = client.http.post("/v1/keys", headers=headers, body=json.dumps(spec))
    assert resp.status_code == 201, resp.body
    return body(resp)


def put(client, space, headers):
    return client.http.put(f"/v1/spaces/{space}/sessions/s1/messages", headers=headers,
                           body=json.dumps({"messages": MSG}))


def is_forbidden(resp) -> bool:
    return resp.status_code == 403 and body(resp)["error"]["code"] == "forbidden"


def scan(ddb) -> list[dict]:
    return [item for page in ddb.get_paginator("scan").paginate(TableName=TABLE)
            for item in page["Items"]]


def test_records_in_the_table_hold_hashes_not_keys(aws):
    _, ddb, client = aws
    created = make_key(client, spaces=["a"], access="read", label="phone")
    # stats: a read that answers a space nothing was written to (events: unknown_space)
    assert client.http.get("/v1/spaces/a/stats", headers=auth(created["key"])).status_code == 200
    items = scan(ddb)
    kinds = {i["kind"]["S"] for i in items if i.get("entity", {}).get("S") == "record"}
    assert {"api-key", "api-key-use"} <= kinds
    dump = json.dumps(items)
    assert created["key"] not in dump and created["key"].split("_", 2)[2] not in dump
    assert hashlib.sha256(created["key"].encode()).hexdigest() in dump
    listed = client.http.get("/v1/keys", headers=AUTH)
    assert created["key"] not in listed.body.decode()
    assert body(listed)["keys"][0]["label"] == "phone"


def test_scope_checks(aws):
    _, _, client = aws
    assert put(client, "a", AUTH).status_code == 200
    read_a = make_key(client, spaces=["a"], access="read")["key"]
    write_a = make_key(client, spaces=["a"], access="write")["key"]
    assert client.http.get("/v1/spaces/a/events", headers=auth(read_a)).status_code == 200
    assert is_forbidden(put(client, "a", auth(read_a)))  # a read key cannot write
    assert put(client, "a", auth(write_a)).status_code == 200
    assert is_forbidden(client.http.get("/v1/spaces/b/events", headers=auth(write_a)))
    assert is_forbidden(client.http.get("/v1/keys", headers=auth(write_a)))
    spaces = body(client.http.get("/v1/spaces", headers=AUTH))
    assert spaces["spaces"] == ["a"]
    assert body(client.http.get("/v1/spaces", headers=auth(read_a)))["spaces"] == ["a"]


def test_revoked_here_is_401_on_the_next_request(aws):
    _, _, client = aws
    created = make_key(client, spaces=["a"], access="write")
    assert put(client, "a", auth(created["key"])).status_code == 200  # cached now
    assert client.http.delete(f"/v1/keys/{created['id']}", headers=AUTH).status_code == 200
    assert put(client, "a", auth(created["key"])).status_code == 401


def test_revoked_in_another_container_within_the_cache_bound(aws, monkeypatch):
    services, _, client = aws
    now = [5000.0]
    monkeypatch.setattr(keys_uc, "monotonic", lambda: now[0])
    created = make_key(client, spaces=["a"], access="write")
    assert put(client, "a", auth(created["key"])).status_code == 200
    # Another Lambda container: its own store object, so its own cache.
    other = services.__class__(**{**services.__dict__,
                                  "store": DynamoDBStore(TABLE, region_name=REGION)})
    keys_uc.revoke_key(other, created["id"])
    now[0] += keys_uc.AWS_CACHE_SECONDS - 1
    assert put(client, "a", auth(created["key"])).status_code == 200  # still cached
    now[0] += 1
    assert put(client, "a", auth(created["key"])).status_code == 401


def test_secret_current_and_previous_are_both_admin(aws):
    services, _, client = aws
    sm = boto3.client("secretsmanager", region_name=REGION)
    arn = sm.create_secret(Name="annals/keys/api-key", SecretString="first-key\n")["ARN"]
    services.settings = services.settings.model_copy(update={"api_key": None,
                                                             "api_key_secret": arn})
    secrets_adapter._stage_cache.clear()
    assert client.http.get("/v1/keys", headers=auth("first-key")).status_code == 200
    assert client.http.get("/v1/keys", headers=AUTH).status_code == 401  # env key not in force

    sm.put_secret_value(SecretId=arn, SecretString="second-key")  # rotate
    secrets_adapter._stage_cache.clear()  # as after AWS_CACHE_SECONDS
    for key in ("second-key", "first-key"):  # AWSCURRENT and AWSPREVIOUS
        assert client.http.get("/v1/keys", headers=auth(key)).status_code == 200
        assert put(client, "x", auth(key)).status_code == 200

    sm.put_secret_value(SecretId=arn, SecretString="third-key")  # first-key drops out
    secrets_adapter._stage_cache.clear()
    assert client.http.get("/v1/keys", headers=auth("third-key")).status_code == 200
    assert client.http.get("/v1/keys", headers=auth("second-key")).status_code == 200
    assert client.http.get("/v1/keys", headers=auth("first-key")).status_code == 401


def test_secret_versions_are_reread_after_the_bound(aws):
    services, _, client = aws
    sm = boto3.client("secretsmanager", region_name=REGION)
    arn = sm.create_secret(Name="annals/keys/bound", SecretString="v1")["ARN"]
    services.settings = services.settings.model_copy(update={"api_key": None,
                                                             "api_key_secret": arn})
    assert client.http.get("/v1/spaces", headers=auth("v1")).status_code == 200
    sm.put_secret_value(SecretId=arn, SecretString="v2")
    assert client.http.get("/v1/spaces", headers=auth("v2")).status_code == 401  # not yet
    read_at, values = secrets_adapter._stage_cache[arn]
    secrets_adapter._stage_cache[arn] = (read_at - keys_uc.AWS_CACHE_SECONDS, values)
    assert client.http.get("/v1/spaces", headers=auth("v2")).status_code == 200
    assert client.http.get("/v1/spaces", headers=auth("v1")).status_code == 200  # previous


def test_scoped_keys_work_beside_the_secret(aws):
    services, _, client = aws
    sm = boto3.client("secretsmanager", region_name=REGION)
    arn = sm.create_secret(Name="annals/keys/beside", SecretString="boot")["ARN"]
    services.settings = services.settings.model_copy(update={"api_key": None,
                                                             "api_key_secret": arn})
    created = make_key(client, headers=auth("boot"), spaces=["a"], access="read")
    assert client.http.get("/v1/spaces/a/stats",
                           headers=auth(created["key"])).status_code == 200
    assert is_forbidden(put(client, "a", auth(created["key"])))

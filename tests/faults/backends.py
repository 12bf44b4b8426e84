"""The backends the fault suite runs the scenario on, each adapter behind a fault proxy.

- `SqliteBackend`: the embedded default — SQLite store, FTS5 keywords, numpy vectors,
  messages indexed through the outbox (keywords by the PUT, the rest by the lanes).
- `AwsBackend`: what runs on AWS — DynamoDB (moto) as the store, OpenSearch (the in-repo
  double) as both indexes, kept current by the table stream, SQS as a list.

`run_once(backend_cls, root, n, plan)` plays the scenario on a fresh one and returns its final
state (tests/faults/scenario.py) and the requests' outcomes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import ClassVar
from unittest import mock

import pytest
from chalice.test import Client

from app import app
from chalicelib.usecases.indexing import Indexer, OutboxIndexWriter
from chalicelib.wiring import set_services
from tests.conftest import make_services
from tests.faults import scenario
from tests.faults.injector import FaultPlan

# ------------------------------------------------------------------ the embedded backend


class SqliteBackend:
    """SQLite store + FTS5 + numpy, messages indexed through the outbox (the local default),
    every adapter behind a fault proxy."""

    name = "sqlite"
    targets = ("store", "keywords", "vectors", "outbox", "ingest")

    def __init__(self, root, plan: FaultPlan, n: int):
        svc = make_services(root / f"run{n}", index="background")
        scenario.services_clock(svc)
        self.raw = svc.store, svc.keywords, svc.vectors
        self.db = svc.store.db
        outbox, ingest = svc.index.outbox, svc.index.ingest
        svc.store = plan.wrap(svc.store, "store")
        svc.keywords = plan.wrap(svc.keywords, "keywords")
        svc.vectors = plan.wrap(svc.vectors, "vectors")
        svc.index = OutboxIndexWriter(Indexer(svc), plan.wrap(outbox, "outbox"),
                                      plan.wrap(ingest, "ingest"))
        self.raw_writer = OutboxIndexWriter(Indexer(svc), outbox, ingest)
        self.services = svc

    def after_each(self) -> None:
        pass

    def settle(self) -> None:
        """What the background lanes do after the requests: drain both queues."""
        self.raw_writer.indexer.services = _raw_view(self.services, *self.raw)
        self.raw_writer.store = self.raw[0]
        self.raw_writer.drain_all("keyword")
        self.raw_writer.drain_all("vector")

    def state(self) -> dict:
        out = scenario.store_state(self.raw[0])
        con = self.db.connect()
        out["index"] = {
            "keywords": sorted(tuple(r) for r in con.execute(
                "SELECT d.doc_id, d.kind, d.status, f.tokens FROM kw_docs d"
                " JOIN kw_fts f ON f.rowid = d.rowid WHERE d.space = ?", (scenario.SPACE,))),
            "vectors": sorted(tuple(r) for r in con.execute(
                "SELECT doc_id, kind, status, vec IS NOT NULL, hex(vec) FROM vec_docs"
                " WHERE space = ?", (scenario.SPACE,))),
        }
        return out

    def close(self) -> None:
        self.db.close()


def _raw_view(services, store, keywords, vectors):
    return replace(services, store=store, keywords=keywords, vectors=vectors)


# ------------------------------------------------------------------ the AWS backend


class ListQueue:
    """The WorkQueue (SQS on AWS): jobs kept in a list."""

    def __init__(self):
        self.jobs: list[tuple[dict, int]] = []

    def send(self, job: dict, delay_seconds: int = 0) -> None:
        self.jobs.append((job, delay_seconds))


class WrittenKeys:
    """A DynamoDB client that notes the key of every item a call writes (or tries to), so
    the stream pump reads only those back instead of scanning the table."""

    def __init__(self, client):
        self._client = client
        self.keys: set[tuple[str, str]] = set()

    def __getattr__(self, name: str):
        return getattr(self._client, name)

    def _note(self, item_or_key: dict) -> None:
        self.keys.add((item_or_key["pk"]["S"], item_or_key["sk"]["S"]))

    def put_item(self, **kw):
        self._note(kw["Item"])
        return self._client.put_item(**kw)

    def update_item(self, **kw):
        self._note(kw["Key"])
        return self._client.update_item(**kw)

    def delete_item(self, **kw):
        self._note(kw["Key"])
        return self._client.delete_item(**kw)

    def transact_write_items(self, **kw):
        for op in kw["TransactItems"]:
            (kind, body), = op.items()
            self._note(body["Item"] if kind == "Put" else body["Key"])
        return self._client.transact_write_items(**kw)

    def batch_write_item(self, **kw):
        for requests in kw["RequestItems"].values():
            for r in requests:
                self._note(r["PutRequest"]["Item"] if "PutRequest" in r
                           else r["DeleteRequest"]["Key"])
        return self._client.batch_write_item(**kw)

    def take(self) -> list[tuple[str, str]]:
        keys, self.keys = sorted(self.keys), set()
        return keys


class AwsBackend:
    """What runs on AWS: DynamoDB (moto) as the store, OpenSearch (the in-repo double) as both
    indexes, kept current by the table stream (StreamIndexWriter + `apply_changes`, pumped
    after every request from table snapshots, as the Lambda event source would; a failed
    record and those after it are delivered again), SQS as a list. The store, the raw
    DynamoDB client, the index and the queue are each behind a fault proxy."""

    name = "aws"
    targets = ("store", "dynamodb", "queue")
    env: ClassVar[dict] = {}

    def __init__(self, root, plan: FaultPlan, n: int):
        from chalicelib.adapters.dynamodb import DynamoDBStore, create_table
        from chalicelib.adapters.dynamodb.table import Backoff
        from chalicelib.adapters.hash_embedder import HashEmbedder
        from chalicelib.adapters.opensearch import OpenSearchIndex
        from chalicelib.config import Settings
        from chalicelib.ports import Services
        from chalicelib.usecases.extract.offline import OfflineExtractor
        from chalicelib.usecases.indexing import StreamIndexWriter
        from chalicelib.usecases.merge.offline import OfflineMerger
        from tests.conftest import API_KEY

        env = self.env
        self.table = f"faults-{n}"
        self.ddb = env["ddb"]
        create_table(self.ddb, self.table, wait=False)
        self.written = WrittenKeys(self.ddb)
        fast = Backoff(attempts=30, base=0.0005, cap=0.002)
        raw_store = DynamoDBStore(self.table, client=self.ddb, batch_backoff=fast,
                                  contention_backoff=fast)
        store = DynamoDBStore(self.table, client=plan.wrap(self.written, "dynamodb"),
                              batch_backoff=fast, contention_backoff=fast)
        self.raw_store = raw_store
        self.racer = DynamoDBStore(self.table, client=self.written, batch_backoff=fast,
                                   contention_backoff=fast)  # a second writer (another Lambda)
        embedder = HashEmbedder()
        self.index_name = f"faults-{n}-run"
        self.search = OpenSearchIndex(env["os_client"], embedder.dim, index=self.index_name,
                                      backoff=0.001, bulk_retries=1)
        index = plan.wrap(self.search, "index")
        settings = Settings(data_dir=root / f"run{n}", embedder="hash", api_key=API_KEY,
                            schedule="off", _env_file=None)
        self.queue = ListQueue()
        svc = Services(settings=settings, store=plan.wrap(store, "store"), keywords=index,
                       vectors=index, embedder=embedder, extractor=OfflineExtractor(),
                       merger=OfflineMerger(embedder, settings.merge_similarity),
                       queue=plan.wrap(self.queue, "queue"))
        svc.index = StreamIndexWriter(svc)
        scenario.services_clock(svc)
        self.services = svc
        self.seen: dict[tuple, dict] = {}
        self.sequence = 0
        self.redelivered = 0  # stream records delivered again after a failure
        self.double = env["double"]
        self.first_request = len(self.double.requests)
        self.requests: list = []  # what the run sent OpenSearch (set by settle)

    def after_each(self) -> None:
        """The table stream: every item that appeared, changed or vanished since the last
        pump, as Lambda would deliver it, until every record is applied."""
        from chalicelib.adapters.dynamodb.codec import from_item
        from chalicelib.adapters.dynamodb.table import Backoff, batch_get
        from chalicelib.ports import ChangeRecord
        from chalicelib.usecases.indexing import apply_changes

        keys = self.written.take()
        items = batch_get(self.ddb, self.table, [{"pk": {"S": pk}, "sk": {"S": sk}}
                                                  for pk, sk in keys], Backoff())
        now = {(i["pk"]["S"], i["sk"]["S"]): i for i in items}
        records = []
        for key in keys:
            new, old = now.get(key), self.seen.get(key)
            if new == old:
                continue
            if new is None:
                self.seen.pop(key, None)
            else:
                self.seen[key] = new
            self.sequence += 1
            name = "INSERT" if old is None else "REMOVE" if new is None else "MODIFY"
            records.append(ChangeRecord(
                id=f"{self.sequence:021d}", event_name=name,
                new_image=from_item(new) if new else None,
                old_image=from_item(old) if old else None))
        for _ in range(scenario.MAX_ATTEMPTS):
            failed = set(apply_changes(self.services, records))
            if not failed:
                return
            self.redelivered += 1
            records = [r for r in records if r.id in failed]
        raise AssertionError(f"stream records still failing: {sorted(failed)}")

    def settle(self) -> None:
        self.after_each()
        self.requests = self.double.requests[self.first_request:]

    def mine(self, request) -> bool:
        """Whether an OpenSearch request was this run's (each run has its own index)."""
        return self.index_name in request.path or self.index_name.encode() in request.body

    def state(self) -> dict:
        out = scenario.store_state(self.raw_store)
        client = self.env["os_client"]
        client.indices.refresh(index=self.index_name)
        hits = client.search(index=self.index_name, body={
            "size": 1000, "query": {"term": {"space": scenario.SPACE}},
            "_source": ["doc_id", "kind", "status", "tokens", "vector"]})["hits"]["hits"]
        out["index"] = sorted((h["_source"]["doc_id"], h["_source"]["kind"],
                               h["_source"]["status"], h["_source"]["tokens"],
                               repr(h["_source"].get("vector"))) for h in hits)
        return out

    def close(self) -> None:
        self.double.clear_failures()
        self.ddb.delete_table(TableName=self.table)
        self.search.drop()


@pytest.fixture(scope="module")
def aws_env() -> Iterator[dict]:
    """moto and one OpenSearch double for the module; each run gets its own table and index."""
    import boto3
    from moto import mock_aws

    from chalicelib.adapters.opensearch import connect
    from tests.contract.adapters_dynamodb import FAKE_ENV, REGION
    from tests.opensearch_double import running_double

    with mock.patch.dict(os.environ, FAKE_ENV), mock_aws(), running_double("es") as double, \
            _faster_moto():
        AwsBackend.env = {
            "ddb": boto3.client("dynamodb", region_name=REGION),
            "double": double,
            # one transport retry, so one injected 429/503 pair surfaces to the caller
            "os_client": connect(double.url, service=None, timeout=5, max_retries=1,
                                 backoff=0.001),
        }
        yield AwsBackend.env
        AwsBackend.env = {}


@contextmanager
def _faster_moto():
    """Speed only (a run makes ~120 moto calls): moto backs a table up (a deep copy) once
    per operation of a transaction in case one fails — once per table restores the same
    state; and it serialises every response through the botocore shape model — the reads
    that return items are already wire-format JSON, so they are dumped as they are. Where
    moto's internals differ from what this expects, nothing is changed."""
    import copy
    import json

    from moto.dynamodb import models, responses

    result_cls = getattr(responses, "DynamoResult", None)
    if not hasattr(models, "copy") or result_cls is None or not hasattr(
            result_cls, "execute_result"):
        yield
        return
    real_result = result_cls.execute_result

    def execute_result(self, context):
        if context.operation_model.name in ("GetItem", "Query", "BatchGetItem", "Scan") and \
                isinstance(self.result, dict):
            return 200, {"Content-Type": "application/x-amz-json-1.0"}, json.dumps(self.result)
        return real_result(self, context)

    real = models.DynamoDBBackend.transact_write_items

    def transact_write_items(self, transact_items):
        copies: dict[int, object] = {}

        class OnceCopy:
            @staticmethod
            def deepcopy(obj):
                if id(obj) not in copies:
                    copies[id(obj)] = copy.deepcopy(obj)
                return copies[id(obj)]

        models.copy = OnceCopy
        try:
            return real(self, transact_items)
        finally:
            models.copy = copy

    with mock.patch.object(models.DynamoDBBackend, "transact_write_items",
                           transact_write_items), \
            mock.patch.object(result_cls, "execute_result", execute_result):
        yield


def run_once(backend_cls, root, n: int, plan: FaultPlan, arm=None):
    """Play the scenario on a fresh backend (`arm(backend)` first, if given: faults that are
    not the plan's); returns (final state, stats, backend)."""
    backend = backend_cls(root, plan, n)
    if arm is not None:
        arm(backend)
    set_services(backend.services)
    stats = scenario.Stats()
    try:
        with Client(app) as client:
            scenario.play(client, stats, backend.after_each)
        backend.settle()
        return backend.state(), stats, backend
    finally:
        set_services(None)
        backend.close()

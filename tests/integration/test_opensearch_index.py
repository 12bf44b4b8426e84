"""OpenSearch adapter against the in-repo double: what goes over the wire, how failures are
handled, Serverless id handling, and what the double rejects the way OpenSearch does."""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from urllib.parse import urlencode

import numpy as np
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from opensearchpy import NotFoundError, OpenSearch, RequestError, TransportError

from chalicelib.adapters import opensearch as opensearch_index
from chalicelib.adapters.opensearch import (
    OpenSearchBulkError,
    OpenSearchIndex,
    connect,
    score_to_cosine,
)
from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.index import FtsKeywordIndex
from chalicelib.domain.models import IndexDoc
from chalicelib.domain.textproc import index_text, query_terms
from chalicelib.ports import SearchFilter
from tests.contract.test_index_contract import unit
from tests.opensearch_double import OpenSearchDouble, running_double, running_server
from tests.opensearch_double.analysis import cjk, norm_length

DIM = 8
DAY = 86400.0
CREDS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")


def doc(doc_id: str, text: str, day: int = 0, space: str = "sp", vec=None, **kw) -> IndexDoc:
    return IndexDoc(id=doc_id, space=space, kind=kw.pop("kind", "event"), text=text,
                    start=day * DAY, end=(day + 1) * DAY, vector=vec, **kw)


@pytest.fixture(scope="module")
def es():
    with running_double("es") as double:
        yield double


@pytest.fixture(scope="module")
def aoss():
    with running_double("aoss") as double:
        yield double


def make_index(double: OpenSearchDouble, **options) -> OpenSearchIndex:
    client = connect(double.url, service=None, timeout=5, max_retries=3, backoff=0.001)
    options.setdefault("serverless", double.mode == "aoss")
    options.setdefault("backoff", 0.001)
    return OpenSearchIndex(client, DIM, index=f"t-{uuid.uuid4().hex[:10]}", **options)


def raw(double: OpenSearchDouble) -> OpenSearch:
    return OpenSearch(double.url, max_retries=0)


def since(double: OpenSearchDouble, mark: int, fragment: str = "", method: str | None = None):
    return [r for r in double.requests[mark:]
            if fragment in r.path and (method is None or r.method == method)]


# ------------------------------------------------------------------ mappings and queries


@pytest.mark.parametrize("mode", ["es", "aoss"])
def test_index_created_with_the_documented_mapping(mode, es, aoss):
    double = es if mode == "es" else aoss
    idx = make_index(double)
    mark = len(double.requests)
    idx.upsert([doc("event:1", "hello", vec=unit(0))])
    create = since(double, mark, f"/{idx.index}", "PUT")
    assert len(create) == 1
    body = create[0].json()
    props = body["mappings"]["properties"]
    assert body["mappings"]["dynamic"] == "strict"
    assert body["settings"]["index"]["knn"] is True
    assert props["vector"] == {
        "type": "knn_vector", "dimension": DIM,
        "method": {"name": "hnsw", "space_type": "cosinesimil", "engine": "lucene",
                   "parameters": {"m": 16, "ef_construction": 128}}}
    assert props["text"] == {"type": "text", "analyzer": "cjk"}
    assert props["tokens"] == {"type": "text", "analyzer": "whitespace"}
    for name in ("doc_id", "space", "kind", "status"):
        assert props[name] == {"type": "keyword"}
    assert props["start"] == props["end"] == {"type": "double"}
    # Serverless manages shards; a domain gets one shard so BM25 statistics are exact.
    assert ("number_of_shards" in body["settings"]["index"]) is (mode == "es")
    mapping = raw(double).indices.get_mapping(index=idx.index)[idx.index]["mappings"]
    assert mapping["properties"]["vector"]["dimension"] == DIM
    # The index is created once, then remembered.
    idx.upsert([doc("event:2", "again", vec=unit(1))])
    assert len(since(double, mark, f"/{idx.index}", "PUT")) == 1


def test_documents_and_query_shapes(es):
    idx = make_index(es)
    idx.upsert([doc("event:1", "Melanie painted a sunrise", vec=unit(0))])
    stored = raw(es).get(index=idx.index, id="sp|event:1")["_source"]
    assert stored["tokens"] == index_text("Melanie painted a sunrise") == "melani paint a sunris"
    assert stored["text"] == "Melanie painted a sunrise"
    assert stored["doc_id"] == "event:1" and stored["space"] == "sp"
    assert np.allclose(stored["vector"], unit(0))

    mark = len(es.requests)
    flt = SearchFilter(kinds=("event",), start=0.0, end=DAY, exclude_ids=frozenset({"event:9"}))
    idx.keyword_search("sp", "the paintings", 3, flt)
    query = since(es, mark, "/_search")[0].json()
    assert query["size"] == 3 and query["_source"] == ["doc_id"]
    assert query["query"]["bool"]["must"] == [
        {"match": {"tokens": {"query": " ".join(query_terms("the paintings")), "operator": "or"}}}]
    assert query["query"]["bool"]["filter"] == [
        {"term": {"space": "sp"}}, {"terms": {"kind": ["event"]}},
        {"terms": {"status": ["active"]}}, {"range": {"start": {"lt": DAY}}},
        {"range": {"end": {"gt": 0.0}}}]
    assert query["query"]["bool"]["must_not"] == [{"ids": {"values": ["sp|event:9"]}}]

    mark = len(es.requests)
    idx.vector_search("sp", np.array(unit(0), np.float32), 2, flt)
    knn = since(es, mark, "/_search")[0].json()["query"]["knn"]["vector"]
    assert knn["k"] == 2 and len(knn["vector"]) == DIM
    assert knn["filter"]["bool"]["filter"][0] == {"term": {"space": "sp"}}
    assert knn["filter"]["bool"]["must_not"] == [{"ids": {"values": ["sp|event:9"]}}]


def test_bm25_scores_follow_lucene(es):
    idx = make_index(es)
    texts = {"event:1": "cat sat on the mat", "event:2": "cat cat cat",
             "event:3": "dog barked at the cat", "event:4": "a bird sang"}
    idx.upsert([doc(i, t) for i, t in texts.items()])
    tokens = {i: index_text(t).split() for i, t in texts.items()}
    n_docs = len(tokens)
    avgdl = sum(len(t) for t in tokens.values()) / n_docs

    def bm25(terms: list[str], toks: list[str]) -> float:
        score = 0.0
        for term in terms:
            tf = toks.count(term)
            if tf:
                df = sum(term in t for t in tokens.values())
                idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
                dl = norm_length(len(toks))
                score += idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))
        return score

    hits = idx.keyword_search("sp", "cat on a mat", 10)
    terms = query_terms("cat on a mat")
    expected = sorted(((bm25(terms, tokens[i]), i) for i in tokens if bm25(terms, tokens[i])),
                      reverse=True)
    assert [h.id for h in hits] == [i for _, i in expected]
    for hit, (score, _) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, rel=1e-9)


def test_keyword_ranking_matches_the_embedded_index(es, tmp_path):
    corpus = [
        doc("event:1", "奶糖昨天进行了体检，结果正常"),
        doc("event:2", "用户开始饲养一只橘猫，取名为奶糖"),
        doc("event:3", "Melanie painted a lake sunrise last year"),
        doc("event:4", "Caroline went to the LGBTQ support group and painted"),
        doc("event:5", "体检报告显示橘猫很健康"),
    ]
    idx = make_index(es)
    fts = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    idx.upsert(corpus)
    fts.upsert(corpus)
    for query in ("奶糖体检", "painted sunrise", "橘猫", "support group painting"):
        assert [h.id for h in idx.keyword_search("sp", query, 5)] == [
            h.id for h in fts.keyword_search("sp", query, 5)], query


def test_vector_scores_are_cosine(es):
    idx = make_index(es)
    idx.upsert([doc("event:x", "x", vec=unit(0)), doc("event:xy", "xy", vec=unit(0, 1)),
                doc("event:neg", "n", vec=(-np.array(unit(0))).tolist())])
    hits = idx.vector_search("sp", np.array(unit(0), np.float32), 3)
    assert [h.id for h in hits] == ["event:x", "event:xy", "event:neg"]
    assert [h.score for h in hits] == pytest.approx([1.0, 2 / math.sqrt(5), -1.0], abs=1e-6)
    assert score_to_cosine(0.5) == 0.0 and score_to_cosine(1.0) == 1.0


def test_zero_vector_stays_keyword_searchable_and_bad_dimension_writes_nothing(es):
    idx = make_index(es)
    idx.upsert([doc("event:z", "zero vector", vec=[0.0] * DIM)])
    assert [h.id for h in idx.keyword_search("sp", "zero", 5)] == ["event:z"]
    assert idx.vector_search("sp", np.array(unit(0)), 5) == []
    mark = len(es.requests)
    with pytest.raises(ValueError, match="dimension 8"):
        idx.upsert([doc("event:a", "fine", vec=unit(1)), doc("event:b", "bad", vec=[1.0, 0.0])])
    assert since(es, mark, "/_bulk") == []
    with pytest.raises(ValueError):
        idx.vector_search("sp", np.ones(3), 5)


def test_reads_before_any_write_do_not_create_the_index(es):
    idx = make_index(es)
    assert idx.keyword_search("sp", "anything", 5) == []
    assert idx.vector_search("sp", np.array(unit(0)), 5) == []
    assert idx.count("sp") == 0
    idx.delete("sp", ["event:1"])
    assert not raw(es).indices.exists(index=idx.index)


def test_per_space_indexes(es):
    idx = make_index(es, per_space=True)
    idx.upsert([doc("event:1", "beach day", space="Alice:main"), doc("event:1", "beach night",
                                                                     space="bob")])
    names = {idx.index_name("Alice:main"), idx.index_name("bob")}
    assert idx.index_name("bob") == f"{idx.index}-bob"
    assert all(raw(es).indices.exists(index=n) for n in names)
    assert [h.id for h in idx.keyword_search("Alice:main", "beach", 5)] == ["event:1"]
    assert idx.count("bob") == 1
    idx.delete("bob", ["event:1"])
    assert idx.count("bob") == 0 and idx.count("Alice:main") == 1
    with pytest.raises(ValueError):
        idx.drop()
    for space in ("Alice:main", "bob"):
        idx.drop(space)
    assert not any(raw(es).indices.exists(index=n) for n in names)


def test_ensure_index_tolerates_a_concurrent_creator(es, monkeypatch):
    idx = make_index(es)
    raw(es).indices.create(index=idx.index, body=idx.index_body())
    monkeypatch.setattr(idx.client.indices, "exists", lambda **kw: False)
    idx.upsert([doc("event:1", "race")])
    assert idx.count("sp") == 1


# ------------------------------------------------------------------ managed domain refresh


def test_domain_writes_wait_for_refresh(es):
    idx = make_index(es)
    mark = len(es.requests)
    idx.upsert([doc("event:1", "hello world")])
    idx.delete("sp", ["event:1"])
    bulks = since(es, mark, "/_bulk")
    assert [r.params for r in bulks] == [{"refresh": "wait_for"}] * 2
    assert bulks[0].ndjson()[0] == {"index": {"_index": idx.index, "_id": "sp|event:1"}}
    # The double really hides unrefreshed writes from search (1 s refresh interval) ...
    client = raw(es)
    client.index(index=idx.index, id="sp|event:2", body={"doc_id": "event:2", "space": "sp",
                                                         "kind": "event", "status": "active",
                                                         "start": 0.0, "end": 1.0,
                                                         "tokens": "orchard"})
    assert idx.keyword_search("sp", "orchard", 5) == []
    assert client.get(index=idx.index, id="sp|event:2")["found"]  # ... but not from real-time get
    client.indices.refresh(index=idx.index)
    assert [h.id for h in idx.keyword_search("sp", "orchard", 5)] == ["event:2"]


# ------------------------------------------------------------------ failures


def test_bulk_items_rejected_with_429_are_retried(es):
    idx = make_index(es)
    idx.upsert([doc("event:0", "warm up")])
    es.inject_bulk_item_failure(429, when=lambda action, meta, src: meta.get("_id") == "sp|event:2")
    mark = len(es.requests)
    idx.upsert([doc(f"event:{i}", f"item {i} apple") for i in (1, 2, 3)])
    bulks = since(es, mark, "/_bulk")
    assert len(bulks) == 2
    assert [line["index"]["_id"] for line in bulks[1].ndjson()[::2]] == ["sp|event:2"]
    assert sorted(h.id for h in idx.keyword_search("sp", "apple", 10)) == [
        "event:1", "event:2", "event:3"]


def test_bulk_failures_raise_listing_the_failed_ids(es):
    idx = make_index(es, bulk_retries=2)
    idx.upsert([doc("event:0", "warm up")])
    es.inject_bulk_item_failure(429, times=10, when=lambda a, m, s: m.get("_id") == "sp|event:2")
    es.inject_bulk_item_failure(400, when=lambda a, m, s: m.get("_id") == "sp|event:3",
                                error_type="mapper_parsing_exception", reason="bad field")
    mark = len(es.requests)
    with pytest.raises(OpenSearchBulkError) as err:
        idx.upsert([doc(f"event:{i}", f"item {i} pear") for i in (1, 2, 3)])
    assert set(err.value.failed) == {"event:2", "event:3"}
    assert "mapper_parsing_exception" in err.value.failed["event:3"]
    assert "429" in err.value.failed["event:2"]
    assert "event:2" in str(err.value) and "event:3" in str(err.value)
    assert len(since(es, mark, "/_bulk")) == 3  # first try + 2 retries of the 429 item only
    assert [h.id for h in idx.keyword_search("sp", "pear", 10)] == ["event:1"]
    es._item_failures.clear()


def test_large_batches_are_split_into_several_bulk_requests(es, monkeypatch):
    monkeypatch.setattr(opensearch_index, "_BULK_CHUNK", 2)
    idx = make_index(es)
    idx.upsert([doc("event:0", "warm up")])
    es.inject_bulk_item_failure(429, when=lambda a, m, s: m.get("_id") == "sp|event:3")
    mark = len(es.requests)
    idx.upsert([doc(f"event:{i}", f"plum {i}") for i in range(1, 6)])
    sizes = [len(r.ndjson()) // 2 for r in since(es, mark, "/_bulk")]
    assert sizes == [2, 2, 1, 1]  # chunk 2 retried its rejected item before chunk 3 went
    assert idx.count("sp") == 6


def test_transport_retries_429_and_5xx_but_not_4xx(es):
    idx = make_index(es)
    idx.upsert([doc("event:0", "warm up")])
    es.inject_http_error(503, times=1, path="/_bulk")
    es.inject_http_error(429, times=1, path="/_bulk")
    mark = len(es.requests)
    idx.upsert([doc("event:1", "kiwi")])
    assert len(since(es, mark, "/_bulk")) == 3
    es.inject_http_error(400, times=1, path="/_search", error_type="search_phase_execution_exception")
    mark = len(es.requests)
    with pytest.raises(RequestError):
        idx.keyword_search("sp", "kiwi", 3)
    assert len(since(es, mark, "/_search")) == 1
    assert [h.id for h in idx.keyword_search("sp", "kiwi", 3)] == ["event:1"]


# ------------------------------------------------------------------ Serverless (aoss)


def test_serverless_lets_the_service_assign_ids(aoss):
    idx = make_index(aoss)
    mark = len(aoss.requests)
    idx.upsert([doc("event:1", "first text", vec=unit(0)), doc("event:2", "other", vec=unit(1))])
    idx.upsert([doc("event:1", "second text", vec=unit(2))])
    idx.delete("sp", ["event:2", "event:missing"])
    sent = since(aoss, mark)
    assert all("refresh" not in r.params for r in sent)
    assert not [r for r in sent if "_refresh" in r.path or "_delete_by_query" in r.path]
    actions = [line for r in sent if r.path.endswith("/_bulk") for line in r.ndjson()
               if "index" in line or "delete" in line]
    assert all("_id" not in a["index"] for a in actions if "index" in a)
    assert sum("delete" in a for a in actions) == 2  # old event:1, then event:2
    client = raw(aoss)
    found = client.search(index=idx.index, body={"query": {"match_all": {}}})["hits"]["hits"]
    assert [h["_source"]["doc_id"] for h in found] == ["event:1"]
    assert found[0]["_source"]["text"] == "second text"
    assert found[0]["_id"] != "sp|event:1"
    assert [h.id for h in idx.keyword_search("sp", "first", 5)] == []
    assert [h.id for h in idx.vector_search("sp", np.array(unit(2)), 5)] == ["event:1"]
    mark = len(aoss.requests)
    idx.keyword_search("sp", "second", 5, SearchFilter(exclude_ids=frozenset({"event:7"})))
    must_not = since(aoss, mark, "/_search")[0].json()["query"]["bool"]["must_not"]
    assert must_not == [{"terms": {"doc_id": ["event:7"]}}]


def test_serverless_partial_failure_keeps_the_old_version(aoss):
    idx = make_index(aoss, bulk_retries=1)
    idx.upsert([doc("event:1", "old apple"), doc("event:2", "old apple")])
    aoss.inject_bulk_item_failure(400, when=lambda a, m, s: bool(s) and s["doc_id"] == "event:2",
                                  error_type="mapper_parsing_exception")
    with pytest.raises(OpenSearchBulkError) as err:
        idx.upsert([doc("event:1", "new banana"), doc("event:2", "new banana")])
    assert list(err.value.failed) == ["event:2"]
    # event:1 was replaced; event:2 kept its old version instead of disappearing.
    assert [h.id for h in idx.keyword_search("sp", "banana", 5)] == ["event:1"]
    assert [h.id for h in idx.keyword_search("sp", "apple", 5)] == ["event:2"]
    assert idx.count("sp") == 2


def test_serverless_eventual_consistency_and_settling():
    with running_double("aoss", visibility_delay=0.3) as double:
        lazy = make_index(double)
        lazy.upsert([doc("event:1", "mango")])
        assert lazy.keyword_search("sp", "mango", 5) == []  # not searchable yet
        # A second upsert before the first is searchable cannot find it: two copies exist
        # for a while; search still returns the id once.
        lazy.upsert([doc("event:1", "mango shake")])
        time.sleep(0.35)
        assert [h.id for h in lazy.keyword_search("sp", "mango", 5)] == ["event:1"]
        assert lazy.count("sp") == 2
        lazy.upsert([doc("event:1", "mango lassi")])  # finds both copies, replaces them
        time.sleep(0.35)
        assert lazy.count("sp") == 1

        settled = make_index(double, settle_timeout=3.0, settle_poll=0.05)
        settled.upsert([doc("event:1", "papaya")])
        assert [h.id for h in settled.keyword_search("sp", "papaya", 5)] == ["event:1"]
        settled.delete("sp", ["event:1"])
        assert settled.keyword_search("sp", "papaya", 5) == []


def test_serverless_double_rejects_what_serverless_rejects(aoss):
    client = raw(aoss)
    name = f"t-{uuid.uuid4().hex[:10]}"
    client.indices.create(index=name, body=make_index(aoss).index_body())
    resp = client.bulk(body=[{"index": {"_index": name, "_id": "mine"}}, {"doc_id": "x"}])
    item = resp["items"][0]["index"]
    assert resp["errors"] and item["status"] == 400
    assert "Document ID is not supported" in item["error"]["reason"]
    with pytest.raises(RequestError, match="unrecognized parameter: \\[refresh\\]"):
        client.bulk(body=[{"index": {"_index": name}}, {"doc_id": "x"}], params={"refresh": "true"})
    with pytest.raises(NotFoundError):
        client.indices.refresh(index=name)
    with pytest.raises(NotFoundError):
        client.delete_by_query(index=name, body={"query": {"match_all": {}}})
    with pytest.raises(RequestError):
        client.index(index=name, id="mine", body={"doc_id": "x"})


# ------------------------------------------------------------------ SigV4


def _verify_sigv4(req, host: str, service: str, region: str) -> None:
    auth = req.headers["authorization"]
    scheme, rest = auth.split(" ", 1)
    parts = dict(p.strip().split("=", 1) for p in rest.split(","))
    assert scheme == "AWS4-HMAC-SHA256"
    date = req.headers["x-amz-date"]
    assert parts["Credential"] == f"{CREDS.access_key}/{date[:8]}/{region}/{service}/aws4_request"
    signed = parts["SignedHeaders"].split(";")
    assert {"host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"} <= set(signed)
    assert req.headers["x-amz-content-sha256"] == hashlib.sha256(req.body).hexdigest()
    assert req.headers["x-amz-security-token"] == CREDS.token
    query = f"?{urlencode(req.params)}" if req.params else ""
    check = AWSRequest(method=req.method, url=f"http://{host}{req.path}{query}",
                       data=req.body or None, headers={h: req.headers[h] for h in signed})
    check.context["timestamp"] = date
    signer = SigV4Auth(CREDS, service, region)
    canonical = signer.canonical_request(check)
    assert signer.signature(signer.string_to_sign(check, canonical), check) == parts["Signature"]


@pytest.mark.parametrize("service", ["es", "aoss"])
def test_requests_are_sigv4_signed(service):
    with running_double(service) as double:
        client = connect(double.url, region="eu-west-1", service=service, credentials=CREDS,
                         timeout=5)
        idx = OpenSearchIndex(client, DIM, index="signed", serverless=service == "aoss")
        idx.upsert([doc("event:1", "signed words", vec=unit(0))])
        idx.keyword_search("sp", "words", 3)
        idx.delete("sp", ["event:1"])
        host = double.url.removeprefix("http://")
        assert len(double.requests) >= 4
        for req in double.requests:
            _verify_sigv4(req, host, service, "eu-west-1")


def test_unsigned_without_service_and_connect_validation(monkeypatch):
    with running_server("es") as url:
        client = connect(url, service=None)
        assert client.info()["version"]["distribution"] == "opensearch"
    with running_double("es") as double:
        connect(double.url).info()
        assert "authorization" not in double.requests[0].headers
    for var in ("AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ValueError, match="region"):
        connect("https://search-x.es.amazonaws.com", service="es", credentials=CREDS)
    with pytest.raises(ValueError):
        connect("https://x", service="s3")  # type: ignore[arg-type]
    client = connect("search-x.eu-west-1.es.amazonaws.com", region="eu-west-1", service="es",
                     credentials=CREDS)
    assert client.transport.get_connection().host == (
        "https://search-x.eu-west-1.es.amazonaws.com:443")
    with pytest.raises(ValueError):
        OpenSearchIndex(client, DIM, index="Bad Name")
    with pytest.raises(ValueError):
        OpenSearchIndex(client, DIM, engine="nmslib")  # type: ignore[arg-type]


# ------------------------------------------------------------------ double rejections


def test_double_rejects_bad_mappings_and_queries(es):
    client = raw(es)

    def error(call) -> tuple[int, str]:
        with pytest.raises(TransportError) as e:
            call()
        return e.value.status_code, e.value.error

    name = f"t-{uuid.uuid4().hex[:10]}"
    knn = {"settings": {"index": {"knn": True}}}
    assert error(lambda: client.indices.create(index=name, body={
        "mappings": {"properties": {"f": {"type": "vectorish"}}}})) == (
        400, "mapper_parsing_exception")
    assert error(lambda: client.indices.create(index=name, body={**knn, "mappings": {
        "properties": {"v": {"type": "knn_vector"}}}})) == (400, "mapper_parsing_exception")
    assert error(lambda: client.indices.create(index=name, body={"mappings": {"properties": {
        "v": {"type": "knn_vector", "dimension": 4, "method": {
            "name": "hnsw", "space_type": "cosinesimil", "engine": "lucene"}}}}})) == (
        400, "mapper_parsing_exception")  # method without index.knn
    assert error(lambda: client.indices.create(index=name, body={**knn, "mappings": {
        "properties": {"v": {"type": "knn_vector", "dimension": 4, "method": {
            "name": "ivf", "space_type": "cosinesimil", "engine": "lucene"}}}}})) == (
        400, "mapper_parsing_exception")
    assert error(lambda: client.indices.create(index=name, body={"mappings": {"properties": {
        "t": {"type": "text", "analyzer": "nope"}}}})) == (400, "mapper_parsing_exception")
    assert error(lambda: client.indices.create(index="Upper", body={})) == (
        400, "invalid_index_name_exception")
    assert error(lambda: client.indices.create(index=name, body={"settings": {"index": {
        "bogus": 1}}})) == (400, "illegal_argument_exception")

    # An index made for another embedder (dimension 4): the adapter's writes are rejected.
    client.indices.create(index=name, body={**knn, "mappings": {"dynamic": "strict", "properties": {
        "v": {"type": "knn_vector", "dimension": 4, "method": {
            "name": "hnsw", "space_type": "cosinesimil", "engine": "lucene"}}}}})
    assert error(lambda: client.indices.create(index=name, body={})) == (
        400, "resource_already_exists_exception")
    item = client.bulk(body=[{"index": {"_index": name}}, {"v": [1, 2, 3]}])["items"][0]["index"]
    assert (item["status"], item["error"]["type"]) == (400, "mapper_parsing_exception")
    item = client.bulk(body=[{"index": {"_index": name}}, {"w": 1}])["items"][0]["index"]
    assert item["error"]["type"] == "strict_dynamic_mapping_exception"
    assert error(lambda: client.search(index=name, body={"query": {"fuzzy_knn": {}}})) == (
        400, "parsing_exception")
    assert error(lambda: client.search(index=name, body={"query": {"bool": {"must": [],
                                                                            "nope": []}}})) == (
        400, "parsing_exception")
    assert error(lambda: client.search(index=name, body={"query": {"knn": {"v": {
        "vector": [1, 0], "k": 3}}}})) == (400, "illegal_argument_exception")
    assert error(lambda: client.search(index="missing-index", body={})) == (
        404, "index_not_found_exception")
    assert error(lambda: client.indices.delete(index="missing-index")) == (
        404, "index_not_found_exception")
    assert error(lambda: client.search(index=name, body={"query": {"match_phrase": {}}})) == (
        400, "double_not_implemented_exception")

    other = make_index(es)
    other.index = name  # the adapter pointed at the dimension-4 index
    other._ready.add(name)
    with pytest.raises(OpenSearchBulkError) as err:
        other.upsert([doc("event:1", "a", vec=unit(0)), doc("event:2", "b", vec=unit(1))])
    assert set(err.value.failed) == {"event:1", "event:2"}


def test_double_cjk_analyzer_approximation():
    assert cjk("奶糖昨天 Went to the Park") == ["奶糖", "糖昨", "昨天", "went", "park"]
    assert cjk("猫") == ["猫"]
    assert cjk("ＡＢＣ") == ["abc"]
    assert [norm_length(n) for n in (1, 23, 24, 100)] == [1, 23, 24, 96]


def test_held_terms_is_one_msearch_and_an_item_error_stays_its_own(es):
    idx = make_index(es)
    idx.upsert([doc("event:1", "Melanie painted a sunrise")])
    mark = len(es.requests)
    terms = query_terms("painted lgbtq sunrise")
    assert idx.held_terms("sp", terms) == set(query_terms("painted sunrise"))
    calls = since(es, mark)
    assert [r.path for r in calls] == ["/_msearch"]
    lines = calls[0].ndjson()
    assert len(lines) == 2 * len(terms) and lines[0] == {"index": idx.index}
    assert lines[1]["size"] == 0 and lines[1]["query"]["bool"]["must"] == [
        {"match": {"tokens": {"query": terms[0]}}}]
    # the double answers per item: a bad query fails alone, the other search still answers
    out = raw(es).msearch(body=[{"index": idx.index}, {"query": {"nonsense": {}}},
                                {"index": idx.index}, {"size": 0, "track_total_hits": True}])
    first, second = out["responses"]
    assert first["status"] == 400 and "error" in first
    assert second["status"] == 200 and second["hits"]["total"]["value"] == 1

"""OpenSearch keyword + vector index: one index holds both (see docs/opensearch.md).

`OpenSearchIndex` implements `KeywordIndex` and `VectorIndex` over a managed domain
(`serverless=False`, SigV4 service "es") or an OpenSearch Serverless vector search collection
(`serverless=True`, service "aoss").

Documents: `doc_id` (our id, e.g. "event:42"), `space`, `kind`, `status` (keywords), `start`
/ `end` (epoch seconds, double), `importance`, `text` (raw, `cjk` analyzer), `tokens`
(`textproc.index_text(text)`, `whitespace` analyzer) and `vector` (`knn_vector`, HNSW,
cosinesimil). BM25 queries go against `tokens` with `textproc.search_terms`, so tokenization
is the same as the embedded FTS5 index.

Managed domain: the document `_id` is "<space>|<doc_id>" (ids are unique per space only);
writes pass `refresh=wait_for`, so a search after a write sees it.
Serverless: vector search collections assign `_id` themselves and have no refresh, no
`refresh` parameter and no `_delete_by_query`. Upsert therefore looks up the service `_id`s
of the given `doc_id`s, indexes the new versions, then deletes the old `_id`s by bulk;
delete works the same way. Search is eventually consistent (a write becomes searchable
after some seconds); `settle_timeout` > 0 makes writes wait until they are searchable.
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from hashlib import sha1
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
from opensearchpy import (
    ConnectionError as OSConnectionError,
)
from opensearchpy import (
    ConnectionTimeout,
    NotFoundError,
    OpenSearch,
    RequestError,
    RequestsAWSV4SignerAuth,
    RequestsHttpConnection,
    Transport,
    TransportError,
)

from chalicelib.domain.models import IndexDoc
from chalicelib.domain.textproc import index_text, search_terms
from chalicelib.ports import ACTIVE, Hit, SearchFilter

log = logging.getLogger(__name__)

RETRY_STATUSES = (429, 502, 503, 504)
Service = Literal["es", "aoss"]
_LOOKUP_CHUNK = 500  # doc_ids per lookup search in serverless mode
_BULK_CHUNK = 500  # actions per _bulk request (keeps requests well under size limits)


class OpenSearchBulkError(RuntimeError):
    """Some bulk items failed for good; `failed` maps our doc id → OpenSearch's reason."""

    def __init__(self, action: str, failed: dict[str, str]):
        self.action = action
        self.failed = failed
        listed = "; ".join(f"{k}: {v}" for k, v in sorted(failed.items()))
        super().__init__(f"OpenSearch bulk {action} failed for {len(failed)} document(s): {listed}")


# ---------------------------------------------------------------- connection


class BackoffTransport(Transport):
    """The client's transport, retrying 429/502/503/504, timeouts and connection errors with
    exponential backoff and jitter (opensearch-py's own retries do not wait between tries)."""

    def __init__(self, hosts: Any, *, max_retries: int = 3, backoff: float = 0.2,
                 max_backoff: float = 5.0, retry_on_status: Iterable[int] = RETRY_STATUSES,
                 retry_on_timeout: bool = True, **kwargs: Any):
        super().__init__(hosts, max_retries=0, retry_on_status=tuple(retry_on_status),
                         retry_on_timeout=retry_on_timeout, **kwargs)
        self.attempts = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff

    def perform_request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        for attempt in range(self.attempts + 1):
            try:
                return super().perform_request(method, url, *args, **kwargs)
            except TransportError as e:
                retriable = (
                    (isinstance(e, ConnectionTimeout) and self.retry_on_timeout)
                    or (isinstance(e, OSConnectionError) and not isinstance(e, ConnectionTimeout))
                    or e.status_code in self.retry_on_status
                )
                if not retriable or attempt == self.attempts:
                    raise
                delay = min(self.max_backoff, self.backoff * 2**attempt)
                time.sleep(delay * (0.5 + random.random() / 2))
        raise AssertionError("unreachable")


def connect(endpoint: str, *, region: str | None = None, service: Service | None = None,
            credentials: Any = None, timeout: float = 10.0, max_retries: int = 3,
            backoff: float = 0.2, verify_certs: bool = True, pool_maxsize: int = 10,
            **kwargs: Any) -> OpenSearch:
    """A client for `endpoint` ("https://search-x.eu-west-1.es.amazonaws.com", a Serverless
    collection endpoint, or "http://127.0.0.1:9200").

    service "es" (managed domain) / "aoss" (Serverless) signs every request with SigV4 using
    `credentials` (default: boto3's credential chain) for `region` (default: boto3's);
    service None sends plain HTTP(S) without auth (local clusters, tests).
    """
    url = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(f"not an OpenSearch endpoint URL: {endpoint!r}")
    use_ssl = url.scheme == "https"
    host = {"host": url.hostname, "port": url.port or (443 if use_ssl else 80),
            "use_ssl": use_ssl}
    if url.path and url.path != "/":
        host["url_prefix"] = url.path
    auth = None
    if service is not None:
        if service not in ("es", "aoss"):
            raise ValueError("service must be 'es', 'aoss' or None")
        import boto3

        session = boto3.Session()
        region = region or session.region_name
        if not region:
            raise ValueError("a region is required to sign OpenSearch requests")
        credentials = credentials or session.get_credentials()
        if credentials is None:
            raise ValueError("no AWS credentials found to sign OpenSearch requests")
        auth = RequestsAWSV4SignerAuth(credentials, region, service)
    return OpenSearch(
        hosts=[host],
        http_auth=auth,
        use_ssl=use_ssl,
        verify_certs=verify_certs if use_ssl else False,
        ssl_show_warn=use_ssl,
        connection_class=RequestsHttpConnection,
        transport_class=BackoffTransport,
        timeout=timeout,
        max_retries=max_retries,
        backoff=backoff,
        retry_on_timeout=True,
        pool_maxsize=pool_maxsize,
        send_get_body_as="POST",
        **kwargs,
    )


# ---------------------------------------------------------------- index


_INDEX_NAME = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")


@dataclass(frozen=True)
class _Op:
    """One bulk action: metadata line, optional source, and the doc id it concerns."""

    meta: dict[str, Any]
    source: dict[str, Any] | None
    ref: str


class OpenSearchIndex:
    """KeywordIndex + VectorIndex on one OpenSearch index (or one index per space)."""

    def __init__(self, client: OpenSearch, dim: int, *, index: str = "annals",
                 per_space: bool = False, serverless: bool = False,
                 engine: Literal["lucene", "faiss"] = "lucene", hnsw_m: int = 16,
                 ef_construction: int = 128, shards: int | None = 1,
                 replicas: int | None = None, bulk_retries: int = 5, backoff: float = 0.2,
                 max_backoff: float = 5.0, settle_timeout: float = 0.0,
                 settle_poll: float = 0.25):
        if not _INDEX_NAME.match(index) or len(index) > 200:
            raise ValueError(f"invalid index name or prefix: {index!r}")
        if engine not in ("lucene", "faiss"):
            # nmslib has no efficient (in-graph) filtering, which vector_search relies on.
            raise ValueError("engine must be 'lucene' or 'faiss'")
        self.client = client
        self.dim = dim
        self.index = index
        self.per_space = per_space
        self.serverless = serverless
        self.engine = engine
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.shards = shards
        self.replicas = replicas
        self.bulk_retries = bulk_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.settle_timeout = settle_timeout
        self.settle_poll = settle_poll
        self._ready: set[str] = set()

    @classmethod
    def from_endpoint(cls, endpoint: str, dim: int, *, region: str | None = None,
                      service: Service | None = None, timeout: float = 10.0,
                      **options: Any) -> OpenSearchIndex:
        client = connect(endpoint, region=region, service=service, timeout=timeout)
        options.setdefault("serverless", service == "aoss")
        return cls(client, dim, **options)

    # ------------------------------------------------------------ index management

    def index_name(self, space: str) -> str:
        if not self.per_space:
            return self.index
        slug = space.lower()
        if re.fullmatch(r"[a-z0-9_\-.]+", space) and len(space) <= 48:
            return f"{self.index}-{slug}"
        # Upper case or ':' '@' are not allowed in index names: keep a readable part + a hash.
        safe = re.sub(r"[^a-z0-9_\-]", "_", slug)[:40]
        return f"{self.index}-{safe}-{sha1(space.encode()).hexdigest()[:10]}"

    def index_body(self) -> dict[str, Any]:
        """Settings and mappings of a new index."""
        settings: dict[str, Any] = {"knn": True}
        if not self.serverless:  # Serverless manages shards and replicas itself
            if self.shards is not None:
                settings["number_of_shards"] = self.shards  # one shard: exact BM25 statistics
            if self.replicas is not None:
                settings["number_of_replicas"] = self.replicas
        return {
            "settings": {"index": settings},
            "mappings": {
                "dynamic": "strict",
                "properties": {
                    "doc_id": {"type": "keyword"},
                    "space": {"type": "keyword"},
                    "kind": {"type": "keyword"},
                    "status": {"type": "keyword"},
                    "start": {"type": "double"},
                    "end": {"type": "double"},
                    "importance": {"type": "integer"},
                    "text": {"type": "text", "analyzer": "cjk"},
                    "tokens": {"type": "text", "analyzer": "whitespace"},
                    "vector": {
                        "type": "knn_vector",
                        "dimension": self.dim,
                        "method": {
                            "name": "hnsw",
                            "space_type": "cosinesimil",
                            "engine": self.engine,
                            "parameters": {"m": self.hnsw_m,
                                           "ef_construction": self.ef_construction},
                        },
                    },
                },
            },
        }

    def ensure_index(self, space: str) -> str:
        name = self.index_name(space)
        if name in self._ready:
            return name
        if not self.client.indices.exists(index=name):
            try:
                self.client.indices.create(index=name, body=self.index_body())
            except RequestError as e:
                if e.error != "resource_already_exists_exception":
                    raise
        self._ready.add(name)
        return name

    def _existing_index(self, space: str) -> str | None:
        name = self.index_name(space)
        if name in self._ready:
            return name
        if self.client.indices.exists(index=name):
            self._ready.add(name)
            return name
        return None

    def drop(self, space: str | None = None) -> None:
        """Delete the index (the one of `space` when per_space); a missing index is fine."""
        if self.per_space and space is None:
            raise ValueError("per_space indexes are dropped one space at a time")
        name = self.index_name(space) if space is not None else self.index
        with contextlib.suppress(NotFoundError):
            self.client.indices.delete(index=name)
        self._ready.discard(name)

    # ------------------------------------------------------------ documents

    def _key(self, space: str, doc_id: str) -> str:
        return f"{space}|{doc_id}"  # '|' never occurs in a space id

    def _source(self, doc: IndexDoc) -> dict[str, Any]:
        source: dict[str, Any] = {
            "doc_id": doc.id, "space": doc.space, "kind": doc.kind, "status": doc.status,
            "start": doc.start, "end": doc.end, "importance": doc.importance,
            "text": doc.text, "tokens": index_text(doc.text),
        }
        if doc.vector is not None:
            vec = np.asarray(doc.vector, np.float64)
            if vec.shape != (self.dim,) or not np.all(np.isfinite(vec)):
                raise ValueError(f"{doc.id}: vector of dimension {self.dim} required")
            norm = float(np.linalg.norm(vec))
            if norm == 0.0:
                # cosinesimil rejects zero vectors; the doc stays keyword-searchable.
                log.warning("%s: zero vector not indexed for k-NN", doc.id)
            else:
                source["vector"] = (vec / norm).astype(np.float32).tolist()
        return source

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        """Insert or replace documents. All are validated before anything is written."""
        latest: dict[tuple[str, str], IndexDoc] = {}
        for doc in docs:
            latest[(doc.space, doc.id)] = doc
        prepared = [(doc, self._source(doc)) for doc in latest.values()]
        groups: dict[tuple[str, str], list[tuple[IndexDoc, dict[str, Any]]]] = {}
        for doc, source in prepared:
            groups.setdefault((self.ensure_index(doc.space), doc.space), []).append((doc, source))
        for (name, space), items in groups.items():
            if self.serverless:
                self._upsert_serverless(name, space, items)
            else:
                ops = [_Op({"index": {"_index": name, "_id": self._key(doc.space, doc.id)}},
                           source, doc.id) for doc, source in items]
                self._bulk("upsert", ops)

    def delete(self, space: str, ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(ids))
        name = self._existing_index(space) if ids else None
        if name is None:
            return
        if self.serverless:
            found = self._lookup(name, space, ids)
            old = [sid for sids in found.values() for sid in sids]
            refs = {sid: ref for ref, sids in found.items() for sid in sids}
            self._bulk("delete", [_Op({"delete": {"_index": name, "_id": sid}}, None, refs[sid])
                                  for sid in old])
            self._settle(name, present=[], absent=old)
        else:
            self._bulk("delete", [_Op({"delete": {"_index": name, "_id": self._key(space, i)}},
                                      None, i) for i in ids])

    def _upsert_serverless(self, name: str, space: str,
                           items: list[tuple[IndexDoc, dict[str, Any]]]) -> None:
        # New versions first, old ones deleted after: a failure leaves a duplicate (hidden by
        # de-duplication in search, cleaned by the next upsert), never a missing document.
        found = self._lookup(name, space, [doc.id for doc, _ in items])
        ops = [_Op({"index": {"_index": name}}, source, doc.id) for doc, source in items]
        results, failed = self._bulk_items(ops)
        new = [r["_id"] for r in results if r is not None]
        done = {op.ref for op, r in zip(ops, results, strict=True) if r is not None}
        old = [(sid, ref) for ref, sids in found.items() if ref in done for sid in sids]
        _, failed_deletes = self._bulk_items(
            [_Op({"delete": {"_index": name, "_id": sid}}, None, ref) for sid, ref in old])
        self._settle(name, present=new, absent=[sid for sid, _ in old])
        if failed or failed_deletes:
            raise OpenSearchBulkError("upsert", {**failed_deletes, **failed})

    def _lookup(self, name: str, space: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """Serverless: our doc id → the service-assigned `_id`s currently searchable for it."""
        found: dict[str, list[str]] = {}
        for start in range(0, len(ids), _LOOKUP_CHUNK):
            chunk = list(ids[start:start + _LOOKUP_CHUNK])
            body = {"size": min(10_000, 4 * len(chunk) + 10), "_source": ["doc_id"],
                    "query": {"bool": {"filter": [{"term": {"space": space}},
                                                  {"terms": {"doc_id": chunk}}]}}}
            for hit in self._search(name, body):
                found.setdefault(hit["_source"]["doc_id"], []).append(hit["_id"])
        return found

    def _settle(self, name: str, present: list[str], absent: list[str]) -> None:
        """Serverless, when settle_timeout > 0: wait until new `_id`s are searchable and old
        ones are not, so a following search sees this write."""
        if not self.serverless or self.settle_timeout <= 0 or not (present or absent):
            return
        deadline = time.monotonic() + self.settle_timeout
        while True:
            seen_new = self._count_ids(name, present) if present else 0
            seen_old = self._count_ids(name, absent) if absent else 0
            if seen_new == len(present) and seen_old == 0:
                return
            if time.monotonic() >= deadline:
                log.warning("opensearch %s: write not searchable after %.1fs", name,
                            self.settle_timeout)
                return
            time.sleep(self.settle_poll)

    def _count_ids(self, name: str, ids: list[str]) -> int:
        return int(self.client.count(index=name, body={"query": {"ids": {"values": ids}}})["count"])

    def _bulk(self, action: str, ops: list[_Op]) -> None:
        """Send `ops`; raise OpenSearchBulkError naming the doc ids that failed for good."""
        _, failed = self._bulk_items(ops)
        if failed:
            raise OpenSearchBulkError(action, failed)

    def _bulk_items(self, ops: list[_Op]) -> tuple[list[dict[str, Any] | None], dict[str, str]]:
        """Send `ops` (in requests of at most `_BULK_CHUNK` actions), re-sending items rejected
        with a retriable status (429 …) with backoff. Returns the per-op results (None where an
        op failed) and {doc id: reason} of the failures."""
        results: list[dict[str, Any] | None] = [None] * len(ops)
        errors: dict[int, str] = {}
        params = {} if self.serverless else {"refresh": "wait_for"}
        for first in range(0, len(ops), _BULK_CHUNK):
            pending = list(range(first, min(first + _BULK_CHUNK, len(ops))))
            for attempt in range(self.bulk_retries + 1):
                body: list[dict[str, Any]] = []
                for i in pending:
                    body.append(ops[i].meta)
                    if ops[i].source is not None:
                        body.append(ops[i].source)
                response = self.client.bulk(body=body, params=params)
                retry: list[int] = []
                for i, item in zip(pending, response["items"], strict=True):
                    kind, result = next(iter(item.items()))
                    status = int(result.get("status", 500))
                    if 200 <= status < 300 or (kind == "delete" and status == 404):
                        results[i] = result
                        errors.pop(i, None)
                        continue
                    errors[i] = _reason(result)
                    if status in RETRY_STATUSES:
                        retry.append(i)
                pending = retry
                if not pending or attempt == self.bulk_retries:
                    break
                delay = min(self.max_backoff, self.backoff * 2**attempt)
                log.info("opensearch bulk: retrying %d item(s) in %.2fs", len(pending), delay)
                time.sleep(delay * (0.5 + random.random() / 2))
        return results, {ops[i].ref: reason for i, reason in sorted(errors.items())}

    # ------------------------------------------------------------ search

    def _search(self, name: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            return self.client.search(index=name, body=body)["hits"]["hits"]
        except NotFoundError as e:
            if e.error == "index_not_found_exception":
                return []
            raise

    def _filters(self, space: str, flt: SearchFilter) -> dict[str, Any]:
        clauses: list[dict[str, Any]] = [
            {"term": {"space": space}},
            {"terms": {"kind": list(flt.kinds)}},
            {"terms": {"status": list(flt.statuses)}},
        ]
        if flt.end is not None:
            clauses.append({"range": {"start": {"lt": flt.end}}})
        if flt.start is not None:
            clauses.append({"range": {"end": {"gt": flt.start}}})
        query: dict[str, Any] = {"filter": clauses}
        if flt.exclude_ids:
            excluded = sorted(flt.exclude_ids)
            if self.serverless:
                query["must_not"] = [{"terms": {"doc_id": excluded}}]
            else:
                query["must_not"] = [{"ids": {"values": [self._key(space, i) for i in excluded]}}]
        return query

    def _size(self, k: int) -> int:
        # Serverless may briefly hold two versions of a doc: fetch extra, keep the best.
        return min(10_000, 2 * k + 5 if self.serverless else k)

    def _hits(self, raw: list[dict[str, Any]], k: int, convert: Any = float) -> list[Hit]:
        hits: list[Hit] = []
        seen: set[str] = set()
        for h in raw:
            doc_id = h["_source"]["doc_id"]
            if doc_id not in seen:
                seen.add(doc_id)
                hits.append(Hit(doc_id, convert(h["_score"])))
        return hits[:k]

    def keyword_search(self, space: str, query: str, k: int,
                       flt: SearchFilter = ACTIVE) -> list[Hit]:
        terms = search_terms(query)
        if not terms or k <= 0:
            return []
        bool_query = self._filters(space, flt)
        bool_query["must"] = [{"match": {"tokens": {"query": " ".join(terms), "operator": "or"}}}]
        body = {"size": self._size(k), "_source": ["doc_id"], "query": {"bool": bool_query}}
        return self._hits(self._search(self.index_name(space), body), k)

    def vector_search(self, space: str, vector: np.ndarray, k: int,
                      flt: SearchFilter = ACTIVE) -> list[Hit]:
        q = np.asarray(vector, np.float64).reshape(-1)
        if k <= 0:
            return []
        if q.shape != (self.dim,) or not np.all(np.isfinite(q)):
            raise ValueError(f"query vector of dimension {self.dim} required")
        if not q.any():
            return []  # cosine similarity to a zero vector is undefined
        size = self._size(k)
        body = {"size": size, "_source": ["doc_id"],
                "query": {"knn": {"vector": {"vector": q.tolist(), "k": size,
                                             "filter": {"bool": self._filters(space, flt)}}}}}
        return self._hits(self._search(self.index_name(space), body), k, score_to_cosine)

    def held_terms(self, space: str, terms: Sequence[str]) -> set[str]:
        """The terms some document of the space holds: one `_msearch` round trip, a
        zero-size search per term (hits.total says whether any document matches)."""
        terms = list(dict.fromkeys(terms))
        if not terms:
            return set()
        name = self.index_name(space)
        lines: list[dict[str, Any]] = []
        for term in terms:
            bool_query = self._filters(space, ACTIVE)
            bool_query["must"] = [{"match": {"tokens": {"query": term}}}]
            lines += [{"index": name},
                      {"size": 0, "track_total_hits": True, "query": {"bool": bool_query}}]
        responses = self.client.msearch(body=lines)["responses"]
        return {term for term, found in zip(terms, responses, strict=True)
                if found.get("status", 200) == 200 and found["hits"]["total"]["value"] > 0}

    def count(self, space: str, flt: SearchFilter = ACTIVE) -> int:
        body = {"query": {"bool": self._filters(space, flt)}}
        try:
            return int(self.client.count(index=self.index_name(space), body=body)["count"])
        except NotFoundError as e:
            if e.error == "index_not_found_exception":
                return 0
            raise


def score_to_cosine(score: float) -> float:
    """OpenSearch's k-NN score for space_type cosinesimil (lucene and faiss engines) is
    (1 + cos) / 2, to keep scores non-negative; this turns it back into cos in [-1, 1]."""
    return max(-1.0, min(1.0, 2.0 * float(score) - 1.0))


def _reason(result: dict[str, Any]) -> str:
    error = result.get("error")
    status = result.get("status")
    if isinstance(error, dict):
        return f"{status} {error.get('type')}: {error.get('reason')}"
    return f"{status} {error}" if error else f"status {status}"


__all__ = ["RETRY_STATUSES", "BackoffTransport", "OpenSearchBulkError", "OpenSearchIndex",
           "connect", "score_to_cosine"]

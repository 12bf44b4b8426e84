"""Indices, documents, refresh visibility and the operations behind each endpoint.

Visibility is modelled, because it is what an adapter most easily gets wrong:
- `es` mode: writes are visible to GET at once (real-time get) but to search only after a
  refresh — `?refresh=true|wait_for` on the write, `POST _refresh`, or the periodic refresh
  (`index.refresh_interval`, default 1 s) that happens lazily when a search arrives. The
  double performs `wait_for` as an immediate refresh (real OpenSearch waits for the next
  scheduled one; the outcome for the caller is the same).
- `aoss` mode: no refresh API; a write becomes searchable `visibility_delay` seconds after
  it was made (0 by default, so tests are fast; set it to exercise eventual consistency).
"""

from __future__ import annotations

import base64
import fnmatch
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from .errors import OpenSearchError, bad_request, index_not_found, not_implemented, parsing
from .mapping import Mapping, parse_document, parse_mappings, parse_settings
from .query import Context, StoredDoc, parse_query

MAX_RESULT_WINDOW = 10_000
_BAD_INDEX_CHARS = set('\\/*?"<>| ,#:')


def check_index_name(name: str) -> None:
    def invalid(why: str) -> OpenSearchError:
        return bad_request("invalid_index_name_exception", f"Invalid index name [{name}], {why}",
                           index=name)
    if not name or name in (".", ".."):
        raise invalid("must not be '.' or '..'")
    if name != name.lower():
        raise invalid("must be lowercase")
    if name[0] in "_-+":
        raise invalid("must not start with '_', '-', or '+'")
    bad = _BAD_INDEX_CHARS & set(name)
    if bad:
        raise invalid(f"must not contain the following characters {sorted(bad)}")
    if len(name.encode()) > 255:
        raise invalid("index name is too long")


def _interval(value: Any) -> float | None:
    text = str(value)
    if text == "-1":
        return None
    m = re.fullmatch(r"(\d+)(ms|s|m)?", text)
    if not m:
        raise bad_request("illegal_argument_exception",
                          f"failed to parse setting [index.refresh_interval] with value [{text}]")
    number = int(m.group(1))
    return {"ms": number / 1000, "s": number, "m": number * 60, None: number / 1000}[m.group(2)]


def new_id() -> str:
    return base64.urlsafe_b64encode(os.urandom(15)).decode()


@dataclass
class Index:
    name: str
    settings: dict[str, Any]
    mapping: Mapping
    uuid: str = field(default_factory=lambda: uuid.uuid4().hex[:22])
    live: dict[str, StoredDoc] = field(default_factory=dict)
    visible: dict[str, StoredDoc] = field(default_factory=dict)
    pending: list[tuple[float, str, StoredDoc | None]] = field(default_factory=list)
    last_refresh: float = field(default_factory=time.monotonic)
    seq_no: int = -1

    def write(self, doc_id: str, doc: StoredDoc | None) -> None:
        if doc is None:
            self.live.pop(doc_id, None)
        else:
            self.live[doc_id] = doc
        self.pending.append((time.monotonic(), doc_id, doc))

    def refresh(self, upto: float | None = None) -> None:
        keep = []
        for entry in self.pending:
            at, doc_id, doc = entry
            if upto is not None and at > upto:
                keep.append(entry)
                continue
            self.visible.pop(doc_id, None)  # an update gets a new Lucene doc id: it goes last
            if doc is not None:
                self.visible[doc_id] = doc
        self.pending = keep
        self.last_refresh = time.monotonic()

    def settings_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.settings.items():
            node = out
            parts = key.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = str(value).lower() if isinstance(value, bool) else str(value)
        out.setdefault("index", {}).update({"uuid": self.uuid, "provided_name": self.name})
        return out


class Cluster:
    """All state of one double; every public method takes the lock."""

    def __init__(self, mode: str = "es", *, visibility_delay: float = 0.0):
        if mode not in ("es", "aoss"):
            raise ValueError("mode must be 'es' or 'aoss'")
        self.mode = mode
        self.visibility_delay = visibility_delay
        self.indices: dict[str, Index] = {}
        self.lock = threading.RLock()

    @property
    def serverless(self) -> bool:
        return self.mode == "aoss"

    # ------------------------------------------------------------ indices

    def get(self, name: str) -> Index:
        index = self.indices.get(name)
        if index is None:
            raise index_not_found(name)
        return index

    def resolve(self, expr: str | None, ignore_unavailable: bool = False) -> list[Index]:
        if expr in (None, "", "_all", "*"):
            return list(self.indices.values())
        out = []
        for part in expr.split(","):
            if "*" in part:
                out.extend(i for n, i in self.indices.items() if fnmatch.fnmatchcase(n, part))
            elif part in self.indices:
                out.append(self.indices[part])
            elif not ignore_unavailable:
                raise index_not_found(part)
        return out

    def create_index(self, name: str, body: Any) -> dict[str, Any]:
        with self.lock:
            check_index_name(name)
            if name in self.indices:
                raise bad_request("resource_already_exists_exception",
                                  f"index [{name}/{self.indices[name].uuid}] already exists",
                                  index=name)
            body = body or {}
            if not isinstance(body, dict):
                raise parsing("request body must be an object")
            unknown = set(body) - {"settings", "mappings", "aliases"}
            if unknown:
                raise parsing(f"unknown key [{sorted(unknown)[0]}] for create index")
            if body.get("aliases"):
                raise not_implemented("aliases")
            settings = parse_settings(body.get("settings"))
            if settings.get("index.refresh_interval") is not None:
                _interval(settings["index.refresh_interval"])
            mapping = parse_mappings(body.get("mappings"), settings)
            self.indices[name] = Index(name, settings, mapping)
            return {"acknowledged": True, "shards_acknowledged": True, "index": name}

    def delete_index(self, name: str) -> dict[str, Any]:
        with self.lock:
            self.get(name)
            del self.indices[name]
            return {"acknowledged": True}

    def describe(self, name: str) -> dict[str, Any]:
        with self.lock:
            index = self.get(name)
            return {name: {"aliases": {}, "mappings": index.mapping.to_json(),
                           "settings": index.settings_json()}}

    # ------------------------------------------------------------ documents

    def _source_doc(self, index: Index, doc_id: str, source: Any) -> StoredDoc:
        parsed, added = parse_document(index.mapping, source, doc_id)
        for spec in added:
            index.mapping.fields[spec.name] = spec
        old = index.live.get(doc_id)
        index.seq_no += 1
        return StoredDoc(doc_id, source, parsed, (old.version + 1) if old else 1, index.seq_no)

    def index_doc(self, index_name: str, doc_id: str | None, source: Any,
                  op_type: str = "index") -> tuple[int, dict[str, Any]]:
        """One write of an index/create action; returns (status, bulk-item-shaped result)."""
        with self.lock:
            index = self.get(index_name)
            if doc_id is not None and self.serverless:
                raise bad_request("illegal_argument_exception",
                                  "Document ID is not supported in create/index operation"
                                  " request")
            if doc_id is None:
                doc_id = new_id()
            elif not doc_id or len(doc_id.encode()) > 512:
                raise bad_request("action_request_validation_exception",
                                  "Validation Failed: 1: id is too long, must be no longer than"
                                  " 512 bytes;" if doc_id else "Validation Failed: 1: id is missing;")
            if op_type == "create" and doc_id in index.live:
                old = index.live[doc_id]
                raise OpenSearchError(409, "version_conflict_engine_exception",
                                      f"[{doc_id}]: version conflict, document already exists"
                                      f" (current version [{old.version}])",
                                      index=index_name, shard="0", index_uuid=index.uuid)
            created = doc_id not in index.live
            doc = self._source_doc(index, doc_id, source)
            index.write(doc_id, doc)
            return (201 if created else 200), self._result(
                index, doc, "created" if created else "updated")

    def delete_doc(self, index_name: str, doc_id: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            index = self.get(index_name)
            old = index.live.get(doc_id)
            index.seq_no += 1
            if old is None:
                return 404, {"_index": index_name, "_id": doc_id, "_version": 1,
                             "result": "not_found", **self._shards(), "_seq_no": index.seq_no,
                             "_primary_term": 1}
            index.write(doc_id, None)
            gone = StoredDoc(doc_id, {}, None, old.version + 1, index.seq_no)
            return 200, self._result(index, gone, "deleted")

    def get_doc(self, index_name: str, doc_id: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            index = self.get(index_name)
            doc = index.live.get(doc_id)  # real-time get: not limited to refreshed docs
            if doc is None:
                return 404, {"_index": index_name, "_id": doc_id, "found": False}
            return 200, {"_index": index_name, "_id": doc_id, "_version": doc.version,
                         "_seq_no": doc.seq_no, "_primary_term": 1, "found": True,
                         "_source": doc.source}

    @staticmethod
    def _shards() -> dict[str, Any]:
        return {"_shards": {"total": 2, "successful": 1, "failed": 0}}

    def _result(self, index: Index, doc: StoredDoc, result: str) -> dict[str, Any]:
        return {"_index": index.name, "_id": doc.id, "_version": doc.version, "result": result,
                **self._shards(), "_seq_no": doc.seq_no, "_primary_term": 1}

    # ------------------------------------------------------------ refresh

    def refresh(self, expr: str | None) -> dict[str, Any]:
        with self.lock:
            targets = self.resolve(expr)
            for index in targets:
                index.refresh()
            n = len(targets)
            return {"_shards": {"total": 2 * n, "successful": n, "failed": 0}}

    def refresh_after_write(self, names: set[str], refresh: str | None) -> None:
        if refresh in (None, "false"):
            return
        if refresh not in ("", "true", "wait_for"):
            raise bad_request("illegal_argument_exception",
                              f"Unknown value for refresh: [{refresh}].")
        with self.lock:
            for name in names:
                if name in self.indices:
                    self.indices[name].refresh()

    def _searchable(self, index: Index) -> dict[str, StoredDoc]:
        now = time.monotonic()
        if self.serverless:
            index.refresh(upto=now - self.visibility_delay)
        else:
            interval = _interval(index.settings.get("index.refresh_interval", "1s"))
            if interval is not None and now - index.last_refresh >= interval:
                index.refresh()
        return index.visible

    # ------------------------------------------------------------ search

    def search(self, expr: str | None, body: Any, params: dict[str, str]) -> dict[str, Any]:
        started = time.monotonic()
        body = body or {}
        if not isinstance(body, dict):
            raise parsing("request body must be an object")
        allowed = {"query", "size", "from", "_source", "track_total_hits", "timeout"}
        for key in body:
            if key in ("aggs", "aggregations", "sort", "highlight", "collapse", "search_after",
                       "post_filter", "suggest", "rescore", "min_score", "explain",
                       "docvalue_fields", "fields", "stored_fields", "script_fields", "ext",
                       "seq_no_primary_term", "version", "profile", "pit", "slice",
                       "terminate_after", "indices_boost", "stats", "search_pipeline"):
                raise not_implemented(f"search option [{key}]")
            if key not in allowed:
                raise parsing(f"Unknown key for a VALUE_STRING in [{key}].")
        size = _int_param(params.get("size", body.get("size", 10)), "size")
        offset = _int_param(params.get("from", body.get("from", 0)), "from")
        if size < 0 or offset < 0:
            raise bad_request("illegal_argument_exception",
                              "[size] parameter cannot be negative" if size < 0 else
                              "[from] parameter cannot be negative")
        with self.lock:
            targets = self.resolve(expr, params.get("ignore_unavailable") == "true")
            hits: list[tuple[float, int, int, Index, StoredDoc]] = []
            total = 0
            for n, index in enumerate(targets):
                window = int(index.settings.get("index.max_result_window", MAX_RESULT_WINDOW))
                if offset + size > window:
                    raise bad_request(
                        "illegal_argument_exception",
                        f"Result window is too large, from + size must be less than or equal to:"
                        f" [{window}] but was [{offset + size}].")
                ctx = Context(index.mapping, dict(self._searchable(index)))
                node = parse_query(body.get("query", {"match_all": {}}), index.mapping)
                scores = node.run(ctx)
                total += len(scores)
                for doc_id, score in scores.items():
                    hits.append((score, n, ctx.order[doc_id], index, ctx.docs[doc_id]))
            hits.sort(key=lambda h: (-h[0], h[1], h[2]))
            page = hits[offset: offset + size]
            source_spec = body.get("_source", params.get("_source", True))
            return {
                "took": int((time.monotonic() - started) * 1000),
                "timed_out": False,
                "_shards": {"total": len(targets), "successful": len(targets), "skipped": 0,
                            "failed": 0},
                "hits": {
                    "total": {"value": total, "relation": "eq"},
                    "max_score": hits[0][0] if hits else None,
                    "hits": [self._hit(index, doc, score, source_spec)
                             for score, _, _, index, doc in page],
                },
            }

    @staticmethod
    def _hit(index: Index, doc: StoredDoc, score: float, spec: Any) -> dict[str, Any]:
        hit: dict[str, Any] = {"_index": index.name, "_id": doc.id, "_score": score}
        source = _filter_source(doc.source, spec)
        if source is not None:
            hit["_source"] = source
        return hit

    def count(self, expr: str | None, body: Any, params: dict[str, str]) -> dict[str, Any]:
        body = body or {}
        if not isinstance(body, dict):
            raise parsing("request body must be an object")
        for key in body:
            if key != "query":
                raise parsing(f"request does not support [{key}]")
        with self.lock:
            targets = self.resolve(expr, params.get("ignore_unavailable") == "true")
            total = 0
            for index in targets:
                node = parse_query(body.get("query", {"match_all": {}}), index.mapping)
                total += len(node.run(Context(index.mapping, dict(self._searchable(index)))))
            n = len(targets)
            return {"count": total,
                    "_shards": {"total": n, "successful": n, "skipped": 0, "failed": 0}}

    def delete_by_query(self, expr: str, body: Any, params: dict[str, str]) -> dict[str, Any]:
        body = body or {}
        if not isinstance(body, dict) or "query" not in body:
            raise bad_request("action_request_validation_exception",
                              "Validation Failed: 1: query is missing;")
        for key in body:
            if key not in ("query", "max_docs"):
                raise parsing(f"[delete_by_query] unknown field [{key}]")
        started = time.monotonic()
        with self.lock:
            targets = self.resolve(expr)
            deleted = 0
            for index in targets:
                node = parse_query(body["query"], index.mapping)
                # Like the real API: deletes what the last refresh made searchable.
                for doc_id in node.run(Context(index.mapping, dict(self._searchable(index)))):
                    if doc_id in index.live:
                        index.write(doc_id, None)
                        deleted += 1
            if params.get("refresh") in ("", "true"):
                for index in targets:
                    index.refresh()
            return {"took": int((time.monotonic() - started) * 1000), "timed_out": False,
                    "total": deleted, "deleted": deleted, "batches": 1 if deleted else 0,
                    "version_conflicts": 0, "noops": 0,
                    "retries": {"bulk": 0, "search": 0}, "failures": []}


def _int_param(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise parsing(f"[{name}] must be a number")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise bad_request("illegal_argument_exception",
                          f"Failed to parse int parameter [{name}] with value [{value}]") from None


def _filter_source(source: dict[str, Any], spec: Any) -> dict[str, Any] | None:
    if spec in (True, "true", None):
        return source
    if spec in (False, "false"):
        return None
    includes: list[str]
    excludes: list[str] = []
    if isinstance(spec, str):
        includes = spec.split(",")
    elif isinstance(spec, list):
        includes = [str(s) for s in spec]
    elif isinstance(spec, dict):
        includes = list(spec.get("includes", spec.get("include", [])) or [])
        excludes = list(spec.get("excludes", spec.get("exclude", [])) or [])
    else:
        raise parsing("[_source] must be a boolean, string, array or object")
    return {k: v for k, v in source.items()
            if (not includes or any(fnmatch.fnmatchcase(k, p) for p in includes))
            and not any(fnmatch.fnmatchcase(k, p) for p in excludes)}

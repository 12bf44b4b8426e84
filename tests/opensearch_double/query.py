"""Query DSL of the double: parsing (with OpenSearch's rejections) and scoring.

Scoring follows Lucene: BM25 (k1=1.2, b=0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5)),
term weight idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)) with dl after Lucene's one-byte
length encoding), statistics from one shard holding the searchable documents; `bool` sums
its scoring clauses; `terms`, `range`, `ids`, `exists` and `match_all` are constant-score.
`knn` is exact (brute force) over the stored vectors that pass its filter; its score is the
engine's translation of the distance — (1 + cos) / 2 for cosinesimil.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .analysis import ANALYZERS, norm_length
from .errors import bad_request, not_implemented, parsing
from .mapping import NUMERIC, FieldSpec, Mapping

K1 = 1.2
B = 0.75
MAX_K = 10_000

Scores = dict[str, float]


@dataclass
class StoredDoc:
    id: str
    source: dict[str, Any]
    parsed: Any  # mapping.ParsedDoc
    version: int
    seq_no: int


class Context:
    """The searchable documents of one index and their lazily computed statistics."""

    def __init__(self, mapping: Mapping, docs: dict[str, StoredDoc]):
        self.mapping = mapping
        self.docs = docs
        self.order = {doc_id: n for n, doc_id in enumerate(docs)}  # Lucene doc id order
        self._tf: dict[str, dict[str, Counter]] = {}
        self._len: dict[str, dict[str, int]] = {}

    def field(self, name: str) -> FieldSpec | None:
        return self.mapping.fields.get(name)

    def _terms(self, name: str) -> dict[str, Counter]:
        if name not in self._tf:
            spec = self.field(name)
            tf: dict[str, Counter] = {}
            lengths: dict[str, int] = {}
            for doc_id, doc in self.docs.items():
                if spec is not None and spec.type == "text":
                    tokens = doc.parsed.tokens.get(name, [])
                    if tokens:
                        tf[doc_id] = Counter(tokens)
                        lengths[doc_id] = len(tokens)
                else:
                    values = doc.parsed.values.get(name, [])
                    if values:
                        tf[doc_id] = Counter(values)
                        lengths[doc_id] = 1  # keyword fields have no norms
            self._tf[name] = tf
            self._len[name] = lengths
        return self._tf[name]

    def bm25(self, name: str, term: str, boost: float) -> Scores:
        tf = self._terms(name)
        lengths = self._len[name]
        doc_count = len(tf)
        if doc_count == 0:
            return {}
        matching = {d: c[term] for d, c in tf.items() if c[term]}
        n = len(matching)
        if n == 0:
            return {}
        idf = math.log(1 + (doc_count - n + 0.5) / (n + 0.5))
        spec = self.field(name)
        if spec is not None and spec.type == "text":
            avgdl = sum(lengths.values()) / doc_count
            norm = {d: norm_length(lengths[d]) for d in matching}
        else:
            avgdl, norm = 1.0, dict.fromkeys(matching, 1)
        return {d: boost * idf * f / (f + K1 * (1 - B + B * norm[d] / avgdl))
                for d, f in matching.items()}


# ---------------------------------------------------------------- nodes


class Node:
    def run(self, ctx: Context) -> Scores:
        raise NotImplementedError


@dataclass
class MatchAll(Node):
    boost: float = 1.0

    def run(self, ctx: Context) -> Scores:
        return dict.fromkeys(ctx.docs, self.boost)


@dataclass
class MatchNone(Node):
    def run(self, ctx: Context) -> Scores:
        return {}


@dataclass
class Constant(Node):
    test: Callable[[StoredDoc], bool]
    boost: float = 1.0

    def run(self, ctx: Context) -> Scores:
        return {d: self.boost for d, doc in ctx.docs.items() if self.test(doc)}


@dataclass
class TermScore(Node):
    field: str
    term: Any
    boost: float = 1.0

    def run(self, ctx: Context) -> Scores:
        return ctx.bm25(self.field, self.term, self.boost)


@dataclass
class Disjunction(Node):
    """A match query: term clauses summed; `required` of them must match."""

    clauses: list[Node]
    required: int

    def run(self, ctx: Context) -> Scores:
        total: Scores = {}
        hits: Counter = Counter()
        for clause in self.clauses:
            for d, s in clause.run(ctx).items():
                total[d] = total.get(d, 0.0) + s
                hits[d] += 1
        return {d: s for d, s in total.items() if hits[d] >= self.required}


@dataclass
class Bool(Node):
    must: list[Node]
    should: list[Node]
    filter: list[Node]
    must_not: list[Node]
    minimum_should_match: int
    boost: float = 1.0

    def run(self, ctx: Context) -> Scores:
        if not (self.must or self.should or self.filter):
            base: Scores = dict.fromkeys(ctx.docs, 1.0)  # OpenSearch adds match_all
            if not self.must_not:
                return {d: s * self.boost for d, s in base.items()}
        else:
            base = dict.fromkeys(ctx.docs, 0.0)
        candidates = set(base)
        for clause in self.filter:
            candidates &= set(clause.run(ctx))
        for clause in self.must:
            scores = clause.run(ctx)
            candidates &= set(scores)
            for d in candidates:
                base[d] += scores[d]
        should_hits: Counter = Counter()
        for clause in self.should:
            for d, s in clause.run(ctx).items():
                if d in candidates:
                    base[d] += s
                    should_hits[d] += 1
        if self.minimum_should_match:
            candidates = {d for d in candidates if should_hits[d] >= self.minimum_should_match}
        for clause in self.must_not:
            candidates -= set(clause.run(ctx))
        return {d: base[d] * self.boost for d in candidates}


@dataclass
class Knn(Node):
    field: FieldSpec
    vector: np.ndarray
    k: int
    filter: Node | None
    boost: float = 1.0

    def run(self, ctx: Context) -> Scores:
        allowed = self.filter.run(ctx) if self.filter is not None else ctx.docs
        ids = [d for d in ctx.docs if d in allowed and self.field.name in ctx.docs[d].parsed.vectors]
        if not ids:
            return {}
        mat = np.array([ctx.docs[d].parsed.vectors[self.field.name] for d in ids], np.float64)
        scores = self._scores(mat)
        order = sorted(range(len(ids)), key=lambda i: (-scores[i], ctx.order[ids[i]]))
        return {ids[i]: float(scores[i]) * self.boost for i in order[: self.k]}

    def _scores(self, mat: np.ndarray) -> np.ndarray:
        q = self.vector
        space = self.field.space_type
        if space == "cosinesimil":
            cos = mat @ q / (np.linalg.norm(mat, axis=1) * np.linalg.norm(q))
            return (1 + cos) / 2
        if space == "l2":
            return 1 / (1 + np.sum((mat - q) ** 2, axis=1))
        if space == "innerproduct":
            dot = mat @ q
            return np.where(dot >= 0, dot + 1, 1 / (1 - dot))
        raise not_implemented(f"knn search with space_type [{space}]")


# ---------------------------------------------------------------- parsing


def _clauses(value: Any, parent: str, mapping: Mapping) -> list[Node]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise parsing(f"[{parent}] query malformed, no start_object after query name")
        out.append(parse_query(item, mapping))
    return out


def _one_key(body: dict[str, Any], name: str) -> tuple[str, Any]:
    if len(body) != 1:
        keys = list(body)
        raise parsing(f"[{name}] query doesn't support multiple fields, found [{keys[0]}] and"
                      f" [{keys[1]}]" if len(keys) > 1 else f"[{name}] query malformed, no field")
    return next(iter(body.items()))


def _boost(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise parsing(f"[{name}] failed to parse field [boost]")
    return float(value)


def _check_keys(obj: dict[str, Any], allowed: set[str], name: str) -> None:
    for key in obj:
        if key not in allowed:
            raise parsing(f"[{name}] query does not support [{key}]")


def parse_query(body: Any, mapping: Mapping) -> Node:
    if not isinstance(body, dict) or not body:
        raise parsing("query malformed, empty clause found")
    if len(body) != 1:
        first, second = list(body)[:2]
        raise parsing(f"[{first}] malformed query, expected [END_OBJECT] but found [FIELD_NAME]"
                      f" ([{second}])")
    kind, spec = next(iter(body.items()))
    parser = _PARSERS.get(kind)
    if parser is None:
        if kind in _NOT_IMPLEMENTED:
            raise not_implemented(f"the [{kind}] query")
        raise parsing(f"unknown query [{kind}]")
    if not isinstance(spec, dict):
        raise parsing(f"[{kind}] query malformed, no start_object after query name")
    return parser(spec, mapping)


def _match_all(spec: dict[str, Any], mapping: Mapping) -> Node:
    _check_keys(spec, {"boost"}, "match_all")
    return MatchAll(_boost(spec.get("boost", 1.0), "match_all"))


def _match_none(spec: dict[str, Any], mapping: Mapping) -> Node:
    return MatchNone()


def _bool(spec: dict[str, Any], mapping: Mapping) -> Node:
    _check_keys(spec, {"must", "should", "filter", "must_not", "minimum_should_match",
                       "boost"}, "bool")
    parts = {k: _clauses(spec.get(k, []), k, mapping)
             for k in ("must", "should", "filter", "must_not")}
    msm = spec.get("minimum_should_match")
    if msm is None:
        msm = 0 if (parts["must"] or parts["filter"]) else min(1, len(parts["should"]))
    elif isinstance(msm, int | str) and str(msm).isdigit():
        msm = int(msm)
    else:
        raise not_implemented(f"minimum_should_match [{msm}]")
    return Bool(parts["must"], parts["should"], parts["filter"], parts["must_not"], msm,
                _boost(spec.get("boost", 1.0), "bool"))


def _value_test(spec: FieldSpec | None, name: str, values: list[Any]) -> Callable[[StoredDoc], bool]:
    if spec is None:
        return lambda doc: False
    if spec.type == "text":
        wanted_t = {str(v) for v in values}
        return lambda doc: bool(wanted_t & set(doc.parsed.tokens.get(name, [])))
    if spec.type == "knn_vector":
        raise bad_request("illegal_argument_exception",
                          f"Field [{name}] of type [knn_vector] does not support term queries")
    wanted = {_normalize(spec, v) for v in values}
    return lambda doc: any(v in wanted for v in doc.parsed.values.get(name, []))


def _normalize(spec: FieldSpec, value: Any) -> Any:
    if spec.type in NUMERIC or spec.type == "date":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad_request("number_format_exception",
                              f"For input string: \"{value}\"") from None
    if spec.type == "boolean":
        return value in (True, "true")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _term(spec: dict[str, Any], mapping: Mapping) -> Node:
    name, value = _one_key(spec, "term")
    boost = 1.0
    if isinstance(value, dict):
        _check_keys(value, {"value", "boost", "case_insensitive"}, "term")
        if "value" not in value:
            raise parsing("[term] query does not support missing [value]")
        if value.get("case_insensitive"):
            raise not_implemented("case_insensitive term queries")
        boost = _boost(value.get("boost", 1.0), "term")
        value = value["value"]
    if isinstance(value, list | dict) or value is None:
        raise parsing(f"[term] query does not support array of values for field [{name}]")
    field = mapping.fields.get(name)
    if field is not None and field.type in ("text", "keyword"):
        return TermScore(name, _normalize(field, value) if field.type == "keyword" else str(value), boost)
    return Constant(_value_test(field, name, [value]), boost)


def _terms(spec: dict[str, Any], mapping: Mapping) -> Node:
    boost = _boost(spec.get("boost", 1.0), "terms")
    fields = {k: v for k, v in spec.items() if k != "boost"}
    if len(fields) != 1:
        raise parsing("[terms] query requires exactly one field" if not fields else
                      "[terms] query does not support multiple fields")
    name, values = next(iter(fields.items()))
    if isinstance(values, dict):
        raise not_implemented("terms lookup")
    if not isinstance(values, list):
        raise parsing(f"[terms] query does not support [{name}]")
    if any(isinstance(v, list | dict) or v is None for v in values):
        raise parsing("[terms] query values must be scalars")
    if len(values) > 65_536:
        raise bad_request("illegal_argument_exception",
                          f"The number of terms [{len(values)}] used in the Terms Query request"
                          " has exceeded the allowed maximum of [65536].")
    return Constant(_value_test(mapping.fields.get(name), name, values), boost)


_RANGE_OPS = {"gt": float.__gt__, "gte": float.__ge__, "lt": float.__lt__, "lte": float.__le__}


def _range(spec: dict[str, Any], mapping: Mapping) -> Node:
    name, bounds = _one_key(spec, "range")
    if not isinstance(bounds, dict):
        raise parsing(f"[range] query malformed, no start_object after query name [{name}]")
    boost = 1.0
    checks: list[tuple[Callable, Any]] = []
    field = mapping.fields.get(name)
    for key, value in bounds.items():
        if key == "boost":
            boost = _boost(value, "range")
        elif key in _RANGE_OPS:
            if value is None:
                continue
            checks.append((key, value))
        elif key in ("from", "to", "include_lower", "include_upper", "format", "relation",
                     "time_zone"):
            raise not_implemented(f"range parameter [{key}]")
        else:
            raise parsing(f"[range] query does not support [{key}]")
    if field is None:
        return MatchNone()
    if field.type == "keyword":
        def test(doc: StoredDoc) -> bool:
            return any(all(_cmp_str(op, v, b) for op, b in checks)
                       for v in doc.parsed.values.get(name, []))
        return Constant(test, boost)
    if field.type not in NUMERIC and field.type != "date":
        raise not_implemented(f"range queries on [{field.type}] fields")
    numeric = [(_RANGE_OPS[op], _normalize(field, b)) for op, b in checks]

    def test_num(doc: StoredDoc) -> bool:
        return any(all(fn(float(v), b) for fn, b in numeric)
                   for v in doc.parsed.values.get(name, []))
    return Constant(test_num, boost)


def _cmp_str(op: str, value: str, bound: Any) -> bool:
    bound = str(bound)
    return {"gt": value > bound, "gte": value >= bound, "lt": value < bound,
            "lte": value <= bound}[op]


def _match(spec: dict[str, Any], mapping: Mapping) -> Node:
    name, value = _one_key(spec, "match")
    operator, boost, msm = "or", 1.0, None
    if isinstance(value, dict):
        _check_keys(value, {"query", "operator", "boost", "minimum_should_match", "analyzer",
                            "zero_terms_query", "fuzziness", "lenient"}, "match")
        for key in ("analyzer", "fuzziness", "lenient"):
            if key in value:
                raise not_implemented(f"match parameter [{key}]")
        if value.get("zero_terms_query", "none") != "none":
            raise not_implemented("zero_terms_query other than none")
        if "query" not in value:
            raise parsing(f"No text specified for text query [{name}]")
        operator = str(value.get("operator", "or")).lower()
        if operator not in ("or", "and"):
            raise bad_request("illegal_argument_exception",
                              f"No enum constant org.opensearch.index.search.MatchQuery."
                              f"Operator.{operator.upper()}")
        boost = _boost(value.get("boost", 1.0), "match")
        msm = value.get("minimum_should_match")
        value = value["query"]
    if isinstance(value, list | dict) or value is None:
        raise parsing(f"[match] unknown token [START_ARRAY] after [{name}]")
    field = mapping.fields.get(name)
    if field is None:
        return MatchNone()
    if field.type != "text":
        return _term({name: {"value": value, "boost": boost}}, mapping)
    terms = ANALYZERS[field.query_analyzer()](str(value))
    if not terms:
        return MatchNone()
    clauses: list[Node] = [TermScore(name, t, boost) for t in terms]
    if operator == "and":
        required = len(clauses)
    elif msm is not None:
        if not str(msm).isdigit():
            raise not_implemented(f"minimum_should_match [{msm}]")
        required = max(1, int(msm))
    else:
        required = 1
    return Disjunction(clauses, required)


def _ids(spec: dict[str, Any], mapping: Mapping) -> Node:
    _check_keys(spec, {"values", "boost"}, "ids")
    values = spec.get("values", [])
    if not isinstance(values, list):
        raise parsing("[ids] query malformed, values must be an array")
    wanted = {str(v) for v in values}
    return Constant(lambda doc: doc.id in wanted, _boost(spec.get("boost", 1.0), "ids"))


def _exists(spec: dict[str, Any], mapping: Mapping) -> Node:
    _check_keys(spec, {"field", "boost"}, "exists")
    name = spec.get("field")
    if not isinstance(name, str):
        raise parsing("[exists] must be provided with a [field]")

    def test(doc: StoredDoc) -> bool:
        p = doc.parsed
        return bool(p.tokens.get(name) or p.values.get(name) or name in p.vectors)
    return Constant(test, _boost(spec.get("boost", 1.0), "exists"))


def _knn(spec: dict[str, Any], mapping: Mapping) -> Node:
    if len(spec) != 1:
        raise parsing("[knn] query doesn't support multiple fields")
    name, params = next(iter(spec.items()))
    if not isinstance(params, dict):
        raise parsing(f"[knn] query malformed, no start_object after field [{name}]")
    for key in params:
        if key not in ("vector", "k", "filter", "boost"):
            if key in ("max_distance", "min_score", "method_parameters", "rescore", "expand_nested_docs"):
                raise not_implemented(f"knn parameter [{key}]")
            raise parsing(f"[knn] unknown token [{key}]")
    field = mapping.fields.get(name)
    if field is None or field.type != "knn_vector":
        raise bad_request("illegal_argument_exception", f"Field '{name}' is not knn_vector type.")
    vector = params.get("vector")
    if not isinstance(vector, list) or not vector or any(
            isinstance(v, bool) or not isinstance(v, int | float) for v in vector):
        raise bad_request("illegal_argument_exception", "[knn] requires query vector")
    if len(vector) != field.dimension:
        raise bad_request("illegal_argument_exception",
                          f"Query vector has invalid dimension: {len(vector)}. Dimension should"
                          f" be: {field.dimension}")
    k = params.get("k")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 < k <= MAX_K:
        raise bad_request("illegal_argument_exception",
                          f"[knn] requires k to be in the range (0, {MAX_K}]")
    q = np.asarray(vector, np.float64)
    if field.space_type == "cosinesimil" and not q.any():
        raise bad_request("illegal_argument_exception",
                          "zero vector is not supported when space type is [cosinesimil]")
    flt = None
    if params.get("filter") is not None:
        if field.engine == "nmslib":
            raise bad_request("illegal_argument_exception",
                              "Engine [NMSLIB] does not support filters")
        flt = parse_query(params["filter"], mapping)
    return Knn(field, q, k, flt, _boost(params.get("boost", 1.0), "knn"))


_PARSERS: dict[str, Callable[[dict[str, Any], Mapping], Node]] = {
    "match_all": _match_all,
    "match_none": _match_none,
    "bool": _bool,
    "term": _term,
    "terms": _terms,
    "range": _range,
    "match": _match,
    "ids": _ids,
    "exists": _exists,
    "knn": _knn,
}
# Real query types the double does not implement: rejected as "not implemented", not as unknown.
_NOT_IMPLEMENTED = {
    "match_phrase", "match_phrase_prefix", "multi_match", "query_string", "simple_query_string",
    "prefix", "wildcard", "regexp", "fuzzy", "constant_score", "dis_max", "function_score",
    "script_score", "nested", "boosting", "combined_fields", "match_bool_prefix", "script",
    "neural", "hybrid", "more_like_this", "geo_distance", "intervals", "terms_set",
}

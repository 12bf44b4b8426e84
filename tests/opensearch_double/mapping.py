"""Index settings, mappings and document parsing, validated the way OpenSearch validates them."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from .analysis import ANALYZERS
from .errors import OpenSearchError, bad_request, mapper_parsing, not_implemented

NUMERIC = {"double", "float", "half_float", "long", "integer", "short", "byte"}
_INTEGRAL = {"long", "integer", "short", "byte"}
_COMMON = {"index", "store", "doc_values", "meta"}
_PARAMS: dict[str, set[str]] = {
    "text": {"analyzer", "search_analyzer", "similarity", "index", "store", "norms",
             "index_options", "meta"},
    "keyword": _COMMON | {"ignore_above", "similarity", "norms"},
    "boolean": _COMMON,
    "date": _COMMON | {"format"},
    "knn_vector": {"dimension", "method", "data_type", "mode", "compression_level",
                   "space_type", "model_id"},
    **{t: _COMMON | {"coerce", "ignore_malformed"} for t in NUMERIC},
}
_NOT_IMPLEMENTED_TYPES = {"object", "nested", "ip", "geo_point", "flat_object", "binary",
                          "scaled_float", "match_only_text", "wildcard", "alias"}
_SPACES = {"l2", "cosinesimil", "innerproduct", "l1", "linf", "hamming"}
_ENGINE_SPACES = {
    "lucene": {"l2", "cosinesimil", "innerproduct"},
    "faiss": {"l2", "innerproduct", "cosinesimil", "hamming"},
    "nmslib": {"l2", "cosinesimil", "innerproduct", "l1", "linf"},
}
_ENGINE_METHODS = {"lucene": {"hnsw"}, "faiss": {"hnsw", "ivf"}, "nmslib": {"hnsw"}}
_METHOD_PARAMS = {"m", "ef_construction", "ef_search", "encoder", "nlist", "nprobes"}
MAX_DIMENSION = 16_000

# Index settings the double knows; anything else is an unknown setting, as in OpenSearch.
_SETTINGS = {
    "index.number_of_shards", "index.number_of_replicas", "index.knn",
    "index.knn.algo_param.ef_search", "index.refresh_interval", "index.max_result_window",
}


@dataclass
class FieldSpec:
    name: str
    type: str
    analyzer: str = "standard"
    search_analyzer: str | None = None
    dimension: int = 0
    space_type: str = "l2"
    engine: str = "nmslib"
    method: str = "hnsw"

    def query_analyzer(self) -> str:
        return self.search_analyzer or self.analyzer

    def to_json(self) -> dict[str, Any]:
        if self.type == "text":
            out: dict[str, Any] = {"type": "text", "analyzer": self.analyzer}
            if self.search_analyzer:
                out["search_analyzer"] = self.search_analyzer
            return out
        if self.type == "knn_vector":
            return {"type": "knn_vector", "dimension": self.dimension,
                    "method": {"name": self.method, "space_type": self.space_type,
                               "engine": self.engine}}
        return {"type": self.type}


@dataclass
class Mapping:
    fields: dict[str, FieldSpec] = field(default_factory=dict)
    dynamic: str = "true"

    def to_json(self) -> dict[str, Any]:
        return {"dynamic": self.dynamic,
                "properties": {n: f.to_json() for n, f in self.fields.items()}}


def flatten_settings(raw: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten_settings(value, f"{full}."))
        else:
            out[full] = value
    return out


def parse_settings(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise bad_request("settings_exception", "Failed to load settings from [settings]")
    flat = {}
    for key, value in flatten_settings(raw).items():
        key = key if key.startswith("index.") else f"index.{key}"
        if key.startswith("index.analysis."):
            raise not_implemented("custom analysis settings")
        if key not in _SETTINGS:
            raise bad_request(
                "illegal_argument_exception",
                f"unknown setting [{key}] please check that any required plugins are installed,"
                " or check the breaking changes documentation for removed settings")
        flat[key] = value
    return flat


def knn_enabled(settings: dict[str, Any]) -> bool:
    return str(settings.get("index.knn", "false")).lower() == "true"


def parse_mappings(raw: Any, settings: dict[str, Any]) -> Mapping:
    mapping = Mapping()
    if raw is None:
        return mapping
    if not isinstance(raw, dict):
        raise mapper_parsing("Failed to parse mapping [_doc]: Expected map for property [mappings]")
    raw = dict(raw)
    props = raw.pop("properties", {})
    dynamic = raw.pop("dynamic", "true")
    raw.pop("_meta", None)
    if raw:
        listed = ", ".join(f"{k} : {v}" for k, v in raw.items())
        raise mapper_parsing(f"Root mapping definition has unsupported parameters:  [{listed}]")
    mapping.dynamic = str(dynamic).lower()
    if mapping.dynamic not in {"true", "false", "strict"}:
        raise mapper_parsing(f"Failed to parse mapping [_doc]: unknown value [{dynamic}] for dynamic")
    if not isinstance(props, dict):
        raise mapper_parsing("Failed to parse mapping [_doc]: Expected map for property [properties]")
    for name, spec in props.items():
        mapping.fields[name] = _parse_field(name, spec, settings)
    return mapping


def _fail(reason: str) -> OpenSearchError:
    return mapper_parsing(f"Failed to parse mapping [_doc]: {reason}")


def _parse_field(name: str, spec: Any, settings: dict[str, Any]) -> FieldSpec:
    if not isinstance(spec, dict):
        raise _fail(f"Expected map for property [fields] on field [{name}]")
    if "properties" in spec and "type" not in spec:
        raise not_implemented("object fields")
    type_ = spec.get("type")
    if type_ is None:
        raise _fail(f"No type specified for field [{name}]")
    if type_ in _NOT_IMPLEMENTED_TYPES:
        raise not_implemented(f"fields of type [{type_}]")
    if type_ not in _PARAMS:
        raise _fail(f"No handler for type [{type_}] declared on field [{name}]")
    for param in spec:
        if param != "type" and param not in _PARAMS[type_]:
            raise _fail(f"unknown parameter [{param}] on mapper [{name}] of type [{type_}]")
    out = FieldSpec(name, type_)
    if type_ == "text":
        for key in ("analyzer", "search_analyzer"):
            value = spec.get(key)
            if value is not None and value not in ANALYZERS:
                raise _fail(f"analyzer [{value}] has not been configured in mappings")
        out.analyzer = spec.get("analyzer", "standard")
        out.search_analyzer = spec.get("search_analyzer")
        if spec.get("similarity", "BM25") != "BM25":
            raise not_implemented(f"similarity [{spec['similarity']}]")
    elif type_ == "knn_vector":
        _parse_knn(out, spec, settings)
    return out


def _parse_knn(out: FieldSpec, spec: dict[str, Any], settings: dict[str, Any]) -> None:
    name = out.name
    if "model_id" in spec:
        raise not_implemented("knn_vector model_id")
    dim = spec.get("dimension")
    if dim is None:
        raise _fail(f"Dimension value missing for vector: {name}")
    if isinstance(dim, bool) or not isinstance(dim, int | str) or not str(dim).isdigit():
        raise _fail(f"Unable to parse [dimension] from provided value [{dim}] for vector [{name}]")
    out.dimension = int(dim)
    if not 0 < out.dimension <= MAX_DIMENSION:
        raise _fail(f"Dimension value cannot be greater than {MAX_DIMENSION} or less than 1"
                    f" for vector: {name}")
    if spec.get("data_type", "float") != "float":
        raise not_implemented(f"knn_vector data_type [{spec['data_type']}]")
    method = spec.get("method")
    if method is None:
        out.space_type = spec.get("space_type", "l2")
        out.engine = "faiss"
        return
    if not knn_enabled(settings):
        raise _fail("Cannot set modelId or method parameters when index.knn setting is false")
    if not isinstance(method, dict):
        raise _fail(f"Unable to parse [method] for vector [{name}]")
    unknown = set(method) - {"name", "space_type", "engine", "parameters"}
    if unknown:
        raise _fail(f"Invalid parameter for method: {sorted(unknown)[0]}")
    out.method = method.get("name", "")
    out.engine = method.get("engine", "faiss")
    out.space_type = method.get("space_type", spec.get("space_type", "l2"))
    if out.engine not in _ENGINE_SPACES:
        raise _fail(f"Invalid engine type: {out.engine}")
    if out.space_type not in _SPACES:
        raise _fail(f"Unable to find space: {out.space_type}")
    if out.method not in _ENGINE_METHODS[out.engine]:
        raise _fail(f"Invalid method name: {out.method}")
    if out.space_type not in _ENGINE_SPACES[out.engine]:
        raise _fail(f"{out.engine} engine does not support space type {out.space_type}")
    params = method.get("parameters") or {}
    if not isinstance(params, dict):
        raise _fail("Unable to parse [parameters] for method")
    for key, value in params.items():
        if key not in _METHOD_PARAMS:
            raise _fail(f"Invalid parameter for method: {key}")
        if key in ("m", "ef_construction", "ef_search") and (
                isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise _fail(f"Invalid value for parameter [{key}]: {value}")


# ---------------------------------------------------------------- documents


@dataclass
class ParsedDoc:
    """A document's searchable values: analyzed tokens, keywords, numbers, vectors."""

    tokens: dict[str, list[str]] = field(default_factory=dict)  # text fields
    values: dict[str, list[Any]] = field(default_factory=dict)  # keyword / numeric / bool
    vectors: dict[str, list[float]] = field(default_factory=dict)


def parse_document(mapping: Mapping, source: Any, doc_id: str | None) -> tuple[ParsedDoc, list[FieldSpec]]:
    """Parse `source`; returns the parsed values and any fields added by dynamic mapping."""
    if not isinstance(source, dict):
        raise mapper_parsing("failed to parse, document is empty")
    parsed = ParsedDoc()
    added: list[FieldSpec] = []
    for name, value in source.items():
        if name.startswith("_") and name != "_meta":
            raise mapper_parsing(f"Field [{name}] is a metadata field and cannot be added inside"
                                 " a document. Use the index API request parameters.")
        spec = mapping.fields.get(name)
        if spec is None:
            if mapping.dynamic == "strict":
                raise OpenSearchError(400, "strict_dynamic_mapping_exception",
                                      f"mapping set to strict, dynamic introduction of [{name}]"
                                      " within [_doc] is not allowed")
            if mapping.dynamic == "false" or value is None:
                continue
            spec = _dynamic_field(name, value)
            added.append(spec)
        _parse_value(spec, value, parsed, doc_id)
    return parsed, added


def _dynamic_field(name: str, value: Any) -> FieldSpec:
    sample = value[0] if isinstance(value, list) and value else value
    if isinstance(sample, bool):
        return FieldSpec(name, "boolean")
    if isinstance(sample, int):
        return FieldSpec(name, "long")
    if isinstance(sample, float):
        return FieldSpec(name, "float")
    if isinstance(sample, str):
        return FieldSpec(name, "text")
    raise not_implemented("dynamic mapping of objects")


def _preview(spec: FieldSpec, value: Any, doc_id: str | None) -> OpenSearchError:
    return mapper_parsing(f"failed to parse field [{spec.name}] of type [{spec.type}] in document"
                          f" with id '{doc_id}'. Preview of field's value: '{value}'")


def _parse_value(spec: FieldSpec, value: Any, parsed: ParsedDoc, doc_id: str | None) -> None:
    if value is None:
        return
    if spec.type == "knn_vector":
        parsed.vectors[spec.name] = _parse_vector(spec, value)
        return
    items = value if isinstance(value, list) else [value]
    items = [v for v in items if v is not None]
    if spec.type == "text":
        analyze = ANALYZERS[spec.analyzer]
        tokens: list[str] = []
        for item in items:
            if isinstance(item, dict | list):
                raise _preview(spec, item, doc_id)
            tokens.extend(analyze(item if isinstance(item, str) else _to_str(item)))
        parsed.tokens[spec.name] = tokens
        return
    out: list[Any] = []
    for item in items:
        if isinstance(item, dict | list):
            raise _preview(spec, item, doc_id)
        out.append(_coerce(spec, item, doc_id))
    parsed.values[spec.name] = out


def _to_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _coerce(spec: FieldSpec, item: Any, doc_id: str | None) -> Any:
    if spec.type == "keyword":
        return _to_str(item)
    if spec.type == "boolean":
        if isinstance(item, bool):
            return item
        if item in ("true", "false"):
            return item == "true"
        raise _preview(spec, item, doc_id)
    if spec.type in NUMERIC or spec.type == "date":
        if isinstance(item, bool):
            raise _preview(spec, item, doc_id)
        if spec.type == "date" and isinstance(item, str) and not _is_number(item):
            raise not_implemented("date strings (send epoch milliseconds)")
        try:
            number = float(item)
        except (TypeError, ValueError):
            raise _preview(spec, item, doc_id) from None
        if not math.isfinite(number):
            raise _preview(spec, item, doc_id)
        if spec.type in _INTEGRAL:
            if number != int(number) and not isinstance(item, float):
                raise _preview(spec, item, doc_id)
            return int(number)
        return number
    raise _preview(spec, item, doc_id)


_NUMBER_RE = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


def _is_number(text: str) -> bool:
    return bool(_NUMBER_RE.match(text))


def _parse_vector(spec: FieldSpec, value: Any) -> list[float]:
    if not isinstance(value, list) or any(
            isinstance(v, bool) or not isinstance(v, int | float) for v in value):
        raise mapper_parsing(f"failed to parse field [{spec.name}] of type [knn_vector]:"
                             " Vector values must be an array of numbers")
    if len(value) != spec.dimension:
        raise mapper_parsing(f"Vector dimension mismatch. Expected: {spec.dimension},"
                             f" Given: {len(value)}")
    if not all(math.isfinite(v) for v in value):
        raise mapper_parsing("KNN vector values cannot be NaN or Infinity")
    if spec.space_type == "cosinesimil" and not any(value):
        raise mapper_parsing("zero vector is not supported when space type is [cosinesimil]")
    return [float(v) for v in value]

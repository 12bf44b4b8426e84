"""HTTP plumbing shared by every route: JSON bodies in, JSON (UTF-8) out, errors as
{"error": {"code", "message"}} with a 4xx status — never a bare 500 for a client mistake."""

from __future__ import annotations

import functools
import json
import logging
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from chalice.app import Request, Response
from pydantic import ValidationError  # pydantic_core's, loaded with pydantic itself

from chalicelib.domain.errors import (
    AnnalsError,
    BadRequest,
    PayloadTooLarge,
    Unavailable,
    validation_error,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

MAX_BODY_BYTES = 2 * 1024 * 1024
JSON = "application/json; charset=utf-8"
ACCEPTED_TYPES = ["application/json", "text/plain", "application/x-www-form-urlencoded"]

M = TypeVar("M", bound="BaseModel")
log = logging.getLogger("annals.http")


def json_response(body: Any, status: int = 200) -> Response:
    if _is_model(body):
        body = body.model_dump(mode="json")
    return Response(body=json.dumps(body, ensure_ascii=False, default=str), status_code=status,
                    headers={"Content-Type": JSON})


def _is_model(body: Any) -> bool:
    """A pydantic model? Looked up in sys.modules, not imported: `import app` stays free of
    pydantic's model machinery, and no model exists before pydantic.main is loaded."""
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(body, main.BaseModel)


def error_response(err: AnnalsError) -> Response:
    response = json_response(err.body(), err.status)
    retry_after = getattr(err, "retry_after", None)  # 503 Unavailable, 429 TooManyRequests
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def internal_error() -> Response:
    return json_response({"error": {"code": "internal_error",
                                    "message": "an internal error occurred (it is logged)"}},
                         500)


def parse_body(request: Request, model: type[M], *, optional: bool = False) -> M:
    return parse_raw(request.raw_body, model, optional=optional)


def parse_raw(raw: bytes | None, model: type[M], *, optional: bool = False) -> M:
    """A request body as `model`: bounded, JSON, an object, valid — else a 4xx AnnalsError.
    `optional`: an empty body is the model's defaults."""
    raw = raw or b""
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"body is larger than {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        if optional:
            return model()
        raise BadRequest("a JSON body is required", code="missing_body")
    data = load_json(raw)
    if not isinstance(data, dict):
        raise BadRequest("the JSON body must be an object", code="malformed_json")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


MAX_DEPTH = 32  # nesting deeper than any request model needs is refused before parsing


def load_json(raw: bytes) -> object:
    """JSON that is well-formed, at most MAX_DEPTH levels deep, and valid Unicode (no lone
    surrogates from "\\ud800" escapes, which no store or response can encode)."""
    if json_depth(raw) > MAX_DEPTH:
        raise BadRequest(f"JSON nested deeper than {MAX_DEPTH} levels", code="too_deep")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BadRequest(f"malformed JSON: {exc}", code="malformed_json") from None
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest("the body holds text that is not valid Unicode (a lone surrogate)",
                         code="invalid_unicode") from None
    return data


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # unrolled: linear and fast
_BRACKETS = re.compile(rb"[\[\]{}]")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of brackets outside strings (json.loads itself would recurse and
    fail with RecursionError on 100k levels). Strings are cut out first, so only the
    brackets are walked in Python."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRING.sub(b"", raw)):
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break
        else:
            depth -= 1
    return deepest


def query_param(request: Request, name: str, default: str | None = None) -> str | None:
    return (request.query_params or {}).get(name, default)


def parse_query(model: type[M], request: Request) -> M:
    try:
        return model.model_validate(request.query_params or {})
    except ValidationError as exc:
        raise validation_error(exc) from None


def api(view: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a view: domain errors become JSON 4xx responses, and a backend's transient
    failure a 503 with Retry-After (`transient`).

    What the client sent is validated where it is read (`parse_body`, `parse_query`, or a
    use-case raising `validation_error`), as a 4xx AnnalsError. A bare pydantic
    ValidationError that reaches here was raised on Annals' own data — an extractor's draft,
    a stored record — so it is the server's fault: a 500 `internal_error`, logged, never a
    422 that blames the request."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except AnnalsError as err:
            return error_response(err)
        except ValidationError as exc:
            log.error("internal validation error in %s: %s", view.__name__, exc, exc_info=exc)
            return internal_error()
        except Exception as exc:
            unavailable = transient(exc)
            if unavailable is None:
                raise
            log.warning("%s: %s", unavailable.message, exc, exc_info=exc)
            return error_response(unavailable)

    return wrapper


# ------------------------------------------------------------------ transient backend failures

RETRY_AFTER_SECONDS = 1
# botocore error codes (DynamoDB, SQS, Secrets Manager, Bedrock) that mean "not now".
TRANSIENT_AWS_CODES = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "Throttling",
    "ThrottledException", "RequestThrottled", "RequestThrottledException",
    "TooManyRequestsException", "RequestLimitExceeded", "LimitExceededException",
    "TransactionConflict", "TransactionConflictException", "TransactionInProgressException",
    "ServiceUnavailable", "ServiceUnavailableException", "InternalServerError",
    "InternalFailure", "SlowDown", "AWS.SimpleQueueService.RequestThrottled",
})
TRANSIENT_HTTP_STATUSES = frozenset({429, 502, 503, 504})
TRANSIENT_SQLITE = ("database is locked", "database is busy", "database table is locked")


def transient(exc: BaseException) -> Unavailable | None:
    """An Unavailable (503) when `exc` — or an exception it was raised from — is a backend
    failing for now: SQLite locked/busy, DynamoDB/SQS throttling or a transaction conflict,
    OpenSearch 429/502/503/504 or a connection error or timeout, a socket timeout, an
    optimistic write still contended after its retries. None for anything else (a bug stays
    a 500). Libraries are looked up in sys.modules, never imported here: an error can only
    come from a library that is loaded."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:  # `raise … from transient` counts too
        seen.add(id(cause))
        reason = _transient_reason(cause)
        if reason:
            return Unavailable(f"{reason}; retry shortly", retry_after=RETRY_AFTER_SECONDS)
        cause = cause.__cause__
    return None


def _transient_reason(exc: BaseException) -> str | None:
    import sqlite3

    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "the database is busy" if any(t in text for t in TRANSIENT_SQLITE) else None
    botocore = sys.modules.get("botocore.exceptions")
    if botocore is not None:
        if isinstance(exc, botocore.ClientError):
            error = exc.response.get("Error", {})
            codes = {error.get("Code", "")} | {
                r.get("Code", "") for r in exc.response.get("CancellationReasons", [])}
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if codes & TRANSIENT_AWS_CODES or {"ThrottlingError", "TransactionConflict"} & codes \
                    or status in TRANSIENT_HTTP_STATUSES:
                return f"the storage service is throttling or unavailable ({error.get('Code')})"
            return None
        if isinstance(exc, botocore.HTTPClientError | botocore.ConnectionError):
            return "the storage service did not answer in time"
    opensearch = sys.modules.get("opensearchpy.exceptions")
    if opensearch is not None and isinstance(exc, opensearch.TransportError):
        if isinstance(exc, opensearch.ConnectionError) or exc.status_code in \
                TRANSIENT_HTTP_STATUSES:
            return f"the search service is busy or unavailable ({exc.status_code})"
        return None
    if isinstance(exc, TimeoutError | ConnectionError):
        return "a backend did not answer in time"
    ports = sys.modules.get("chalicelib.ports")  # only an optimistic write never given its turn
    if ports is not None and isinstance(exc, ports.ConflictError):
        return "a concurrent write holds this item" if "still contended" in str(exc) else None
    table = sys.modules.get("chalicelib.adapters.dynamodb.table")
    if table is not None and isinstance(exc, table.UnprocessedItemsError):
        return "the storage service is throttling"
    search = sys.modules.get("chalicelib.adapters.opensearch")
    if search is not None and isinstance(exc, search.OpenSearchBulkError):
        statuses = {reason.split(" ", 1)[0] for reason in exc.failed.values()}
        if statuses and statuses <= {str(s) for s in TRANSIENT_HTTP_STATUSES}:
            return "the search service is rejecting writes for now"
    return None


def normalise_chalice_error(response: Response) -> Response:
    """Chalice's own errors (405, 415, ...) say {"Code", "Message"}; speak our shape instead,
    with our plain codes: MethodNotAllowedError → method_not_allowed (as not_found, not
    not_found_error), UnsupportedMediaType → unsupported_media_type."""
    body = response.body
    if isinstance(body, dict) and set(body) == {"Code", "Message"}:
        code = str(body["Code"])
        snake = "".join("_" + c.lower() if c.isupper() else c for c in code).lstrip("_")
        snake = snake.removesuffix("_error") or snake
        return json_response({"error": {"code": snake, "message": str(body["Message"])}},
                             response.status_code)
    return response

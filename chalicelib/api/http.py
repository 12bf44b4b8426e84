"""HTTP plumbing shared by every route: JSON bodies in, JSON (UTF-8) out, errors as
{"error": {"code", "message"}} with a 4xx status — never a bare 500 for a client mistake."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from chalice.app import Request, Response
from pydantic import BaseModel, ValidationError

from chalicelib.domain.errors import AnnalsError, BadRequest, PayloadTooLarge, validation_error

MAX_BODY_BYTES = 2 * 1024 * 1024
JSON = "application/json; charset=utf-8"
ACCEPTED_TYPES = ["application/json", "text/plain", "application/x-www-form-urlencoded"]

M = TypeVar("M", bound=BaseModel)
log = logging.getLogger("annals.http")


def json_response(body: Any, status: int = 200) -> Response:
    if isinstance(body, BaseModel):
        body = body.model_dump(mode="json")
    return Response(body=json.dumps(body, ensure_ascii=False, default=str), status_code=status,
                    headers={"Content-Type": JSON})


def error_response(err: AnnalsError) -> Response:
    return json_response(err.body(), err.status)


def parse_body(request: Request, model: type[M], *, optional: bool = False) -> M:
    raw = request.raw_body or b""
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"body is larger than {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        if optional:
            return model()
        raise BadRequest("a JSON body is required", code="missing_body")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"malformed JSON: {exc}", code="malformed_json") from None
    if not isinstance(data, dict):
        raise BadRequest("the JSON body must be an object", code="malformed_json")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


def query_param(request: Request, name: str, default: str | None = None) -> str | None:
    return (request.query_params or {}).get(name, default)


def parse_query(model: type[M], request: Request) -> M:
    try:
        return model.model_validate(request.query_params or {})
    except ValidationError as exc:
        raise validation_error(exc) from None


def api(view: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a view: domain errors and validation errors become JSON 4xx responses."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except AnnalsError as err:
            return error_response(err)
        except ValidationError as exc:
            return error_response(validation_error(exc))

    return wrapper


def normalise_chalice_error(response: Response) -> Response:
    """Chalice's own errors (405, 415, ...) say {"Code", "Message"}; speak our shape instead."""
    body = response.body
    if isinstance(body, dict) and set(body) == {"Code", "Message"}:
        code = str(body["Code"])
        snake = "".join("_" + c.lower() if c.isupper() else c for c in code).lstrip("_")
        return json_response({"error": {"code": snake, "message": str(body["Message"])}},
                             response.status_code)
    return response

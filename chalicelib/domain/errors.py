"""Errors a client can act on. Each maps to one HTTP status and a stable machine code."""

from __future__ import annotations


class AnnalsError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, details: object = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details

    def body(self) -> dict:
        error: dict = {"code": self.code, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        return {"error": error}


class BadRequest(AnnalsError):
    status, code = 400, "bad_request"


class Unauthorized(AnnalsError):
    status, code = 401, "unauthorized"


class NotFound(AnnalsError):
    status, code = 404, "not_found"


class Conflict(AnnalsError):
    status, code = 409, "version_conflict"


class PayloadTooLarge(AnnalsError):
    status, code = 413, "payload_too_large"


class Unprocessable(AnnalsError):
    status, code = 422, "validation_error"


class Unavailable(AnnalsError):
    """A backend failed transiently (a locked database, throttling, a timeout): nothing was
    half-written, and the same request sent again after `retry_after` seconds may succeed."""

    status, code = 503, "unavailable"

    def __init__(self, message: str, *, retry_after: int = 1, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class DeadlineExceeded(Unavailable):
    """The request's time (ANNALS_REQUEST_SECONDS) ran out before its work was done; the work
    stopped and nothing was half-written (chalicelib.domain.deadline)."""

    code = "deadline_exceeded"


class TooManyRequests(AnnalsError):
    """Over a limit of the calling key or space (chalicelib.usecases.limits): the same request
    may succeed after `retry_after` seconds."""

    status, code = 429, "rate_limited"

    def __init__(self, message: str, *, retry_after: int = 1, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


def validation_error(exc) -> Unprocessable:
    """A pydantic ValidationError as a 422 with every problem listed in `details`."""
    details = [
        {"loc": ".".join(str(p) for p in e["loc"]), "msg": e["msg"], "type": e["type"]}
        for e in exc.errors(include_url=False, include_context=False, include_input=False)
    ]
    first = details[0] if details else {"loc": "", "msg": "invalid"}
    where = f"{first['loc']}: " if first["loc"] else ""
    return Unprocessable(f"{where}{first['msg']}", details=details)

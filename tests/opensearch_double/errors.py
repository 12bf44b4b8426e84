"""OpenSearch-shaped errors: `{"error": {"root_cause": [...], "type", "reason"}, "status"}`."""

from __future__ import annotations

from typing import Any

# Raised for requests real OpenSearch would accept but the double does not implement, so a
# test never mistakes "the double can't" for "OpenSearch rejects".
NOT_IMPLEMENTED = "double_not_implemented_exception"


class OpenSearchError(Exception):
    def __init__(self, status: int, type_: str, reason: str, **extra: Any):
        super().__init__(f"{status} {type_}: {reason}")
        self.status = status
        self.type = type_
        self.reason = reason
        self.extra = extra

    def cause(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason, **self.extra}

    def body(self) -> dict[str, Any]:
        return {"error": {"root_cause": [self.cause()], **self.cause()}, "status": self.status}


def bad_request(type_: str, reason: str, **extra: Any) -> OpenSearchError:
    return OpenSearchError(400, type_, reason, **extra)


def parsing(reason: str) -> OpenSearchError:
    return OpenSearchError(400, "parsing_exception", reason)


def mapper_parsing(reason: str) -> OpenSearchError:
    return OpenSearchError(400, "mapper_parsing_exception", reason)


def index_not_found(index: str) -> OpenSearchError:
    return OpenSearchError(404, "index_not_found_exception", f"no such index [{index}]",
                           index=index, **{"resource.type": "index_or_alias",
                                           "resource.id": index})


def not_implemented(what: str) -> OpenSearchError:
    return OpenSearchError(400, NOT_IMPLEMENTED, f"the OpenSearch test double does not implement {what}")

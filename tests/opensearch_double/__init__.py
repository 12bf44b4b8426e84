"""An OpenSearch-compatible HTTP test double (managed domain "es" or Serverless "aoss").

It implements, with real semantics, the endpoints and query shapes the OpenSearch adapter
uses — index create/exists/delete, `_bulk`, `_doc`, `_search`, `_msearch`, `_count`, `_refresh`,
`_delete_by_query` — and rejects what OpenSearch rejects with OpenSearch-shaped errors.
Requests it could accept in reality but does not implement fail with
`double_not_implemented_exception`, never silently.
"""

from .server import OpenSearchDouble, RecordedRequest, running_double, running_server

__all__ = ["OpenSearchDouble", "RecordedRequest", "running_double", "running_server"]

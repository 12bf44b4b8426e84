"""OpenSearch adapter factories for the index contracts, run against the in-repo double:
"opensearch" (managed domain semantics: refresh interval, `refresh=wait_for`, custom `_id`)
and "opensearch-aoss" (Serverless: service-assigned `_id`, no refresh). One double per mode
serves the whole session; every test gets its own index."""

from __future__ import annotations

import atexit
import threading
import uuid

from chalicelib.adapters.opensearch import OpenSearchIndex, connect
from tests.opensearch_double import OpenSearchDouble

from .conftest import DIM

_doubles: dict[str, OpenSearchDouble] = {}
_lock = threading.Lock()


def shared_double(mode: str) -> OpenSearchDouble:
    with _lock:
        if mode not in _doubles:
            double = OpenSearchDouble(mode)
            double.start()
            atexit.register(double.stop)
            _doubles[mode] = double
        return _doubles[mode]


def _factory(mode: str):
    def factory(tmp_path):
        double = shared_double(mode)
        client = connect(double.url, service=None, timeout=5, max_retries=2, backoff=0.01)
        index = OpenSearchIndex(client, DIM, index=f"contract-{uuid.uuid4().hex[:12]}",
                                serverless=mode == "aoss", backoff=0.01)
        yield index
        index.drop()
        client.close()
    return factory


KEYWORD_INDEXES = {"opensearch": _factory("es"), "opensearch-aoss": _factory("aoss")}
VECTOR_INDEXES = {"opensearch": _factory("es"), "opensearch-aoss": _factory("aoss")}

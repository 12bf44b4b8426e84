"""Wires adapters to ports from Settings. Handlers, the local server and the CLI all get their
collaborators here, so a use-case never knows which adapter it talks to."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .config import Settings
from .ports import Embedder, Extractor, KeywordIndex, Store, VectorIndex


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class Services:
    settings: Settings
    store: Store
    keywords: KeywordIndex
    vectors: VectorIndex
    embedder: Embedder
    extractor: Extractor
    clock: Callable[[], datetime] = field(default=utcnow)


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "hash":
        from .adapters.hash_embedder import HashEmbedder

        return HashEmbedder()
    from .adapters.e5 import E5LocalEmbedder

    return E5LocalEmbedder()


def build_services(settings: Settings | None = None) -> Services:
    settings = settings or Settings()
    if settings.backend != "local":
        raise NotImplementedError("the AWS backend is not wired yet; use ANNALS_BACKEND=local")
    from .adapters.embedded_index import FtsKeywordIndex, NumpyVectorIndex
    from .adapters.sqlite_db import SQLiteDB
    from .adapters.sqlite_store import SQLiteStore
    from .extract.offline import OfflineExtractor

    db = SQLiteDB(settings.db_path)
    embedder = make_embedder(settings)
    return Services(
        settings=settings,
        store=SQLiteStore(db),
        keywords=FtsKeywordIndex(db),
        vectors=NumpyVectorIndex(db, embedder.dim),
        embedder=embedder,
        extractor=OfflineExtractor(),
    )


_services: Services | None = None
_lock = threading.Lock()


def get_services() -> Services:
    """The process-wide services, built on first use (a Lambda cold start or server start)."""
    global _services
    with _lock:
        if _services is None:
            _services = build_services()
        return _services


def set_services(services: Services | None) -> None:
    """Install (or clear) the process-wide services: used by the local server and tests."""
    global _services
    with _lock:
        _services = services

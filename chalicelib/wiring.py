"""Wires adapters to ports from Settings. Handlers, the local server and the CLI all get their
collaborators here, so a use-case never knows which adapter it talks to."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from chalicelib.adapters.llm import LLMClient, make_llm
from chalicelib.config import Settings
from chalicelib.ports import Embedder, Extractor, KeywordIndex, Store, VectorIndex, WorkQueue


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
    # Local: use-cases write the search indexes themselves. AWS: the DynamoDB stream handler
    # does (index_inline False), so a request never waits for embeddings or OpenSearch.
    index_inline: bool = True
    queue: WorkQueue | None = None  # AWS: extraction work goes through SQS
    # Local: messages are indexed from a durable outbox after the write (local/indexer.py);
    # a recall drains it first. None: ingest indexes messages inline.
    message_indexer: Any = None
    llm: LLMClient | None = None  # ANNALS_LLM=openai|bedrock; None: offline extractor/merger


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "hash":
        from chalicelib.adapters.hash_embedder import HashEmbedder

        return HashEmbedder()
    from chalicelib.adapters.e5 import E5LocalEmbedder

    return E5LocalEmbedder()


def make_extractor(settings: Settings, *, llm: LLMClient | None = None,
                   store: Store | None = None) -> Extractor:
    """The offline extractor (default), or the LLM extractor when ANNALS_LLM names a provider
    (it falls back to the offline one per batch when the LLM fails). `store` lets it read
    nearby events and record usage per space."""
    from chalicelib.usecases.extract.offline import OfflineExtractor

    llm = llm if llm is not None else make_llm(settings)
    if llm is None:
        return OfflineExtractor()
    from chalicelib.usecases.extract.llm import LLMExtractor

    return LLMExtractor(llm, store=store)


def build_services(settings: Settings | None = None) -> Services:
    settings = settings or Settings()
    if settings.backend == "aws":
        return build_aws_services(settings)
    from chalicelib.adapters.sqlite.db import SQLiteDB
    from chalicelib.adapters.sqlite.index import FtsKeywordIndex, NumpyVectorIndex
    from chalicelib.adapters.sqlite.store import SQLiteStore

    db = SQLiteDB(settings.db_path)
    embedder = make_embedder(settings)
    store = SQLiteStore(db)
    llm = make_llm(settings)
    services = Services(
        settings=settings,
        store=store,
        keywords=FtsKeywordIndex(db),
        vectors=NumpyVectorIndex(db, embedder.dim),
        embedder=embedder,
        extractor=make_extractor(settings, llm=llm, store=store),
        llm=llm,
    )
    from chalicelib.local.indexer import OutboxIndexer

    if settings.index_messages == "background":
        services.message_indexer = OutboxIndexer(services, db)
    else:
        OutboxIndexer.retire(services, db)
    return services


def build_aws_services(settings: Settings) -> Services:
    """DynamoDB + OpenSearch + SQS, named by the stack's environment variables."""
    missing = [name for name in ("table", "queue_url", "opensearch_endpoint")
               if not getattr(settings, name)]
    if missing:
        raise RuntimeError("ANNALS_BACKEND=aws needs " + ", ".join(
            f"ANNALS_{m.upper()}" for m in missing))
    from chalicelib.adapters.dynamodb import DynamoDBStore
    from chalicelib.adapters.opensearch import OpenSearchIndex, connect
    from chalicelib.adapters.sqs import SqsQueue

    embedder = make_embedder(settings)
    service = None if settings.opensearch_service == "none" else settings.opensearch_service
    client = connect(settings.opensearch_endpoint, region=settings.region, service=service)
    index = OpenSearchIndex(client, embedder.dim, index=settings.opensearch_index,
                            serverless=settings.opensearch_service == "aoss",
                            replicas=settings.opensearch_replicas)
    store = DynamoDBStore(settings.table, region_name=settings.region)
    llm = make_llm(settings)
    return Services(
        settings=settings,
        store=store,
        keywords=index,
        vectors=index,
        embedder=embedder,
        extractor=make_extractor(settings, llm=llm, store=store),
        llm=llm,
        index_inline=False,
        queue=SqsQueue(settings.queue_url, region_name=settings.region),
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

"""The composition root: Settings → one adapter per port → `Services`.

Handlers, the local server, the CLI and the benchmarks all get their collaborators here, so a
use-case never knows which adapter it talks to. Heavy adapters are imported only when chosen.
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Literal

from chalicelib.config import Settings
from chalicelib.ports import (
    ChatUpstream,
    Embedder,
    Glossary,
    LLMClient,
    Merger,
    Reader,
    SalienceJudge,
    Services,
    Store,
)

if TYPE_CHECKING:
    from chalicelib.usecases.indexing import OutboxIndexWriter

IndexMode = Literal["background", "inline", "stream"]


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "hash":
        from chalicelib.adapters.hash_embedder import HashEmbedder

        return HashEmbedder()
    from chalicelib.adapters.e5 import E5LocalEmbedder

    return E5LocalEmbedder()


def make_llm(settings: Settings) -> LLMClient | None:
    """The LLM client named by ANNALS_LLM, or None for "none" (the offline default)."""
    if settings.llm == "none":
        return None
    if settings.llm == "openai":
        from chalicelib.adapters.llm.openai_compat import OpenAICompatClient

        return OpenAICompatClient(
            base_url=settings.llm_base_url, api_key=settings.llm_api_key,
            model=settings.llm_model, timeout=settings.llm_timeout_seconds,
            max_retries=settings.llm_max_retries, json_schema=settings.llm_json_schema)
    if settings.llm == "local":
        from chalicelib.adapters.llm.local import LocalLLMClient, LocalModelServer

        if settings.llm_model_path is None:
            raise RuntimeError("ANNALS_LLM=local needs ANNALS_LLM_MODEL_PATH (a GGUF file)")
        # a small model on a CPU reads a batch in a minute or more: the timeout is its own
        return LocalLLMClient(LocalModelServer(settings.llm_model_path,
                                               threads=settings.llm_threads),
                              timeout=max(settings.llm_timeout_seconds, 600.0))
    if settings.llm == "bedrock":
        from chalicelib.adapters.llm.bedrock import BedrockClient

        model_id = settings.bedrock_model_id or settings.llm_model
        if not model_id:
            raise RuntimeError("ANNALS_LLM=bedrock needs ANNALS_BEDROCK_MODEL_ID "
                               "(e.g. anthropic.claude-3-5-haiku-20241022-v1:0)")
        return BedrockClient(model_id=model_id, region=settings.region,
                             timeout=settings.llm_timeout_seconds,
                             max_retries=settings.llm_max_retries)
    raise RuntimeError(f"unknown ANNALS_LLM={settings.llm!r}")


def make_chat_upstream(settings: Settings) -> ChatUpstream | None:
    """The chat gateway's upstream (docs/gateway.md), from the LLM_* settings whether or not
    ANNALS_LLM is on: Bedrock when ANNALS_GATEWAY_PROVIDER (or else ANNALS_LLM) says so, else
    an OpenAI-compatible endpoint — ANNALS_GATEWAY_UPSTREAM or LLM_BASE_URL, with
    LLM_API_KEY. None (the gateway answers 404) when neither a URL nor a key is set. The SDKs
    are imported on the first call, not here."""
    provider = settings.gateway_provider or ("bedrock" if settings.llm == "bedrock" else "openai")
    if provider == "bedrock":
        from chalicelib.adapters.llm.bedrock_chat import BedrockChatUpstream

        return BedrockChatUpstream(default_model=settings.bedrock_model_id or settings.llm_model,
                                   region=settings.region,
                                   timeout=settings.gateway_timeout_seconds,
                                   max_retries=settings.llm_max_retries)
    base_url = settings.gateway_upstream or settings.llm_base_url
    if not (base_url or settings.llm_api_key):
        return None
    from chalicelib.adapters.llm.openai_chat import OpenAIChatUpstream

    return OpenAIChatUpstream(base_url=base_url, api_key=settings.llm_api_key,
                              default_model=settings.llm_model,
                              timeout=settings.gateway_timeout_seconds,
                              max_retries=settings.llm_max_retries)


def make_salience_judge(settings: Settings, embedder: Embedder | None = None) -> SalienceJudge:
    """The offline extractor's judge of what is worth an event (ANNALS_SALIENCE): the e5
    weights, sharing the e5 embedder when that is the one in use."""
    if settings.salience == "rules":
        from chalicelib.usecases.extract.salience import KeepAllJudge

        return KeepAllJudge()
    from chalicelib.adapters.salience_e5 import E5SalienceJudge

    return E5SalienceJudge(embedder)


def make_extractor(llm: LLMClient | None, store: Store | None = None,
                   judge: SalienceJudge | None = None, reads: str = "all") -> Reader:
    """The offline extractor, or the LLM extractor when an LLM is configured (it falls back
    to the offline one per batch when the LLM fails). `store` lets it read nearby events;
    `reads` "facts": the model reads only the user's profile form (Settings.model_reads)."""
    from chalicelib.usecases.extract.offline import OfflineExtractor

    offline = OfflineExtractor(judge)
    if llm is None:
        return offline
    from chalicelib.usecases.extract.llm import LLMExtractor

    return LLMExtractor(llm, store=store, fallback=offline, reads=reads)


def make_merger(settings: Settings, embedder: Embedder, llm: LLMClient | None) -> Merger:
    """The LLM merger when an LLM is configured to read all (the merge pass falls back to
    the offline merger when it fails), else the offline near-duplicate merger."""
    if llm is not None and settings.model_reads != "facts":
        from chalicelib.usecases.merge.llm import LLMMerger

        return LLMMerger(llm)
    from chalicelib.usecases.merge.offline import OfflineMerger

    return OfflineMerger(embedder, settings.merge_similarity)


def build_services(settings: Settings | None = None, *, embedder: Embedder | None = None,
                   llm: LLMClient | None = None, index: IndexMode | None = None,
                   store: Literal["sqlite", "memory"] | None = None) -> Services:
    """Services for `settings`. Keyword arguments replace one choice (tests, benchmarks):
    another embedder or LLM, how messages get indexed, or the in-memory store and indexes."""
    settings = settings or Settings()
    if settings.backend == "aws":
        return build_aws_services(settings, embedder=embedder, llm=llm)
    embedder = embedder or make_embedder(settings)
    llm = llm if llm is not None else make_llm(settings)
    if store == "memory":
        return _memory_services(settings, embedder, llm)
    return _sqlite_services(settings, embedder, llm, index)


@functools.cache
def make_glossary() -> Glossary:
    """CC-CEDICT's words both ways, read on first use (adapters/glossary_cedict.py): one
    for the process, whatever services it builds (the bench builds one per chat, the tests
    many), so the dictionary is read once."""
    from chalicelib.adapters.glossary_cedict import CedictGlossary

    return CedictGlossary()


def make_cleaner(settings: Settings):
    from chalicelib.domain.cleaning import cleaner

    return cleaner(settings.clean_patterns, settings.clean_defaults)


def _sqlite_services(settings: Settings, embedder: Embedder, llm: LLMClient | None,
                     index: IndexMode | None) -> Services:
    from chalicelib.adapters.sqlite.db import SQLiteDB
    from chalicelib.adapters.sqlite.index import FtsKeywordIndex, NumpyVectorIndex
    from chalicelib.adapters.sqlite.store import SQLiteStore

    db = SQLiteDB(settings.db_path)
    sqlite_store = SQLiteStore(db)
    services = Services(
        settings=settings, store=sqlite_store, keywords=FtsKeywordIndex(db),
        vectors=NumpyVectorIndex(db, embedder.dim), embedder=embedder,
        extractor=make_extractor(llm, sqlite_store, make_salience_judge(settings, embedder),
                                 settings.model_reads),
        merger=make_merger(settings, embedder, llm), llm=llm, clean=make_cleaner(settings),
        glossary=make_glossary())
    services.chat = make_chat_upstream(settings)
    _wire_local_index(services, db, index or settings.index_messages)
    return services


def _wire_local_index(services: Services, db, mode: IndexMode) -> None:
    from chalicelib.adapters.sqlite.outbox import SqliteOutbox
    from chalicelib.usecases.indexing import Indexer, InlineIndexWriter
    from chalicelib.usecases.traffic import PriorityGate

    services.traffic = PriorityGate()  # one process serves many threads: recall first
    if mode == "background":
        services.index = outbox_index_writer(services, db)
        return
    if SqliteOutbox.exists(db):  # leaving background mode: finish what is queued, then drop
        outbox = outbox_index_writer(services, db)
        outbox.drain_all("keyword")
        outbox.drain_all("vector")
        SqliteOutbox.drop(db)
    services.index = InlineIndexWriter(Indexer(services))


def outbox_index_writer(services: Services, db) -> OutboxIndexWriter:
    from chalicelib.adapters.sqlite.ingest import SqliteMessageIngest
    from chalicelib.adapters.sqlite.outbox import SqliteOutbox
    from chalicelib.usecases.indexing import Indexer, OutboxIndexWriter

    outbox = SqliteOutbox(db)
    return OutboxIndexWriter(Indexer(services), outbox,
                             SqliteMessageIngest(db, services.keywords, outbox))


def _memory_services(settings: Settings, embedder: Embedder, llm: LLMClient | None) -> Services:
    from chalicelib.adapters.memory import MemoryKeywordIndex, MemoryStore, MemoryVectorIndex
    from chalicelib.usecases.indexing import Indexer, InlineIndexWriter

    store = MemoryStore()
    services = Services(
        settings=settings, store=store, keywords=MemoryKeywordIndex(),
        vectors=MemoryVectorIndex(embedder.dim), embedder=embedder,
        extractor=make_extractor(llm, store, make_salience_judge(settings, embedder),
                                 settings.model_reads),
        merger=make_merger(settings, embedder, llm),
        llm=llm, clean=make_cleaner(settings), glossary=make_glossary())
    services.index = InlineIndexWriter(Indexer(services))
    services.chat = make_chat_upstream(settings)
    return services


def build_aws_services(settings: Settings, *, embedder: Embedder | None = None,
                       llm: LLMClient | None = None) -> Services:
    """DynamoDB + OpenSearch + SQS, named by the stack's environment variables."""
    missing = [name for name in ("table", "queue_url", "opensearch_endpoint")
               if not getattr(settings, name)]
    if missing:
        raise RuntimeError("ANNALS_BACKEND=aws needs " + ", ".join(
            f"ANNALS_{m.upper()}" for m in missing))
    from chalicelib.adapters.dynamodb import DynamoDBStore
    from chalicelib.adapters.opensearch import OpenSearchIndex, connect
    from chalicelib.adapters.sqs import SqsQueue
    from chalicelib.usecases.indexing import StreamIndexWriter

    embedder = embedder or make_embedder(settings)
    llm = llm if llm is not None else make_llm(settings)
    service = None if settings.opensearch_service == "none" else settings.opensearch_service
    client = connect(settings.opensearch_endpoint, region=settings.region, service=service)
    search = OpenSearchIndex(client, embedder.dim, index=settings.opensearch_index,
                             serverless=settings.opensearch_service == "aoss",
                             replicas=settings.opensearch_replicas)
    store = DynamoDBStore(settings.table, region_name=settings.region)
    services = Services(
        settings=settings, store=store, keywords=search, vectors=search, embedder=embedder,
        extractor=make_extractor(llm, store, make_salience_judge(settings, embedder),
                                 settings.model_reads),
        merger=make_merger(settings, embedder, llm),
        llm=llm, queue=SqsQueue(settings.queue_url, region_name=settings.region),
        clean=make_cleaner(settings), glossary=make_glossary())
    services.index = StreamIndexWriter(services)
    services.chat = make_chat_upstream(settings)
    return services


def extract_job_runner(services: Services, lambda_context=None):
    """The SQS worker's `run`: each job recorded by its message id (Powertools idempotency,
    in the stack's table), so a redelivered message returns the stored result."""
    from chalicelib.adapters.dynamodb.idempotency import idempotent
    from chalicelib.usecases.jobs import run_extract_job

    return idempotent(lambda job: run_extract_job(services, job),
                      table=services.settings.table or "annals", lambda_context=lambda_context)


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

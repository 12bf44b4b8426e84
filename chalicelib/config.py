"""Settings from the environment (and `.env` in local mode)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ANNALS_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    data_dir: Path = Field(default=Path(".annals"), description="where embedded stores live")
    backend: Literal["local", "aws"] = "local"
    embedder: Literal["e5-local", "hash"] = "e5-local"
    llm: Literal["none", "openai", "bedrock", "local"] = "none"
    api_key: str | None = Field(default=None, repr=False)
    schedule: Literal["on", "off"] = "on"
    tz: str | None = Field(default=None, description="IANA zone; default: the message's offset")

    # extraction / quiet window
    # which statements the offline extractor keeps after its small-talk rules: "e5" judges
    # them with the bundled model (chalicelib/adapters/salience_e5.py), "rules" keeps all
    salience: Literal["e5", "rules"] = "e5"
    quiet_minutes: float = 20.0
    min_reply_packs: int = 5
    max_wait_hours: float = 6.0
    sweep_seconds: float = 60.0
    # POST …/extract runs at most this many pending messages inside the request (measured with
    # the bundled e5 on 2 cores: 1.3-1.8 s of CPU for 30 messages of a dense chat, most of it
    # e5 judging statements and embedding the events; docs/api-limits.md); more becomes a
    # background job (202, GET …/jobs/{id}). 0: a job whenever anything is pending.
    extract_sync_max_messages: int = Field(default=30, ge=0)
    # …and of at most this many characters in all (each message embeds up to 2 windows)
    extract_sync_max_chars: int = Field(default=12_000, ge=0)
    # Every request stops its own work after this many seconds and answers 503 with
    # Retry-After (chalicelib.domain.deadline); API Gateway's own limit is 29 s. 0: none.
    request_seconds: float = Field(default=20.0, ge=0, le=900)
    # `annals serve`: limits per key and per space (chalicelib.usecases.limits; 429 over them)
    limit_key_concurrent: int = Field(default=4, ge=1, le=1000)  # reads at once per key
    limit_key_concurrent_writes: int = Field(default=2, ge=1, le=1000)
    limit_space_concurrent: int = Field(default=6, ge=1, le=1000)
    # …of which writes may hold this many (the rest only reads may take)
    limit_space_concurrent_writes: int = Field(default=4, ge=1, le=1000)
    limit_key_rate: float = Field(default=50.0, gt=0, le=100_000)  # requests per second
    limit_key_burst: int = Field(default=100, ge=1, le=1_000_000)
    # a key's last tokens of its burst, spent by its reads only: its writes never take them
    limit_key_read_reserve: int = Field(default=20, ge=0, le=1_000_000)
    # writes per second a key has of its own, whatever its reads spend (0: none)
    limit_key_write_floor: float = Field(default=5.0, ge=0, le=100_000)
    # messages waiting to be embedded per space before a PUT is refused (429); 0: no limit
    limit_space_backlog: int = Field(default=20_000, ge=0)
    # background jobs queued or running per space before a new one is refused (429)
    limit_space_jobs: int = Field(default=8, ge=1, le=10_000)
    # the core layer of the hook and the gateway: current facts of the chat's people, at most
    # this many tokens (chalicelib.usecases.facts); 0: off
    core_tokens: int = Field(default=120, ge=0, le=2000)
    # `annals serve` on SIGTERM/SIGINT: how long requests in flight may take to finish
    drain_seconds: float = Field(default=10.0, ge=0, le=3600)

    # recall: the recipe (chalicelib/usecases/recall/recipes.py) holds every knob; these
    # override its fields when set
    recipe: str = "hybrid"
    max_cards: int | None = Field(default=None, ge=1, le=50)
    min_score: float | None = None
    min_relevance: float | None = Field(default=None, ge=0, le=1)  # the admission gate
    min_relevance_cjk: float | None = Field(default=None, ge=0, le=1)  # …of a Chinese query
    min_relevance_wide: float | None = Field(default=None, ge=0, le=1)  # …above max_cards
    expand_factor: float | None = Field(default=None, gt=1)
    max_expansions: int | None = Field(default=None, ge=0, le=6)
    time_max_results: int | None = Field(default=None, ge=1, le=50)
    cooldown_recalls: int | None = Field(default=None, ge=0)
    cooldown_minutes: float | None = Field(default=None, ge=0)
    freshness_budget_ms: float | None = Field(default=None, ge=0)

    # local: index new messages from a durable outbox after the write (the local twin of the
    # AWS stream; a recall drains it first), or inline inside the PUT request
    index_messages: Literal["background", "inline"] = "background"

    # forgetting (chalicelib/forgetting.py)
    forget_half_life_days: float = 30.0
    forget_threshold: float = 0.2
    forget_keep_importance: int = 8
    journal_retention_days: float = 30.0

    # cleaning (chalicelib/domain/cleaning.py): regular expressions removed from message text
    # before extraction, indexing and queries; a JSON list in ANNALS_CLEAN_PATTERNS
    clean_patterns: list[str] = Field(default_factory=list)
    clean_defaults: bool = True  # also remove <think>, status panels, <UpdateVariable> …

    # export
    highlight_threshold: int = 7

    # LLM (ANNALS_LLM=openai|bedrock; docs/llm.md). The Event Chronicle names
    # (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL) are accepted too.
    llm_base_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL; default: OpenAI",
        validation_alias=AliasChoices("ANNALS_LLM_BASE_URL", "LLM_BASE_URL", "llm_base_url"))
    llm_api_key: str | None = Field(
        default=None, repr=False,
        validation_alias=AliasChoices("ANNALS_LLM_API_KEY", "LLM_API_KEY", "llm_api_key"))
    llm_model: str | None = Field(
        default=None, description="model name; default gpt-4o-mini for openai",
        validation_alias=AliasChoices("ANNALS_LLM_MODEL", "LLM_MODEL", "llm_model"))
    llm_timeout_seconds: float = Field(
        default=60.0, gt=0,
        validation_alias=AliasChoices("ANNALS_LLM_TIMEOUT_SECONDS", "llm_timeout_seconds"))
    llm_max_retries: int = Field(
        default=2, ge=0, description="transport retries (429/5xx/timeouts) inside the SDK",
        validation_alias=AliasChoices("ANNALS_LLM_MAX_RETRIES", "llm_max_retries"))
    llm_json_schema: bool = Field(
        default=False, description="send the reply's JSON schema (response_format json_schema)",
        validation_alias=AliasChoices("ANNALS_LLM_JSON_SCHEMA", "llm_json_schema"))
    # ANNALS_LLM=local: a GGUF file served on loopback by xllamacpp (pip install 'annals[local]')
    llm_model_path: Path | None = Field(
        default=None, description="the GGUF model file for ANNALS_LLM=local",
        validation_alias=AliasChoices("ANNALS_LLM_MODEL_PATH", "llm_model_path"))
    # what the model reads: "all" (events, facts, merges, summaries), "facts" (the user's
    # profile form; the rules write events — a small local model's share), "auto": facts
    # for ANNALS_LLM=local, all otherwise
    llm_reads: Literal["auto", "all", "facts"] = Field(
        default="auto", validation_alias=AliasChoices("ANNALS_LLM_READS", "llm_reads"))
    llm_threads: int = Field(
        default=1, ge=1, le=256, description="ANNALS_LLM=local: llama.cpp's threads",
        validation_alias=AliasChoices("ANNALS_LLM_THREADS", "llm_threads"))
    bedrock_model_id: str | None = Field(
        default=None, description="Bedrock model or inference-profile id",
        validation_alias=AliasChoices("ANNALS_BEDROCK_MODEL_ID", "BEDROCK_MODEL_ID",
                                      "bedrock_model_id"))

    # chat gateway (POST /v1/chat/completions; docs/gateway.md). Its upstream is set by the
    # LLM_* settings above whether or not ANNALS_LLM turns on LLM extraction.
    gateway_provider: Literal["openai", "bedrock"] | None = Field(
        default=None, description="None: bedrock when ANNALS_LLM=bedrock, else openai")
    gateway_upstream: str | None = Field(
        default=None, description="OpenAI-compatible base URL of the upstream; "
                                  "default: LLM_BASE_URL")
    gateway_timeout_seconds: float = Field(default=300.0, gt=0,
                                           description="per upstream read")
    gateway_resume_turns: int = Field(default=20, ge=1, le=200,
                                      description="raw messages `/resume` injects")
    cors_origins: str = Field(
        default="", description="origins a browser host calls from (`annals serve`), e.g. "
                                "http://127.0.0.1:8000; comma-separated; none by default")
    gateway_reads: Literal["on", "off"] = Field(
        default="off", description="on: the quiet window reads a space's gateway chats with the "
                                   "upstream and the model those chats used (reading tasks, "
                                   "docs/llm.md); off: Annals' own reading")

    # merge pass (chalicelib.usecases.merge): every `merge_every` new events, over `merge_window`
    merge_every: int = Field(default=5, ge=1)
    merge_window: int = Field(default=20, ge=2)
    # Cosine of e5-small passage vectors: paraphrases of one fact score 0.96-0.99, but
    # distinct facts about the same person and day score up to ~0.95 (measured; see
    # docs/llm.md), so the offline merger's default is 0.95 rather than 0.85.
    merge_similarity: float = Field(default=0.95, ge=0, le=1)

    # session summaries (chalicelib.usecases.extract.summaries): with an LLM configured, it
    # writes their text (one short call per extraction batch) unless this is off
    summary_llm: bool = True
    # …and a session gets one only once this many of its events are not covered by one yet
    # (at least 2: a summary never restates a single event)
    summary_min_events: int = Field(default=3, ge=2)

    # AWS backend: names injected by the stack (infra/) as environment variables
    region: str | None = Field(default=None, description="AWS region; default from the env")
    table: str | None = Field(default=None, description="DynamoDB table name")
    queue_url: str | None = Field(default=None, description="SQS extraction queue URL")
    queue_name: str = "annals-extract"
    opensearch_endpoint: str | None = None
    opensearch_index: str = "annals"
    # "es" (managed domain) and "aoss" (Serverless) sign with SigV4; "none" sends plain HTTP.
    opensearch_service: Literal["es", "aoss", "none"] = "es"
    opensearch_replicas: int | None = Field(default=None, ge=0, description="None: the default")
    api_key_secret: str | None = Field(default=None, description="Secrets Manager id of the key")
    extract_delay_seconds: int = Field(default=900, ge=0, le=900,
                                       description="SQS delay before an ingest-triggered check")

    @field_validator("cors_origins")
    @classmethod
    def _origins_parse(cls, value: str) -> str:
        parse_origins(value)  # a bad origin stops `annals serve` at start, named
        return value

    @field_validator("clean_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        import re

        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"ANNALS_CLEAN_PATTERNS: {pattern!r}: {exc}") from None
        return patterns

    @property
    def model_reads(self) -> str:
        """What the configured model reads: "all", "facts", or "none" without one."""
        if self.llm == "none":
            return "none"
        if self.llm_reads == "auto":
            return "facts" if self.llm == "local" else "all"
        return self.llm_reads

    @property
    def db_path(self) -> Path:
        return self.data_dir / "annals.db"

    @property
    def key_path(self) -> Path:
        return self.data_dir / "api_key"


def parse_origins(value: str | None) -> frozenset[str]:
    """`ANNALS_CORS_ORIGINS`: origins separated by commas or spaces, each scheme://host[:port]
    (a trailing slash dropped). ValueError names one that is not an origin."""
    origins = set()
    for item in (value or "").replace(",", " ").split():
        origin = item.rstrip("/")
        scheme, sep, rest = origin.partition("://")
        if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
            raise ValueError(f"ANNALS_CORS_ORIGINS: {item!r} is not an origin such as "
                             "http://127.0.0.1:8000 (scheme, host, optional port; no path)")
        origins.add(origin.lower())
    return frozenset(origins)

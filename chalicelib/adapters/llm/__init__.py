"""The LLM port: one call that returns a validated pydantic model, plus usage accounting.

    client.complete_json(system, user, ExtractionOut, max_tokens=4000) -> ExtractionOut

Every adapter (openai_compat.py: OpenAI / DeepSeek / vLLM / Ollama; bedrock.py: the Converse
API) shares `JsonLLM`, which owns the behaviour the rest of Annals relies on:

- the reply must be one JSON object that validates against `schema`; a reply that does not
  parse or validate gets ONE retry, with the validation error quoted back to the model;
- usage is counted from the provider's own usage numbers: `calls` = completions received
  (each is billed, so a retried call counts twice), `prompt_tokens` / `completion_tokens`
  summed from them, `failures` = complete_json calls that raised (timeout, HTTP error,
  invalid twice). Callers fall back to the offline path on failure and need not count again;
- usage can be attributed to a space with `track_usage()` + `persist_usage()`, stored as job
  state ("llm-usage", space) so the stats route can show it.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

log = logging.getLogger("annals.llm")

T = TypeVar("T", bound=BaseModel)
USAGE_JOB = "llm-usage"  # job-state name of the per-space usage record
DEFAULT_MAX_TOKENS = 4000


class LLMError(Exception):
    """The model could not give a usable answer; callers fall back to the offline path."""


class LLMTimeout(LLMError):
    """The provider did not answer within the timeout."""


class LLMUnavailable(LLMError):
    """Transport or HTTP error (after the SDK's own retries), e.g. 429, 5xx, refused."""


class LLMInvalidOutput(LLMError):
    """The reply was not valid JSON for the schema, twice."""


@dataclass
class LLMUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0

    def add(self, other: LLMUsage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {**asdict(self), "total_tokens": self.total_tokens}

    @classmethod
    def from_dict(cls, data: dict | None) -> LLMUsage:
        data = data or {}
        return cls(**{f.name: int(data.get(f.name, 0)) for f in fields(cls)})


@runtime_checkable
class LLMClient(Protocol):
    name: str
    model: str
    usage: LLMUsage  # process-wide totals of this client

    def complete_json(self, system: str, user: str, schema: type[T], *,
                      max_tokens: int = DEFAULT_MAX_TOKENS) -> T: ...


# ------------------------------------------------------------------ usage scopes

_scopes: contextvars.ContextVar[tuple[LLMUsage, ...]] = contextvars.ContextVar(
    "annals_llm_usage_scopes", default=())


@contextmanager
def track_usage() -> Iterator[LLMUsage]:
    """Collect the usage of every LLM call made inside the block (in this thread/context),
    e.g. to attribute one extraction batch to its space. Scopes nest."""
    scope = LLMUsage()
    token = _scopes.set((*_scopes.get(), scope))
    try:
        yield scope
    finally:
        _scopes.reset(token)


def persist_usage(store: Any, space: str, delta: LLMUsage, task: str, model: str = "") -> dict:
    """Add `delta` to the space's usage record (job state "llm-usage"), in total and per task
    ("extract", "merge"). Returns the new record."""
    state = store.get_job_state(USAGE_JOB, space) or {}
    total = LLMUsage.from_dict(state.get("total"))
    total.add(delta)
    tasks = dict(state.get("tasks") or {})
    per_task = LLMUsage.from_dict(tasks.get(task))
    per_task.add(delta)
    tasks[task] = per_task.as_dict()
    record = {"total": total.as_dict(), "tasks": tasks, "model": model or state.get("model", "")}
    store.put_job_state(USAGE_JOB, space, record)
    return record


def space_usage(store: Any, space: str) -> dict:
    """The persisted usage record of a space (zeros when no LLM call was ever made)."""
    state = store.get_job_state(USAGE_JOB, space) or {}
    return {"total": LLMUsage.from_dict(state.get("total")).as_dict(),
            "tasks": state.get("tasks") or {}, "model": state.get("model", "")}


# ------------------------------------------------------------------ JSON parsing

_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def parse_json_object(text: str) -> Any:
    """The JSON object in a reply: tolerates a ```json fence and prose around one object."""
    text = (text or "").strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start == -1 or end <= start:
            raise
        return json.loads(text[start:end + 1])


def schema_hint(schema: type[BaseModel]) -> str:
    return json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":"))


def _short_error(exc: Exception, limit: int = 800) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
                 for e in exc.errors()[:8]]
        text = "; ".join(parts)
    else:
        text = str(exc)
    return text[:limit]


@dataclass(frozen=True)
class Completion:
    """One raw completion from a provider."""

    text: str
    prompt_tokens: int
    completion_tokens: int


class JsonLLM:
    """Shared retry / validation / accounting logic; adapters implement `_complete`."""

    name = "llm"

    def __init__(self, model: str):
        self.model = model
        self.usage = LLMUsage()
        self._lock = threading.Lock()

    # adapters override this: `turns` alternate user/assistant, starting with user
    def _complete(self, system: str, turns: list[tuple[str, str]],
                  max_tokens: int) -> Completion:
        raise NotImplementedError

    def _count(self, delta: LLMUsage) -> None:
        with self._lock:
            self.usage.add(delta)
        for scope in _scopes.get():
            scope.add(delta)

    def _call(self, system: str, turns: list[tuple[str, str]], max_tokens: int,
              attempt: int) -> Completion:
        started = time.perf_counter()
        try:
            reply = self._complete(system, turns, max_tokens)
        except LLMError:
            raise
        except Exception as exc:  # an SDK error the adapter did not map: still a failure
            log.exception("llm %s: unexpected error", self.name)
            raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
        self._count(LLMUsage(calls=1, prompt_tokens=reply.prompt_tokens,
                             completion_tokens=reply.completion_tokens))
        log.info("llm %s model=%s attempt=%d prompt_tokens=%d completion_tokens=%d %.0fms",
                 self.name, self.model, attempt, reply.prompt_tokens, reply.completion_tokens,
                 (time.perf_counter() - started) * 1000)
        return reply

    def complete_json(self, system: str, user: str, schema: type[T], *,
                      max_tokens: int = DEFAULT_MAX_TOKENS) -> T:
        turns = [("user", user)]
        try:
            reply = self._call(system, turns, max_tokens, attempt=1)
            try:
                return schema.model_validate(parse_json_object(reply.text))
            except (ValueError, ValidationError) as exc:  # JSONDecodeError is a ValueError
                error = _short_error(exc)
                log.warning("llm %s: invalid reply (%s); retrying once", self.name, error)
            stricter = (
                "Your previous reply could not be used: " + error + "\n"
                "Reply again with ONLY one JSON object (no prose, no code fence) that "
                "validates against this JSON schema:\n" + schema_hint(schema)
            )
            turns = [*turns, ("assistant", reply.text or "(empty)"), ("user", stricter)]
            reply = self._call(system, turns, max_tokens, attempt=2)
            try:
                return schema.model_validate(parse_json_object(reply.text))
            except (ValueError, ValidationError) as exc:
                raise LLMInvalidOutput(f"invalid reply twice: {_short_error(exc)}") from exc
        except LLMError as exc:
            self._count(LLMUsage(failures=1))
            log.warning("llm %s model=%s failed: %s", self.name, self.model, exc)
            raise


def make_llm(settings: Any) -> LLMClient | None:
    """The LLM client named by ANNALS_LLM, or None for "none" (the offline default)."""
    if settings.llm == "none":
        return None
    if settings.llm == "openai":
        from chalicelib.adapters.llm.openai_compat import OpenAICompatClient

        return OpenAICompatClient(
            base_url=settings.llm_base_url, api_key=settings.llm_api_key,
            model=settings.llm_model, timeout=settings.llm_timeout_seconds,
            max_retries=settings.llm_max_retries)
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

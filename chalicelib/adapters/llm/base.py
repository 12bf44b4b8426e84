"""What every LLM adapter shares (`JsonLLM`): one call that returns a validated pydantic model.

    client.complete_json(system, user, ExtractionOut, max_tokens=4000) -> ExtractionOut

Adapters (openai_compat.py: OpenAI / DeepSeek / vLLM / Ollama; bedrock.py: the Converse API)
implement `_complete`; this class owns the behaviour the rest of Annals relies on:

- the reply must be one JSON object that validates against `schema`; a reply that does not
  parse or validate gets ONE retry, with the validation error quoted back to the model;
- usage is counted from the provider's own usage numbers: `calls` = completions received
  (each is billed, so a retried call counts twice), `prompt_tokens` / `completion_tokens`
  summed from them, `failures` = complete_json calls that raised (timeout, HTTP error,
  invalid twice). Callers fall back to the offline path on failure and need not count again;
- every call is also counted in the open `chalicelib.ports.track_usage()` scopes, so a
  use-case can attribute usage to a space.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chalicelib.domain.jsontext import parse_json_object
from chalicelib.ports import (
    LLMError,
    LLMInvalidOutput,
    LLMTimeout,
    LLMUnavailable,
    LLMUsage,
    count_usage,
)

__all__ = ["Completion", "JsonLLM", "LLMError", "LLMInvalidOutput", "LLMTimeout",
           "LLMUnavailable", "LLMUsage", "parse_json_object", "schema_hint"]

log = logging.getLogger("annals.llm")

T = TypeVar("T", bound=BaseModel)
DEFAULT_MAX_TOKENS = 4000


# ------------------------------------------------------------------ JSON parsing
# (the object in a reply: chalicelib.domain.jsontext.parse_json_object, re-exported)


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

    # adapters override this: `turns` alternate user/assistant, starting with user; `schema`
    # is the reply's JSON schema, for a provider that can constrain its output to it
    def _complete(self, system: str, turns: list[tuple[str, str]], max_tokens: int,
                  schema: dict[str, Any] | None = None) -> Completion:
        raise NotImplementedError

    def _count(self, delta: LLMUsage) -> None:
        with self._lock:
            self.usage.add(delta)
        count_usage(delta)

    def _call(self, system: str, turns: list[tuple[str, str]], max_tokens: int,
              attempt: int, schema: dict[str, Any] | None = None) -> Completion:
        started = time.perf_counter()
        try:
            reply = self._complete(system, turns, max_tokens, schema)
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
        wire = schema.model_json_schema()
        try:
            reply = self._call(system, turns, max_tokens, attempt=1, schema=wire)
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
            reply = self._call(system, turns, max_tokens, attempt=2, schema=wire)
            try:
                return schema.model_validate(parse_json_object(reply.text))
            except (ValueError, ValidationError) as exc:
                raise LLMInvalidOutput(f"invalid reply twice: {_short_error(exc)}") from exc
        except LLMError as exc:
            self._count(LLMUsage(failures=1))
            log.warning("llm %s model=%s failed: %s", self.name, self.model, exc)
            raise

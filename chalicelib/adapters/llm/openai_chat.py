"""The chat gateway's upstream for any OpenAI-compatible endpoint (OpenAI, DeepSeek, vLLM,
Ollama, LM Studio, OpenRouter …), through the official `openai` SDK.

The request body is the client's own: `model` and `messages` as the SDK's arguments, every
other field (temperature, max_tokens, tools, stop, user, stream_options …) passed on as it
came (`extra_body`), so a field this SDK version does not know still reaches the upstream.
A non-streamed answer is returned as the upstream's JSON; streamed chunks as the SDK parsed
them (`to_dict()`: the fields the upstream sent, unknown ones included).

Errors keep what the upstream said: an HTTP error becomes UpstreamError(status, body) with
the body's bytes (OpenAI's error JSON) and its Content-Type / Retry-After; no answer in time
504, no connection 502, a stream that broke 502. The SDK retries 429 / 5xx / connection
errors `max_retries` times before that (only before the first chunk of a stream).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from chalicelib.ports import ChatStream, UpstreamError

PASSED_HEADERS = ("content-type", "retry-after", "retry-after-ms")


class OpenAIChatUpstream:
    name = "openai"

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None,
                 default_model: str | None = None, timeout: float = 300.0,
                 max_retries: int = 2, client: Any = None):
        self.base_url = base_url
        self.default_model = default_model
        self.timeout = timeout
        self._api_key = api_key
        self._max_retries = max_retries
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:  # the SDK is imported on first use: `import app` stays cheap
            import openai

            # Local servers (Ollama, vLLM) take any key; the SDK insists on having one.
            self._client = openai.OpenAI(base_url=self.base_url or None,
                                         api_key=self._api_key or "not-needed",
                                         timeout=self.timeout, max_retries=self._max_retries)
        return self._client

    # ---------------------------------------------------------------- the port
    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            raw = self.client.chat.completions.with_raw_response.create(**_arguments(request))
            answer = raw.http_response.json()
        except Exception as exc:
            raise self.error(exc) from exc
        if not isinstance(answer, dict):
            raise UpstreamError.made(502, "the upstream answered JSON that is not an object")
        return answer

    def stream(self, request: dict[str, Any]) -> ChatStream:
        try:
            chunks = self.client.chat.completions.create(stream=True, **_arguments(request))
        except Exception as exc:
            raise self.error(exc) from exc
        return _Stream(chunks, self.error)

    def models(self) -> dict[str, Any]:
        try:
            answer = self.client.models.with_raw_response.list().http_response.json()
        except Exception as exc:
            raise self.error(exc) from exc
        if not isinstance(answer, dict):
            raise UpstreamError.made(502, "the upstream's model list is not a JSON object")
        return answer

    # ---------------------------------------------------------------- errors
    def error(self, exc: BaseException, streaming: bool = False) -> UpstreamError:
        """What the caller is told about `exc` (never the request's text); `streaming`: it
        broke a stream that had begun."""
        import openai

        if isinstance(exc, UpstreamError):
            return exc
        if isinstance(exc, openai.APIStatusError):
            response = exc.response
            headers = {k: response.headers[k] for k in PASSED_HEADERS if k in response.headers}
            return UpstreamError(exc.status_code, response.content or b"",
                                 f"upstream HTTP {exc.status_code}", headers)
        if isinstance(exc, openai.APITimeoutError):
            return UpstreamError.made(504, f"no answer from the upstream within "
                                           f"{self.timeout:g}s", "upstream_timeout")
        if isinstance(exc, openai.APIConnectionError) and not streaming:
            return UpstreamError.made(502, "could not reach the upstream "
                                           f"({type(exc.__cause__ or exc).__name__})",
                                      "upstream_unavailable")
        if isinstance(exc, openai.APIError) and isinstance(exc.body, dict):
            # an error event inside a stream: the upstream's own error object
            return UpstreamError(502, json.dumps({"error": exc.body}).encode(),
                                 "the upstream sent an error event")
        if isinstance(exc, ValueError):  # a body that is not JSON
            return UpstreamError.made(502, "the upstream answered something that is not "
                                           "JSON", "upstream_bad_response")
        cause = exc.__cause__ if isinstance(exc, openai.APIConnectionError) else exc
        return UpstreamError.made(502, "the upstream stream broke "
                                       f"({type(cause or exc).__name__})",
                                  "upstream_stream_broken")


def _arguments(request: dict[str, Any]) -> dict[str, Any]:
    """The SDK's arguments for an OpenAI request body: model and messages by name, the rest
    as they came. `stream` is the caller's choice (complete / stream), never the body's."""
    rest = {k: v for k, v in request.items() if k not in ("model", "messages", "stream")}
    arguments: dict[str, Any] = {"model": request["model"], "messages": request["messages"]}
    if rest:
        arguments["extra_body"] = rest
    return arguments


class _Stream:
    """The SDK's stream as chunk dicts; a failure while reading is an UpstreamError."""

    def __init__(self, chunks: Any, to_error):
        self._chunks = chunks
        self._to_error = to_error

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            for chunk in self._chunks:
                yield chunk.to_dict()
        except Exception as exc:
            raise self._to_error(exc, streaming=True) from exc

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a connection that already broke
            self._chunks.close()

"""LLM adapter for any OpenAI-compatible chat-completions endpoint, through the official
`openai` SDK: OpenAI, DeepSeek, vLLM, Ollama, LM Studio … (set `base_url`).

JSON mode (`response_format={"type": "json_object"}`) is requested on every call; the prompts
name "JSON" as that mode requires. With `json_schema` (ANNALS_LLM_JSON_SCHEMA, and always for
`ANNALS_LLM=local`) the reply's JSON schema goes with it (`{"type": "json_schema", …}`): a
server that supports it (OpenAI, llama.cpp, vLLM) constrains the output to it; one that
answers 400 to it is asked in JSON mode from then on. Transport retries (429, 5xx, connection errors, honouring
Retry-After) are the SDK's, `max_retries` times; the JSON retry is JsonLLM's.
"""

from __future__ import annotations

from typing import Any

from chalicelib.adapters.llm.base import Completion, JsonLLM, LLMTimeout, LLMUnavailable

DEFAULT_MODEL = "gpt-4o-mini"


class OpenAICompatClient(JsonLLM):
    name = "openai"

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None,
                 model: str | None = None, timeout: float = 60.0, max_retries: int = 2,
                 client: Any = None, json_schema: bool = False):
        super().__init__(model or DEFAULT_MODEL)
        self.base_url = base_url
        self.timeout = timeout
        self.json_schema = json_schema
        if client is None:
            import openai

            # Local servers (Ollama, vLLM) take any key; the SDK insists on having one.
            client = openai.OpenAI(base_url=base_url or None, api_key=api_key or "not-needed",
                                   timeout=timeout, max_retries=max_retries)
        self._client = client

    def _complete(self, system: str, turns: list[tuple[str, str]], max_tokens: int,
                  schema: dict[str, Any] | None = None) -> Completion:
        import openai

        messages = [{"role": "system", "content": system},
                    *({"role": role, "content": text} for role, text in turns)]
        constrained = self.json_schema and schema is not None
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, max_tokens=max_tokens, temperature=0,
                response_format=({"type": "json_schema", "json_schema": {
                    "name": "reply", "schema": schema}} if constrained
                    else {"type": "json_object"}))
        except openai.BadRequestError as exc:
            if not constrained:
                raise LLMUnavailable(f"HTTP {exc.status_code}: {exc.message}") from exc
            self.json_schema = False  # the server does not take a schema: JSON mode it is
            return self._complete(system, turns, max_tokens, None)
        except openai.APITimeoutError as exc:
            raise LLMTimeout(f"no answer from {self.base_url or 'OpenAI'} within "
                             f"{self.timeout:g}s") from exc
        except openai.APIStatusError as exc:
            raise LLMUnavailable(f"HTTP {exc.status_code}: {exc.message}") from exc
        except openai.APIError as exc:  # connection errors and the like
            raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
        if not response.choices:
            raise LLMUnavailable("the response had no choices")
        usage = response.usage
        return Completion(
            text=response.choices[0].message.content or "",
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
        )

"""LLM adapter for Amazon Bedrock through the model-agnostic Converse API (boto3
`bedrock-runtime`). Converse has no JSON mode: the prompts ask for one JSON object and
JsonLLM parses (tolerating a code fence) and validates it, retrying once when needed.

Timeouts are botocore's read/connect timeouts; throttling retries are botocore's
("standard" mode, `max_retries` retries).
"""

from __future__ import annotations

from typing import Any

from chalicelib.adapters.llm.base import Completion, JsonLLM, LLMTimeout, LLMUnavailable


class BedrockClient(JsonLLM):
    name = "bedrock"

    def __init__(self, *, model_id: str, region: str | None = None, timeout: float = 60.0,
                 max_retries: int = 2, client: Any = None):
        super().__init__(model_id)
        self.timeout = timeout
        if client is None:
            import boto3
            from botocore.config import Config

            client = boto3.client("bedrock-runtime", region_name=region, config=Config(
                read_timeout=timeout, connect_timeout=min(timeout, 10.0),
                retries={"max_attempts": max_retries + 1, "mode": "standard"}))
        self._client = client

    def _complete(self, system: str, turns: list[tuple[str, str]], max_tokens: int,
                  schema: dict[str, Any] | None = None) -> Completion:
        # Converse has no JSON mode: the prompt asks for the object, JsonLLM validates it
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            ReadTimeoutError,
        )

        try:
            response = self._client.converse(
                modelId=self.model,
                system=[{"text": system}],
                messages=[{"role": role, "content": [{"text": text}]} for role, text in turns],
                inferenceConfig={"maxTokens": max_tokens, "temperature": 0},
            )
        except (ReadTimeoutError, ConnectTimeoutError) as exc:
            raise LLMTimeout(f"no answer from Bedrock within {self.timeout:g}s") from exc
        except ClientError as exc:
            err = exc.response.get("Error", {})
            raise LLMUnavailable(f"{err.get('Code', 'ClientError')}: {err.get('Message', exc)}"
                                 ) from exc
        except BotoCoreError as exc:
            raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
        content = response.get("output", {}).get("message", {}).get("content", [])
        text = "".join(block.get("text", "") for block in content if isinstance(block, dict))
        usage = response.get("usage", {})
        return Completion(text=text, prompt_tokens=int(usage.get("inputTokens", 0)),
                          completion_tokens=int(usage.get("outputTokens", 0)))

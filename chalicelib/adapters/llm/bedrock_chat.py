"""The chat gateway's upstream on Amazon Bedrock: OpenAI chat-completions bodies in, the
Converse / ConverseStream API (boto3 `bedrock-runtime`) behind, OpenAI's answers out.

What is translated (docs/gateway.md):

- `model` → `modelId` (a model or inference-profile id);
- system and developer messages → `system`; user, assistant and tool messages → `messages`,
  consecutive ones of the same role joined (Converse wants user and assistant in turn);
  text parts, `data:` image URLs (png, jpeg, gif, webp), an assistant's `tool_calls`
  (→ toolUse) and tool results (→ a user turn of toolResult blocks);
- `max_completion_tokens` / `max_tokens`, `temperature`, `top_p`, `stop` → inferenceConfig;
  `tools` and `tool_choice` → toolConfig. Fields Converse does not take (n, seed, penalties,
  logprobs, response_format, user …) are not sent.

Answers come back as `chat.completion` / `chat.completion.chunk` objects: text, tool calls,
finish_reason from stopReason, usage from Converse's token counts (a final usage chunk when
the request asked `stream_options.include_usage`). A Bedrock error keeps its HTTP status
where it has one, with an OpenAI-shaped body naming the Bedrock error code.
"""

from __future__ import annotations

import base64
import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from chalicelib.ports import ChatStream, UpstreamError

STOP_REASONS = {
    "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
    "model_context_window_exceeded": "length", "tool_use": "tool_calls",
    "guardrail_intervened": "content_filter", "content_filtered": "content_filter",
}
ERROR_STATUSES = {
    "ValidationException": 400, "AccessDeniedException": 403,
    "ResourceNotFoundException": 404, "ModelTimeoutException": 408,
    "ModelNotReadyException": 429, "ThrottlingException": 429,
    "ServiceQuotaExceededException": 429, "ModelErrorException": 424,
    "ModelStreamErrorException": 424, "InternalServerException": 500,
    "ServiceUnavailableException": 503,
}
IMAGE_FORMATS = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg", "gif": "gif", "webp": "webp"}


class BedrockChatUpstream:
    name = "bedrock"

    def __init__(self, *, default_model: str | None = None, region: str | None = None,
                 timeout: float = 300.0, max_retries: int = 2, client: Any = None):
        self.default_model = default_model
        self.region = region
        self.timeout = timeout
        self._max_retries = max_retries
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:  # boto3 is imported on first use
            import boto3
            from botocore.config import Config

            self._client = boto3.client("bedrock-runtime", region_name=self.region, config=Config(
                read_timeout=self.timeout, connect_timeout=min(self.timeout, 10.0),
                retries={"max_attempts": self._max_retries + 1, "mode": "standard"}))
        return self._client

    # ---------------------------------------------------------------- the port
    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        arguments = converse_arguments(request)
        try:
            response = self.client.converse(**arguments)
        except Exception as exc:
            raise self.error(exc) from exc
        return completion(response, request["model"])

    def stream(self, request: dict[str, Any]) -> ChatStream:
        arguments = converse_arguments(request)
        try:
            response = self.client.converse_stream(**arguments)
        except Exception as exc:
            raise self.error(exc) from exc
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        return _Stream(response["stream"], request["model"], include_usage, self.error)

    def models(self) -> dict[str, Any]:
        data = [{"id": self.default_model, "object": "model", "created": 0,
                 "owned_by": "bedrock"}] if self.default_model else []
        return {"object": "list", "data": data}

    # ---------------------------------------------------------------- errors
    def error(self, exc: BaseException) -> UpstreamError:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            ReadTimeoutError,
        )

        if isinstance(exc, UpstreamError):
            return exc
        if isinstance(exc, ReadTimeoutError | ConnectTimeoutError):
            return UpstreamError.made(504, f"no answer from Bedrock within {self.timeout:g}s",
                                      "upstream_timeout")
        if isinstance(exc, ClientError):  # EventStreamError (inside a stream) included
            error = exc.response.get("Error", {})
            code = str(error.get("Code") or "ClientError")
            code = code[:1].upper() + code[1:]  # in a stream: "modelStreamErrorException"
            status = ERROR_STATUSES.get(code) or int(
                exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 502)
            if status < 400:
                status = 502
            message = str(error.get("Message") or code)
            body = {"error": {"message": message, "type": code, "param": None, "code": code}}
            return UpstreamError(status, json.dumps(body).encode(), f"Bedrock {code}")
        if isinstance(exc, BotoCoreError):
            return UpstreamError.made(502, f"could not reach Bedrock ({type(exc).__name__})",
                                      "upstream_unavailable")
        return UpstreamError.made(502, f"the Bedrock stream broke ({type(exc).__name__})",
                                  "upstream_stream_broken")


# ------------------------------------------------------------------ OpenAI → Converse


def _bad(message: str) -> UpstreamError:
    return UpstreamError.made(400, message, "invalid_request_error", "unsupported_by_bedrock")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and p.get("type") in ("text", None))
    return ""


def _image(url: str) -> dict[str, Any]:
    if not url.startswith("data:image/") or ";base64," not in url:
        raise _bad("Bedrock takes images as data: URLs (data:image/png;base64,…) only")
    head, data = url[len("data:image/"):].split(";base64,", 1)
    fmt = IMAGE_FORMATS.get(head.lower())
    if fmt is None:
        raise _bad(f"image format {head!r} is not one of png, jpeg, gif, webp")
    return {"image": {"format": fmt, "source": {"bytes": base64.b64decode(data)}}}


def _blocks(content: Any) -> list[dict[str, Any]]:
    """User or assistant content as Converse content blocks (no empty text block)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}] if content else []
    blocks = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            if part.get("text"):
                blocks.append({"text": part["text"]})
        elif kind == "image_url":
            image = part.get("image_url")
            blocks.append(_image(image.get("url", "") if isinstance(image, dict) else
                                 str(image or "")))
        else:
            raise _bad(f"content part type {kind!r} is not supported on Bedrock")
    return blocks


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except ValueError:
        raise _bad("tool_calls[].function.arguments must be JSON") from None
    return {"toolUse": {"toolUseId": call.get("id") or "call", "name": function.get("name", ""),
                        "input": arguments if isinstance(arguments, dict) else {"value": arguments}}}


def converse_arguments(request: dict[str, Any]) -> dict[str, Any]:
    """The converse / converse_stream arguments for an OpenAI chat-completions body."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in request["messages"]:
        role = message.get("role")
        if role in ("system", "developer"):
            text = _text(message.get("content"))
            if text:
                system.append({"text": text})
        elif role == "user":
            add("user", _blocks(message.get("content")))
        elif role == "assistant":
            add("assistant", _blocks(message.get("content"))
                + [_tool_use(c) for c in message.get("tool_calls") or []])
        elif role in ("tool", "function"):
            result = _text(message.get("content")) or "(empty)"
            add("user", [{"toolResult": {"toolUseId": message.get("tool_call_id") or "call",
                                         "content": [{"text": result}]}}])
        else:
            raise _bad(f"message role {role!r} is not supported on Bedrock")
    if not turns:
        raise _bad("Bedrock needs at least one user message")
    arguments: dict[str, Any] = {"modelId": request["model"], "messages": turns}
    if system:
        arguments["system"] = system
    inference = _inference(request)
    if inference:
        arguments["inferenceConfig"] = inference
    tools = _tool_config(request)
    if tools:
        arguments["toolConfig"] = tools
    return arguments


def _inference(request: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    max_tokens = request.get("max_completion_tokens") or request.get("max_tokens")
    if max_tokens:
        out["maxTokens"] = int(max_tokens)
    if request.get("temperature") is not None:
        out["temperature"] = float(request["temperature"])
    if request.get("top_p") is not None:
        out["topP"] = float(request["top_p"])
    stop = request.get("stop")
    if stop:
        out["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    return out


def _tool_config(request: dict[str, Any]) -> dict[str, Any]:
    tools = []
    for tool in request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise _bad("tools[] must be {\"type\": \"function\", \"function\": {\"name\", …}}")
        spec: dict[str, Any] = {
            "name": function["name"],
            "inputSchema": {"json": function.get("parameters") or {"type": "object",
                                                                   "properties": {}}}}
        if function.get("description"):
            spec["description"] = function["description"]
        tools.append({"toolSpec": spec})
    if not tools:
        return {}
    config: dict[str, Any] = {"tools": tools}
    choice = request.get("tool_choice")
    if choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    elif isinstance(choice, dict) and (choice.get("function") or {}).get("name"):
        config["toolChoice"] = {"tool": {"name": choice["function"]["name"]}}
    return config


# ------------------------------------------------------------------ Converse → OpenAI


def _usage(usage: dict[str, Any]) -> dict[str, int]:
    prompt, done = int(usage.get("inputTokens", 0)), int(usage.get("outputTokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": done,
            "total_tokens": int(usage.get("totalTokens", prompt + done))}


def completion(response: dict[str, Any], model: str) -> dict[str, Any]:
    """A `chat.completion` object for a Converse answer."""
    blocks = response.get("output", {}).get("message", {}).get("content", [])
    text = "".join(b["text"] for b in blocks if isinstance(b, dict) and "text" in b)
    calls = [{"id": b["toolUse"].get("toolUseId"), "type": "function",
              "function": {"name": b["toolUse"].get("name"),
                           "arguments": json.dumps(b["toolUse"].get("input") or {},
                                                   ensure_ascii=False)}}
             for b in blocks if isinstance(b, dict) and "toolUse" in b]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion",
        "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": STOP_REASONS.get(response.get("stopReason", ""), "stop")}],
        "usage": _usage(response.get("usage", {})),
    }


class _Stream:
    """ConverseStream events as `chat.completion.chunk` dicts."""

    def __init__(self, events: Any, model: str, include_usage: bool, to_error):
        self._events = events
        self._to_error = to_error
        self.model = model
        self.include_usage = include_usage
        self.id = "chatcmpl-" + uuid.uuid4().hex[:24]
        self.created = int(time.time())
        self._tools: dict[int, int] = {}  # content block index → tool_calls index

    def _chunk(self, delta: dict[str, Any], finish: str | None = None,
               usage: dict[str, int] | None = None) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model,
            "choices": [] if usage else [{"index": 0, "delta": delta, "logprobs": None,
                                          "finish_reason": finish}]}
        if usage:
            chunk["usage"] = usage
        return chunk

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            for event in self._events:
                yield from self._translate(event)
        except Exception as exc:
            raise self._to_error(exc) from exc

    def _translate(self, event: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if "messageStart" in event:
            yield self._chunk({"role": "assistant", "content": ""})
        elif "contentBlockStart" in event:
            start = event["contentBlockStart"]
            tool = start.get("start", {}).get("toolUse")
            if tool:
                index = self._tools.setdefault(start.get("contentBlockIndex", 0),
                                               len(self._tools))
                yield self._chunk({"tool_calls": [{
                    "index": index, "id": tool.get("toolUseId"), "type": "function",
                    "function": {"name": tool.get("name"), "arguments": ""}}]})
        elif "contentBlockDelta" in event:
            block = event["contentBlockDelta"]
            delta = block.get("delta", {})
            if "text" in delta:
                yield self._chunk({"content": delta["text"]})
            elif "toolUse" in delta:
                index = self._tools.setdefault(block.get("contentBlockIndex", 0),
                                               len(self._tools))
                yield self._chunk({"tool_calls": [{
                    "index": index, "function": {"arguments": delta["toolUse"].get("input", "")}}]})
        elif "messageStop" in event:
            reason = event["messageStop"].get("stopReason", "")
            yield self._chunk({}, STOP_REASONS.get(reason, "stop"))
        elif "metadata" in event and self.include_usage:
            yield self._chunk({}, usage=_usage(event["metadata"].get("usage", {})))
        else:
            for key, value in event.items():  # an exception event botocore did not raise
                if key.endswith("Exception"):
                    code = key[0].upper() + key[1:]
                    message = (value or {}).get("message", code) if isinstance(value, dict) \
                        else code
                    body = {"error": {"message": message, "type": code, "param": None,
                                      "code": code}}
                    raise UpstreamError(ERROR_STATUSES.get(code, 502),
                                        json.dumps(body).encode(), f"Bedrock {code}")

    def close(self) -> None:
        close = getattr(self._events, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):  # a stream that already broke
                close()

#!/usr/bin/env python3
"""A host that lends its model to Annals: it reads a space's pending chat turns with any
OpenAI-compatible model, in one file (httpx + openai).

Annals hands out reading work as ready chat-completions requests; the host adds its model's
name, sends each request as it is, and posts the reply back:

  1. GET  /v1/spaces/{space}/reading?limit=N
     → {"tasks": [{"lease", "expires_at", "session", "seq_from", "seq_to",
                    "request": {"messages", "response_format", "temperature", "max_tokens"}}]}
  2. POST {OPENAI_BASE_URL}/chat/completions  with {"model": MODEL, **request}
  3. POST /v1/spaces/{space}/reading/{lease}  {"answer": "<the reply's content>"}
     → 200 {"read_by": "host", "events": n, "facts": n}
       422 invalid_answer: refused (the reasons in error.details); Annals' rules read it
       409: the lease expired or was used (Annals reads the batch itself)

A write key is needed (leases are writes). A model that does not support `json_schema`
response formats: pass --json-mode to send {"type": "json_object"} instead.

    export ANNALS_URL=http://127.0.0.1:8000 ANNALS_API_KEY=$(cat .annals/api_key)
    export OPENAI_API_KEY=sk-…  [OPENAI_BASE_URL=… any OpenAI-compatible endpoint]
    python examples/reading_host.py --space me --model gpt-4o-mini     # until nothing is left

What happened goes to stderr, one "[annals] …" line per task.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import httpx
from openai import APIError, OpenAI


def read_space(annals: httpx.Client, llm: OpenAI, model: str, space: str, *,
               limit: int = 2, json_mode: bool = False, rounds: int = 100) -> dict[str, int]:
    """Lease and answer tasks until none is left (or `rounds` leases): counts of what was
    stored by the host, refused, and lost to the model's errors (Annals reads those)."""
    counts = {"stored": 0, "refused": 0, "model_failed": 0, "events": 0}
    for _ in range(rounds):
        answer = annals.get(f"/v1/spaces/{space}/reading", params={"limit": limit})
        answer.raise_for_status()
        tasks = answer.json()["tasks"]
        if not tasks:
            break
        for task in tasks:
            read_one(annals, llm, model, space, task, counts, json_mode)
    return counts


def read_one(annals: httpx.Client, llm: OpenAI, model: str, space: str, task: dict[str, Any],
             counts: dict[str, int], json_mode: bool) -> None:
    request = dict(task["request"])
    if json_mode:
        request["response_format"] = {"type": "json_object"}
    try:
        reply = llm.chat.completions.create(model=model, **request)
    except APIError as exc:  # the lease expires and Annals reads the batch itself
        counts["model_failed"] += 1
        say(f"{task['session']} {task['seq_from']}-{task['seq_to']}: the model failed "
            f"({type(exc).__name__}); Annals will read it when the lease expires")
        return
    content = reply.choices[0].message.content or ""
    posted = annals.post(f"/v1/spaces/{space}/reading/{task['lease']}",
                         json={"answer": content})
    where = f"{task['session']} {task['seq_from']}-{task['seq_to']}"
    if posted.status_code == 200:
        result = posted.json()
        counts["stored"] += 1
        counts["events"] += result["events"]
        say(f"{where}: stored, {result['events']} events, {result['facts']} facts")
    elif posted.status_code == 422:
        counts["refused"] += 1
        say(f"{where}: refused ({posted.json()['error']['message']})")
    else:
        posted.raise_for_status()


def say(line: str) -> None:
    print(f"[annals] {line}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--space", required=True)
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--limit", type=int, default=2, help="tasks leased at a time")
    parser.add_argument("--json-mode", action="store_true",
                        help="send response_format json_object instead of json_schema")
    args = parser.parse_args()
    annals = httpx.Client(base_url=os.environ.get("ANNALS_URL", "http://127.0.0.1:8000"),
                          headers={"Authorization": f"Bearer {os.environ['ANNALS_API_KEY']}"},
                          timeout=60)
    counts = read_space(annals, OpenAI(), args.model, args.space, limit=args.limit,
                        json_mode=args.json_mode)
    say(f"done: {counts}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A chat host with Annals memory, in one file (httpx + openai).

For every user turn it
  1. asks Annals' hook what to remember:  POST /v1/spaces/{space}/hook/recall
     → {"additional_context", "recalled_ids", "injected": false, "verdict", "trace"}
  2. sends the model request with additional_context in the system message,
  3. after a successful reply, reports what it injected:  POST …/deliveries (so the same
     memories rest for a while in this chat window), and stores the exchange:
     PUT …/sessions/{chat}/messages (so Annals can remember it later).

    export ANNALS_URL=http://127.0.0.1:8000 ANNALS_API_KEY=$(cat .annals/api_key)
    export OPENAI_API_KEY=sk-…  [OPENAI_BASE_URL=… any OpenAI-compatible endpoint]
    python examples/chat_host.py --space me "还记得奶糖体检的事吗？"   # one turn per argument
    python examples/chat_host.py --space me                          # or one per stdin line

The reply goes to stdout; what Annals did goes to stderr, one "[annals] …" line per step.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime

import httpx
from openai import APIError, OpenAI

SYSTEM = "You are a warm, concise companion. Use the memories below only when they help."


class ChatHost:
    def __init__(self, annals: httpx.Client, llm: OpenAI, model: str, space: str, chat: str):
        self.annals, self.llm, self.model = annals, llm, model
        self.space, self.chat = space, chat
        self.history: list[dict] = []  # this chat's turns, sent with every request
        self.seq = 0  # the chat is one Annals session; each message gets the next seq

    def turn(self, text: str) -> str:
        # 1. the hook: what Annals remembers about this message (a read; never writes)
        hook = self.annals.post(f"/v1/spaces/{self.space}/hook/recall",
                                json={"query": text, "window": self.chat})
        if unknown_space(hook):  # nothing stored there yet (this chat's first turn): no memory
            memory = {"additional_context": "", "recalled_ids": [], "verdict": "unknown_space"}
        else:
            hook.raise_for_status()
            memory = hook.json()
        context, ids = memory["additional_context"], memory["recalled_ids"]
        log(f"recall: {memory['verdict']}, {len(ids)} memories {ids}")

        # 2. the model request, with the memories in the system message
        system = f"{SYSTEM}\n\n{context}" if context else SYSTEM
        reply = self.llm.chat.completions.create(model=self.model, messages=[
            {"role": "system", "content": system}, *self.history,
            {"role": "user", "content": text}])
        answer = reply.choices[0].message.content or ""

        # 3. the reply went out: report the delivery (cooldown), then store the exchange
        if ids:
            delivered = self.annals.post(f"/v1/spaces/{self.space}/deliveries",
                                         json={"window": self.chat, "ids": ids})
            delivered.raise_for_status()
            log(f"delivery reported: {len(delivered.json()['recorded'])} memories")
        now = datetime.now(UTC).isoformat()
        stored = self.annals.put(
            f"/v1/spaces/{self.space}/sessions/{self.chat}/messages",
            json={"messages": [
                {"seq": self.seq + 1, "role": "user", "content": text, "at": now},
                {"seq": self.seq + 2, "role": "assistant", "content": answer, "at": now}]})
        stored.raise_for_status()
        self.seq += 2
        self.history += [{"role": "user", "content": text},
                         {"role": "assistant", "content": answer}]
        return answer


def unknown_space(answer: httpx.Response) -> bool:
    """404 unknown_space: nothing was ever written to the space (a new one, or a typo)."""
    if answer.status_code != 404:
        return False
    try:
        return answer.json()["error"]["code"] == "unknown_space"
    except (ValueError, KeyError, TypeError):
        return False


def log(line: str) -> None:
    print(f"[annals] {line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("turns", nargs="*", help="user messages (default: stdin lines)")
    parser.add_argument("--space", default="me")
    parser.add_argument("--chat", default=f"chat-{int(time.time())}",
                        help="this conversation's id: its Annals session (seqs count from 1 "
                             "each run, so use a new id per run) and its recall window")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--url", default=os.environ.get("ANNALS_URL", "http://127.0.0.1:8000"))
    args = parser.parse_args(argv)
    key = os.environ.get("ANNALS_API_KEY")
    if not key:
        parser.error("set ANNALS_API_KEY (make run prints it; it is kept in .annals/api_key)")

    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=args.url, headers=headers, timeout=30) as annals:
        host = ChatHost(annals, OpenAI(), args.model, args.space, args.chat)
        turns = args.turns or (line.strip() for line in sys.stdin if line.strip())
        for text in turns:
            try:
                print(host.turn(text), flush=True)
            except httpx.HTTPStatusError as err:
                log(f"{err.response.status_code} from Annals: {err.response.text}")
                return 1
            except httpx.TransportError as err:
                log(f"cannot reach Annals at {args.url}: {err}")
                return 1
            except APIError as err:  # no reply: nothing delivered, nothing reported
                log(f"the model failed ({err}); no delivery reported")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

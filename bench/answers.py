"""The local model's answers kept on disk and replayed (`--answers FILE` of the benches that
read with the model).

Why: one `annals bench facts --reader llm` run of a held-out set is ~20 minutes of model time
on a 2-core machine, and most changes under measurement are in what Annals does with the
answers (the rules' floor beneath the model, how a value is placed), not in what the model
is asked. The model reads at temperature 0 with a grammar from the JSON schema, so the same
request gets the same answer; a run that asks what an earlier run asked replays that answer
and asks the model only what is new (a prompt that changed because the profile it shows
changed is new). Nothing is guessed: the key is everything the server reads — the model
file, the system prompt, the turns, the token limit and the schema.

The reading cost stays honest: each answer keeps its tokens and the seconds it took, and a
replayed answer counts them as if asked (`replayed` says how many were).

SQLite (stdlib) rather than a JSON file: a run writes an answer as it gets it, so a run
stopped halfway keeps what it paid for.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from chalicelib.adapters.llm.base import Completion
from chalicelib.adapters.llm.local import LocalLLMClient, LocalModelServer

_SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY, text TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL, seconds REAL NOT NULL)"""


def request_key(model: str, system: str, turns: list[tuple[str, str]], max_tokens: int,
                schema: dict[str, Any] | None) -> str:
    """What identifies a request: everything the model server reads of it."""
    blob = json.dumps([model, system, turns, max_tokens, schema], ensure_ascii=False,
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class AnswerBook:
    """Answers by request key, in one SQLite file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute(_SCHEMA)
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[Completion, float] | None:
        with self._lock:
            row = self._db.execute("SELECT text, prompt_tokens, completion_tokens, seconds "
                                   "FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Completion(text=row[0], prompt_tokens=row[1], completion_tokens=row[2]), row[3]

    def put(self, key: str, answer: Completion, seconds: float) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                             (key, answer.text, answer.prompt_tokens,
                              answer.completion_tokens, seconds))

    def close(self) -> None:
        self._db.close()


class ReplayingClient(LocalLLMClient):
    """The local model's client with an AnswerBook in front: a request asked before is
    answered from the book (the server is not even started when every request is); a new
    one is asked and written down. Validation, retries and usage counting are the adapter's,
    unchanged: a replayed answer is checked exactly as a fresh one."""

    def __init__(self, server: LocalModelServer, book: AnswerBook, **kwargs: Any):
        super().__init__(server, **kwargs)
        self.book = book
        self.replayed = 0
        self.asked = 0
        self.replayed_seconds = 0.0  # what the replayed answers took when they were asked

    def _complete(self, system: str, turns: list[tuple[str, str]], max_tokens: int,
                  schema: dict[str, Any] | None = None) -> Completion:
        key = request_key(self.server.model_path.name, system, turns, max_tokens, schema)
        kept = self.book.get(key)
        if kept is not None:
            self.replayed += 1
            self.replayed_seconds += kept[1]
            return kept[0]
        started = time.perf_counter()
        answer = super()._complete(system, turns, max_tokens, schema)
        self.asked += 1
        self.book.put(key, answer, time.perf_counter() - started)
        return answer

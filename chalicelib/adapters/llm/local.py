"""`ANNALS_LLM=local`: a GGUF model on this machine, read through the OpenAI-compatible adapter.

`xllamacpp` (PyPI, MIT: prebuilt llama.cpp with its OpenAI-compatible HTTP server, installed
with `pip install 'annals[local]'`) serves `ANNALS_LLM_MODEL_PATH` on a free loopback port,
in a child process (`python -m chalicelib.adapters.llm.local`), so that:

- Annals talks to it exactly as to any other server (the official `openai` SDK,
  chalicelib.adapters.llm.openai_compat), answers constrained by the reading's JSON schema
  (llama.cpp turns `response_format: json_schema` into a grammar: the reply always parses);
- a crash or a kill of the model server is an `LLMUnavailable` for the batch being read (the
  rules read it; nothing is lost) and the next call starts a fresh server;
- the child dies with Annals: it exits when its stdin (a pipe from Annals) closes.

The server starts on the first reading, not with Annals: a process that never reads (a CLI
call, a recall-only Lambda) never loads the 1-2 GB of weights. One thread by default
(`ANNALS_LLM_THREADS`): on a 2-core machine llama.cpp with two threads ran 10-70× slower
whenever another process was busy. Costs (Qwen2.5-Coder-1.5B Q4_K_M, one thread here): 1.9 GB
of memory, ≈ 32 prompt tokens and 6 generated tokens a second — about a minute per session of
a dozen turns; bigger models read better and slower (docs/llm.md).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from chalicelib.adapters.llm.base import Completion, LLMUnavailable
from chalicelib.adapters.llm.openai_compat import OpenAICompatClient

START_SECONDS = 120.0  # loading the weights from a cold disk


class LocalModelServer:
    """xllamacpp's server for one GGUF file, in a child process on 127.0.0.1."""

    def __init__(self, model_path: str | Path, *, threads: int = 1, context: int = 8192):
        self.model_path = Path(model_path)
        self.threads = threads
        self.context = context
        self._child: subprocess.Popen | None = None
        self._port = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def ensure(self) -> str:
        """The server's base URL, started (again) when it is not running."""
        with self._lock:
            if self._child is None or self._child.poll() is not None:
                self._start()
            return self.base_url

    def _start(self) -> None:
        if not self.model_path.is_file():
            raise LLMUnavailable(f"ANNALS_LLM_MODEL_PATH {str(self.model_path)!r} is not a file")
        self._port = _free_port()
        self._child = subprocess.Popen(
            [sys.executable, "-m", "chalicelib.adapters.llm.local", "--model",
             str(self.model_path), "--port", str(self._port), "--threads", str(self.threads),
             "--context", str(self.context)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._child.poll() is not None:
                raise LLMUnavailable(f"the local model server exited ({self._child.returncode}) "
                                     f"while loading {self.model_path.name}; is xllamacpp "
                                     "installed (pip install 'annals[local]')?")
            try:
                if httpx.get(f"http://127.0.0.1:{self._port}/health", timeout=1).status_code \
                        == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise LLMUnavailable(f"the local model server did not start within {START_SECONDS:g}s")

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin:
            child.stdin.close()  # the child's signal to exit
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


class LocalLLMClient(OpenAICompatClient):
    """The OpenAI-compatible adapter pointed at a LocalModelServer it starts on demand."""

    name = "local"

    def __init__(self, server: LocalModelServer, *, timeout: float = 600.0,
                 max_retries: int = 0):
        super().__init__(base_url="http://127.0.0.1:1/v1", model=server.model_path.stem,
                         timeout=timeout, max_retries=max_retries, json_schema=True)
        self.server = server
        self._max_retries = max_retries

    def _complete(self, system: str, turns: list[tuple[str, str]], max_tokens: int,
                  schema: dict[str, Any] | None = None) -> Completion:
        base_url = self.server.ensure()
        if base_url != self.base_url:  # a fresh server, on a new port
            import openai

            self.base_url = base_url
            self._client = openai.OpenAI(base_url=base_url, api_key="not-needed",
                                         timeout=self.timeout, max_retries=self._max_retries)
        return super()._complete(system, turns, max_tokens, schema)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(model: str, port: int, threads: int, context: int) -> None:
    """The child: xllamacpp's server until stdin closes."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.port = port
    params.n_ctx = context
    params.n_parallel = 1  # one reading at a time: a second would halve the first's speed
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.warmup = False
    server = xllamacpp.Server(params)  # noqa: F841 — serves while referenced
    sys.stdin.read()  # EOF: the parent closed the pipe or died
    os._exit(0)  # llama.cpp's threads would keep a normal exit waiting


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="xllamacpp's server for Annals (internal)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--context", type=int, default=8192)
    args = parser.parse_args()
    serve(args.model, args.port, args.threads, args.context)

"""`annals serve` as a subprocess on a free port, for every test that talks real HTTP to it
(tests/e2e, tests/web): one way to start it, wait for /v1/health, talk to it and stop it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ANNALS = Path(sys.executable).with_name("annals")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(data_dir: Path, drop: tuple[str, ...] = ("ANNALS_",), **extra: str
               ) -> dict[str, str]:
    """This process's environment without the variables that would configure the server
    (`drop` prefixes), plus its data dir, the scheduler off, and `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(ANNALS_DATA_DIR=str(data_dir), ANNALS_SCHEDULE="off", **extra)
    return env


class AnnalsServer:
    """`annals serve` on a free port. `env`: its whole environment (server_env by default);
    `stdout`: subprocess.PIPE to read what it prints (`out` after stop), else discarded;
    `port`: a fixed one (a server started again where its clients expect it)."""

    stop_signal = signal.SIGTERM

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None,
                 stdout: int = subprocess.DEVNULL, cwd: Path | None = None,
                 port: int | None = None):
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out = ""
        self.proc = subprocess.Popen(
            [str(ANNALS), "serve", "--host", "127.0.0.1", "--port", str(self.port)],
            env=env if env is not None else server_env(data_dir), cwd=cwd, stdout=stdout,
            stderr=subprocess.PIPE, text=True)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.proc.stderr.read()}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("server did not start")

    def http(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30,
                            headers={"Authorization": f"Bearer {key}"})

    def stop(self, sig: int | None = None) -> str:
        """Signal it (SIGTERM unless told), wait up to 15 s (then kill); its stderr."""
        self.proc.send_signal(sig or self.stop_signal)
        try:
            out, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.out = out or ""
        return err

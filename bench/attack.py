"""`annals bench attack`: one tenant tries to starve another on one `annals serve` (issue 23).

A real server (a subprocess on a free port, its own data dir, the bundled e5) and three kinds
of client, each on its own threads — the attacker's in a process of their own, as another
client's would be:

- the attacker, a write key scoped to its own space: two graph imports of maximum size (a
  body just under 2 MB: events whose summaries are 3,990 characters) and sixteen threads of
  maximum recalls (a 3,990-character query, four 3,990-character `recent` turns, `max_cards`
  50, `min_relevance` 0), each sent again as soon as the last answered — after a 429 too,
  waiting only `--attacker-pause` seconds (0.05: a hostile client does not honour
  Retry-After);
- the victim, another key and space: every 2 s it PUTs one message and recalls;
- a prober: GET /v1/health every 0.5 s.

First the victim and the prober run alone (`--idle-seconds`), then with the attacker
(`--seconds`, 120 by default). Reported: the victim's recall and PUT p50/p95 idle and under
attack, their statuses, the slowest health answer, what the attacker got (2xx, 429, other),
and the imports' jobs. The targets (issue 23): every victim request 2xx, victim recall p95
≤ 3 × idle p95 or ≤ 0.3 s, PUT p95 ≤ 3 × idle or ≤ 0.5 s, health always within 1 s; the
attacker gets 429s and its imports finish as jobs.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

MAX_TEXT = 3990
BODY_BUDGET = 1_950_000  # bytes of one import, under the 2 MB body limit


@dataclass
class Samples:
    seconds: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, status: int) -> None:
        with self.lock:
            self.seconds.append(seconds)
            self.statuses[status] += 1

    def summary(self) -> dict[str, Any]:
        return {"n": len(self.seconds), "p50": _pct(self.seconds, 50),
                "p95": _pct(self.seconds, 95), "max": max(self.seconds, default=None),
                "statuses": dict(sorted(self.statuses.items()))}


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


# ------------------------------------------------------------------ the server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, data_dir: Path, admin_key: str, embedder: str):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANNALS_")}
        env.update(ANNALS_DATA_DIR=str(data_dir), ANNALS_SCHEDULE="off",
                   ANNALS_API_KEY=admin_key, ANNALS_EMBEDDER=embedder)
        annals = Path(sys.executable).with_name("annals")
        self.proc = subprocess.Popen([str(annals), "serve", "--port", str(self.port)],
                                     env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)

    def wait_ready(self, timeout: float = 90) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"annals serve exited: {self.proc.stderr.read()[-2000:]}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError("annals serve did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()


def _client(url: str, key: str, timeout: float = 60) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=timeout,
                        headers={"Authorization": f"Bearer {key}"})


def _make_key(url: str, admin: str, space: str) -> str:
    with _client(url, admin) as http:
        r = http.post("/v1/keys", json={"label": space, "access": "write", "spaces": [space]})
        r.raise_for_status()
        return r.json()["key"]


def _seed(url: str, key: str, space: str) -> None:
    """One message in `space` before the attack: a space never written answers a recall 404
    `unknown_space` at once, and an attack of cheap 404s measures nothing."""
    with _client(url, key) as http:
        http.put(f"/v1/spaces/{space}/sessions/seed/messages", json={"messages": [{
            "seq": 0, "role": "user", "speaker": "Eve", "content": _long_text(0),
            "at": datetime.now(UTC).isoformat()}]}).raise_for_status()


# ------------------------------------------------------------------ the attacker's bodies


def _long_text(seed: int) -> str:
    words = ["kyoto", "hotel", "ryokan", "booking", "train", "station", "museum", "garden",
             "temple", "dinner", "friend", "weekend", "plan", "ticket", "flight", "lisbon",
             "market", "river", "walk", "evening", "morning"]
    out, i = [], seed
    while sum(len(w) + 1 for w in out) < MAX_TEXT:
        out.append(words[(i * 7 + len(out)) % len(words)])
        i += 1
    return " ".join(out)[:MAX_TEXT]


def import_body(tag: str) -> bytes:
    """A graph document just under the body limit: events with 3,990-character summaries."""
    events, size = [], 200
    now = datetime(2026, 11, 1, tzinfo=UTC).isoformat()
    when = {"start": now, "end": datetime(2026, 11, 2, tzinfo=UTC).isoformat()}
    for i in range(100_000):
        event = {"id": f"ev_{tag}_{i:05d}", "space": "attacker", "title": f"Event {i} {tag}",
                 "summary": _long_text(i), "when": when, "created_at": now,
                 "updated_at": now}
        piece = len(json.dumps(event)) + 2
        if size + piece > BODY_BUDGET:
            break
        events.append(event)
        size += piece
    return json.dumps({"space": "attacker", "events": events}).encode()


def recall_body() -> dict[str, Any]:
    recent = [{"role": "user" if i % 2 else "assistant", "content": _long_text(100 + i)}
              for i in range(4)]
    return {"query": _long_text(7), "recent": recent, "max_cards": 50, "min_relevance": 0}


# ------------------------------------------------------------------ the run


@dataclass
class Run:
    url: str
    stop: threading.Event = field(default_factory=threading.Event)
    victim_recall: Samples = field(default_factory=Samples)
    victim_put: Samples = field(default_factory=Samples)
    health: Samples = field(default_factory=Samples)
    attacker: Counter = field(default_factory=Counter)
    imports: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _timed(fn) -> tuple[float, int]:
    start = time.perf_counter()
    try:
        status = fn().status_code
    except httpx.HTTPError:
        status = 0  # a timeout or a broken connection: not 2xx
    return time.perf_counter() - start, status


def victim(run: Run, key: str, every: float, seq0: int) -> None:
    seq = seq0
    with _client(run.url, key, timeout=30) as http:
        while not run.stop.is_set():
            began = time.monotonic()
            body = {"messages": [{"seq": seq, "role": "user", "speaker": "Mia",
                                  "content": f"I fed my cat Miso at seven, turn {seq}",
                                  "at": datetime.now(UTC).isoformat()}]}
            run.victim_put.add(*_timed(lambda b=body: http.put(
                "/v1/spaces/victim/sessions/chat/messages", json=b)))
            run.victim_recall.add(*_timed(lambda: http.post(
                "/v1/spaces/victim/recall", json={"query": "what did I feed my cat?"})))
            seq += 1
            run.stop.wait(max(0.0, every - (time.monotonic() - began)))


def prober(run: Run, every: float = 0.5) -> None:
    with httpx.Client(base_url=run.url, timeout=30) as http:
        while not run.stop.is_set():
            run.health.add(*_timed(lambda: http.get("/v1/health")))
            run.stop.wait(every)


def recaller(run: Run, key: str, pause: float) -> None:
    body = recall_body()
    with _client(run.url, key, timeout=60) as http:
        while not run.stop.is_set():
            _, status = _timed(lambda: http.post("/v1/spaces/attacker/recall", json=body))
            with run.lock:
                run.attacker[status] += 1
            if status == 429:
                run.stop.wait(pause)


def importer(run: Run, key: str, tag: str) -> None:
    body = import_body(tag)
    with _client(run.url, key, timeout=120) as http:
        while not run.stop.is_set():
            start = time.perf_counter()
            try:
                r = http.post("/v1/spaces/attacker/graph", content=body,
                              headers={"Content-Type": "application/json"})
            except httpx.HTTPError as exc:
                with run.lock:
                    run.attacker["import error"] += 1
                    run.imports.append({"tag": tag, "error": type(exc).__name__})
                return
            with run.lock:
                run.attacker[f"import {r.status_code}"] += 1
            if r.status_code == 429:  # the space's queue is full, or the key at its limit
                run.stop.wait(float(r.headers.get("Retry-After", "1")))
                continue
            job = (r.json().get("job") or {}) if r.status_code < 300 else {}
            with run.lock:
                run.imports.append({"tag": tag, "status": r.status_code, "bytes": len(body),
                                    "answered_s": round(time.perf_counter() - start, 3),
                                    "job": job.get("id")})
            return


def _phase(run: Run, victim_key: str, seconds: float, every: float, seq0: int,
           attack: list[threading.Thread]) -> None:
    threads = [threading.Thread(target=victim, args=(run, victim_key, every, seq0)),
               threading.Thread(target=prober, args=(run,)), *attack]
    for t in threads:
        t.start()
    time.sleep(seconds)
    run.stop.set()
    for t in threads:
        t.join(120)


class _Attacker:
    """The attacker's threads in a process of their own, as another client's would be: in
    this one, sixteen threads parsing 50-card answers took the interpreter from the victim's
    client thread, and its waits were counted as the server's (bench/README)."""

    def __init__(self, url: str, key: str, recallers: int, pause: float):
        ctx = multiprocessing.get_context("spawn")
        self.results = ctx.Queue()
        self.stop = ctx.Event()
        self.proc = ctx.Process(target=_attack_process, daemon=True,
                                args=(url, key, recallers, pause, self.stop, self.results))
        self.counts: Counter = Counter()
        self.imports: list[dict[str, Any]] = []

    def __enter__(self) -> _Attacker:
        self.proc.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        counts, imports = self.results.get(timeout=180)
        self.proc.join(30)
        self.counts, self.imports = Counter(counts), imports


def _attack_process(url: str, key: str, recallers: int, pause: float, stop: Any,
                    results: Any) -> None:
    run = Run(url)
    threads = [threading.Thread(target=recaller, args=(run, key, pause))
               for _ in range(recallers)]
    threads += [threading.Thread(target=importer, args=(run, key, tag)) for tag in ("a", "b")]
    for t in threads:
        t.start()
    stop.wait()
    run.stop.set()
    for t in threads:
        t.join(120)
    results.put((dict(run.attacker), run.imports))


def _jobs(url: str, key: str, wait: float) -> list[dict[str, Any]]:
    """The attacker space's import jobs, once none is queued or running (or `wait` passed)."""
    end = time.monotonic() + wait
    with _client(url, key) as http:
        while True:
            jobs = http.get("/v1/spaces/attacker/jobs").json().get("jobs", [])
            if all(j["status"] in ("done", "failed") for j in jobs) or time.monotonic() > end:
                return [{"id": j["id"], "kind": j["kind"], "status": j["status"],
                         "progress": j["progress"]} for j in jobs]
            time.sleep(2)


def run_attack(seconds: float = 120, idle_seconds: float = 30, recallers: int = 16,
               attacker_pause: float = 0.05, embedder: str = "e5-local",
               job_wait: float = 5400, progress: bool = True) -> dict[str, Any]:
    admin = "ak_bench_" + secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="annals-attack-") as tmp:
        server = Server(Path(tmp), admin, embedder)
        try:
            server.wait_ready()
            attacker_key = _make_key(server.url, admin, "attacker")
            victim_key = _make_key(server.url, admin, "victim")
            _seed(server.url, attacker_key, "attacker")
            say = (lambda m: print(m, file=sys.stderr, flush=True)) if progress else (
                lambda m: None)
            say(f"idle: the victim alone for {idle_seconds:g} s")
            idle = Run(server.url)
            _phase(idle, victim_key, idle_seconds, 0.5, 0, [])
            say(f"attack: {recallers} recallers and 2 imports for {seconds:g} s")
            attack = Run(server.url)
            with _Attacker(server.url, attacker_key, recallers, attacker_pause) as attacker:
                _phase(attack, victim_key, seconds, 2.0, 10_000, [])
            attack.attacker, attack.imports = attacker.counts, attacker.imports
            say("waiting for the imports' jobs")
            began = time.monotonic()
            jobs = _jobs(server.url, attacker_key, job_wait)
            jobs_seconds = time.monotonic() - began
        finally:
            server.stop()
    return _report(idle, attack, jobs, jobs_seconds, seconds)


def _report(idle: Run, attack: Run, jobs: list[dict[str, Any]], jobs_seconds: float,
            seconds: float) -> dict[str, Any]:
    idle_recall, idle_put = idle.victim_recall.summary(), idle.victim_put.summary()
    recall, put = attack.victim_recall.summary(), attack.victim_put.summary()
    health = attack.health.summary()
    victim_ok = all(200 <= s < 300 for s in (*attack.victim_recall.statuses,
                                             *attack.victim_put.statuses))
    targets = {
        "every victim request 2xx": victim_ok,
        "victim recall p95 <= 3x idle or <= 0.3 s": bool(
            recall["p95"] is not None and (recall["p95"] <= 3 * idle_recall["p95"]
                                           or recall["p95"] <= 0.3)),
        "PUT p95 <= 3x idle or <= 0.5 s": bool(
            put["p95"] is not None and (put["p95"] <= 3 * idle_put["p95"] or put["p95"] <= 0.5)),
        "health always within 1 s": bool(
            health["max"] is not None and health["max"] <= 1.0
            and set(attack.health.statuses) == {200}),
        "the attacker gets 429s": attack.attacker.get(429, 0) > 0,
        "imports finish as jobs": bool(
            len([i for i in attack.imports if i.get("job")]) == 2
            and all(j["status"] == "done" for j in jobs if j["kind"] == "import-index")),
    }
    return {"seconds": seconds, "idle": {"recall": idle_recall, "put": idle_put,
                                         "health": idle.health.summary()},
            "attack": {"recall": recall, "put": put, "health": health,
                       "attacker": {str(k): v for k, v in attack.attacker.items()},
                       "imports": attack.imports},
            "jobs": jobs, "jobs_seconds_after": round(jobs_seconds, 1), "targets": targets}


def format_report(report: dict[str, Any]) -> str:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:.0f} ms"

    idle, attack = report["idle"], report["attack"]
    lines = [f"victim under attack for {report['seconds']:g} s (idle baseline first)",
             "| | idle p50 | idle p95 | attack p50 | attack p95 | attack max | statuses |",
             "|---|---|---|---|---|---|---|"]
    for name in ("recall", "put", "health"):
        a, b = idle[name], attack[name]
        lines.append(f"| {name} | {ms(a['p50'])} | {ms(a['p95'])} | {ms(b['p50'])} | "
                     f"{ms(b['p95'])} | {ms(b['max'])} | {b['statuses']} |")
    lines.append(f"attacker: {attack['attacker']}")
    for imp in attack["imports"]:
        lines.append(f"import {imp}")
    for job in report["jobs"]:
        lines.append(f"job {job['id']} {job['kind']} {job['status']} "
                     f"{job['progress'].get('done')}/{job['progress'].get('total')}")
    lines.append(f"jobs ended {report['jobs_seconds_after']} s after the attack")
    for target, ok in report["targets"].items():
        lines.append(f"{'PASS' if ok else 'FAIL'}  {target}")
    return "\n".join(lines)

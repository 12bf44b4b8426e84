"""`annals bench load --same-key`: one key's own recall beside its own bulk writes (issue 39).

A chat's key also imports or syncs in bulk: its writers must not make the turn being
answered wait, or be refused. A real server (`annals serve` in a subprocess on a free port,
its own data dir: bench.attack's `Server`) and one write key scoped to one space:

1. idle: one writer PUTs a batch every `idle_every` seconds and a checker recalls each new
   batch right after it is acknowledged (idle p50/p95 of those recalls);
2. load: `writers` threads PUT batches of `batch` messages with the same key at full speed
   for `seconds` — after a 429 they wait `writer_pause` (50 ms: a bulk writer that does not
   honour Retry-After) — while the checker takes the newest acknowledged batch, at most every
   `check_every` seconds, and recalls it by a word only that batch holds (recipe bm25; the
   messages are bench.mixed's, each with a word of its own). A recall answered 429 is
   counted and sent again after its Retry-After, as the Python client does, for up to
   `give_up` seconds; its time runs from the first send to the answer used;
3. idle again, as 1, on all the space then holds: shows what the load costs a recall apart
   from what a larger space does (reported, not a target).

Targets: every recall finds its batch (100 %), no recall answered 429, recall p95 under load
≤ 3 × idle p95; the writers' 429s are allowed (they are what keeps the key's reads served).
The clients run in the bench's process, on the server's machine: on a 2-core box the p95
ratio moves with whatever else runs there (bench/README.md).
"""

from __future__ import annotations

import random
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .attack import Samples, Server, _client, _make_key
from .mixed import Messages

SPACE = "chat"
TARGET_P95_OVER_IDLE = 3.0


@dataclass
class Phase:
    url: str
    key: str
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    newest: tuple[str, int, list[str]] | None = None  # (session, seq0, nonces) last acked
    puts: Samples = field(default_factory=Samples)  # every PUT sent, by status
    write_refusals: Counter = field(default_factory=Counter)  # the 429s' causes
    acked_batches: int = 0
    recalls: Samples = field(default_factory=Samples)  # one per check: first send → answer
    read_statuses: Counter = field(default_factory=Counter)  # every recall sent
    checked: int = 0
    found: int = 0
    missed: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def writer(phase: Phase, messages: Messages, session: str, pause_after_ack: float,
           writer_pause: float) -> None:
    seq = 0
    with _client(phase.url, phase.key, timeout=60) as http:
        while not phase.stop.is_set():
            body, nonces = messages.next_batch(session, seq)
            began = time.perf_counter()
            try:
                r = http.put(f"/v1/spaces/{SPACE}/sessions/{session}/messages", json=body)
                status = r.status_code
            except httpx.HTTPError:
                r, status = None, 0
            phase.puts.add(time.perf_counter() - began, status)
            if status == 429:
                with phase.lock:
                    phase.write_refusals[_cause(r.text)] += 1
            if 200 <= status < 300:
                with phase.lock:
                    phase.newest = (session, seq, nonces)
                    phase.acked_batches += 1
                seq += len(nonces)
                if pause_after_ack:
                    phase.stop.wait(pause_after_ack)
            else:  # 429 (or an error): not acknowledged; a new batch, same seqs, shortly
                phase.stop.wait(writer_pause)


def _cause(body: str) -> str:
    """Which limit a 429 names: the embedding backlog of the space (the vector lane behind),
    or one of the key's, the space's or the server's (chalicelib.usecases.limits)."""
    return "embedding backlog" if "ANNALS_LIMIT_SPACE_BACKLOG" in body else "limits"


def recall_batch(phase: Phase, http: httpx.Client, session: str, seq0: int,
                 nonces: list[str], rng: random.Random, give_up: float) -> None:
    k = rng.randrange(len(nonces))
    want = f"message:{session}:{seq0 + k}"
    body = {"query": nonces[k], "recipe": "bm25", "max_cards": 5}
    began = time.perf_counter()
    found, status = False, 0
    while True:
        try:
            r = http.post(f"/v1/spaces/{SPACE}/recall", json=body)
            status = r.status_code
        except httpx.HTTPError:
            status, r = 0, None
        with phase.lock:
            phase.read_statuses[status] += 1
        if status != 429:
            found = r is not None and status == 200 and want in r.json().get("recalled_ids", [])
            break
        wait = float(r.headers.get("Retry-After", "1"))
        if time.perf_counter() - began + wait > give_up:
            break
        time.sleep(wait)  # not cut short at the phase's end: the check finishes
    phase.recalls.add(time.perf_counter() - began, status)
    with phase.lock:
        phase.checked += 1
        if found:
            phase.found += 1
        elif len(phase.missed) < 5:
            phase.missed.append({"word": nonces[k], "want": want, "status": status})


def checker(phase: Phase, check_every: float, give_up: float, seed: int) -> None:
    rng = random.Random(seed)
    seen = None
    with _client(phase.url, phase.key, timeout=60) as http:
        while not phase.stop.is_set():
            with phase.lock:
                latest = phase.newest
            if latest is None or latest is seen:
                phase.stop.wait(0.005)  # right after the next acknowledged PUT
                continue
            seen = latest
            recall_batch(phase, http, *latest, rng, give_up)
            phase.stop.wait(check_every)


def run_phase(url: str, key: str, messages: Messages, seconds: float, writers: int,
              pause_after_ack: float, writer_pause: float, check_every: float,
              give_up: float, tag: str, seed: int) -> Phase:
    phase = Phase(url, key)
    threads = [threading.Thread(target=writer, args=(phase, messages, f"{tag}{w}",
                                                     pause_after_ack, writer_pause))
               for w in range(writers)]
    threads.append(threading.Thread(target=checker, args=(phase, check_every, give_up, seed)))
    began = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    phase.stop.set()
    for t in threads:
        t.join(120)
    phase.seconds = time.perf_counter() - began
    return phase


def run_same_key(seconds: float = 60, idle_seconds: float = 15, writers: int = 4,
                 batch: int = 20, embedder: str = "e5-local", writer_pause: float = 0.05,
                 check_every: float = 0.25, idle_every: float = 0.25, give_up: float = 10.0,
                 seed: int = 7,
                 progress: bool = True) -> dict[str, Any]:
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if progress else (lambda m: None)
    admin = "ak_bench_" + secrets.token_hex(16)
    messages = Messages(seed, batch)
    with tempfile.TemporaryDirectory(prefix="annals-same-key-") as tmp:
        server = Server(Path(tmp), admin, embedder)
        try:
            server.wait_ready()
            key = _make_key(server.url, admin, SPACE)
            say(f"idle: the key PUTs a batch every {idle_every:g} s and recalls it, "
                f"{idle_seconds:g} s")
            idle = run_phase(server.url, key, messages, idle_seconds, 1, idle_every, writer_pause,
                             0.0, give_up, "idle", seed)
            say(f"load: {writers} writers PUT batches of {batch} with the same key for "
                f"{seconds:g} s while it recalls the newest acknowledged batch")
            load = run_phase(server.url, key, messages, seconds, writers, 0.0, writer_pause,
                             check_every, give_up, "w", seed + 1)
            say(f"idle again, on all the space holds now, {idle_seconds:g} s")
            after = run_phase(server.url, key, messages, idle_seconds, 1, idle_every,
                              writer_pause, 0.0, give_up, "after", seed + 2)
        finally:
            server.stop()
    return report(idle, load, after, writers=writers, batch=batch, embedder=embedder)


def _phase_summary(phase: Phase, batch: int) -> dict[str, Any]:
    return {"seconds": round(phase.seconds, 1), "recalls": phase.checked,
            "found": phase.found,
            "found_share": phase.found / phase.checked if phase.checked else None,
            "recall": phase.recalls.summary(),
            "read_statuses": {str(k): v for k, v in sorted(phase.read_statuses.items())},
            "read_429": phase.read_statuses.get(429, 0),
            "put": phase.puts.summary(),
            "write_429": phase.puts.statuses.get(429, 0),
            "write_429_causes": dict(phase.write_refusals),
            "batches_acked": phase.acked_batches,
            "batches_acked_per_s": phase.acked_batches / phase.seconds if phase.seconds else 0,
            "messages_acked_per_s": (phase.acked_batches * batch / phase.seconds
                                     if phase.seconds else 0),
            "missed": phase.missed}


def report(idle: Phase, load: Phase, after: Phase | None = None, *, writers: int, batch: int,
           embedder: str) -> dict[str, Any]:
    i, u = _phase_summary(idle, batch), _phase_summary(load, batch)
    a = _phase_summary(after, batch) if after is not None else None
    load_p95 = u["recall"]["p95"]

    def over(base: dict[str, Any] | None) -> float | None:
        p95 = base and base["recall"]["p95"]
        return load_p95 / p95 if p95 and load_p95 is not None else None

    ratio = over(i)
    targets = {
        "every recall finds its batch (100 %)": bool(u["recalls"]) and u["found"] == u["recalls"],
        "no recall answered 429": u["read_429"] == 0,
        f"recall p95 <= {TARGET_P95_OVER_IDLE:g}x idle p95": (
            ratio is not None and ratio <= TARGET_P95_OVER_IDLE),
    }
    return {"benchmark": "load --same-key", "embedder": embedder, "writers": writers,
            "batch": batch, "idle": i, "load": u, "idle_after": a, "p95_over_idle": ratio,
            "p95_over_idle_after": over(a), "targets": targets}


def format_same_key(r: dict[str, Any]) -> str:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:.0f} ms"

    i, u = r["idle"], r["load"]
    share = "-" if u["found_share"] is None else f"{u['found_share']:.0%}"
    ratio = "-" if r["p95_over_idle"] is None else f"{r['p95_over_idle']:.2f}×"
    lines = [
        f"one key recalls beside its own writes: {r['writers']} writers PUT batches of "
        f"{r['batch']} for {u['seconds']:g} s (embedder {r['embedder']})",
        f"  idle: {i['recalls']} recalls, {i['found']} found, p50 {ms(i['recall']['p50'])}, "
        f"p95 {ms(i['recall']['p95'])}",
        f"  under its own writes: {u['recalls']} recalls, {u['found']} found ({share}), "
        f"p50 {ms(u['recall']['p50'])}, p95 {ms(u['recall']['p95'])} = {ratio} idle p95, "
        f"max {ms(u['recall']['max'])}",
        f"  reads sent {sum(u['read_statuses'].values())}: {u['read_statuses']} "
        f"({u['read_429']} × 429)",
        f"  writes: {u['batches_acked']} batches acked ({u['batches_acked_per_s']:.1f}/s, "
        f"{u['messages_acked_per_s']:.0f} messages/s), PUT p50 {ms(u['put']['p50'])}, "
        f"p95 {ms(u['put']['p95'])}, statuses {u['put']['statuses']} ({u['write_429']} × 429,"
        f" allowed: {u['write_429_causes']})",
    ]
    if r.get("idle_after"):
        a = r["idle_after"]
        after = "-" if r["p95_over_idle_after"] is None else f"{r['p95_over_idle_after']:.2f}×"
        lines.append(f"  idle again after, on all the space then holds: {a['recalls']} recalls, "
                     f"{a['found']} found, p50 {ms(a['recall']['p50'])}, p95 "
                     f"{ms(a['recall']['p95'])} (the load's p95 = {after} of it)")
    for miss in u["missed"]:
        lines.append(f"  missed {miss}")
    for target, ok in r["targets"].items():
        lines.append(f"{'PASS' if ok else 'FAIL'}  {target}")
    return "\n".join(lines)

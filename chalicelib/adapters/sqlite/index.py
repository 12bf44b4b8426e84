"""Embedded search indexes: SQLite FTS5 for keywords, exact numpy cosine for vectors.

Both live in the same SQLite file as the store. The keyword index receives text already
tokenized by `chalicelib.domain.textproc` (the contract shared with OpenSearch), so FTS5's own
tokenizer only has to split on the spaces we put in.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.domain.models import IndexDoc
from chalicelib.domain.textproc import index_text, search_terms
from chalicelib.ports import ACTIVE, Hit, SearchFilter

FTS_TOKENIZER = "unicode61 remove_diacritics 0"

KEYWORD_MIGRATIONS = [
    (
        "keyword-001-fts5",
        [
            """CREATE TABLE kw_docs (
                rowid INTEGER PRIMARY KEY, space TEXT NOT NULL, doc_id TEXT NOT NULL,
                kind TEXT NOT NULL, start_ts REAL NOT NULL, end_ts REAL NOT NULL,
                status TEXT NOT NULL, UNIQUE (space, doc_id))""",
            f"CREATE VIRTUAL TABLE kw_fts USING fts5(tokens, tokenize='{FTS_TOKENIZER}')",
        ],
    ),
    (
        # Every kw_docs row written or removed, in commit order: how an in-memory copy of the
        # index (see _KeywordMemory) learns what another thread or process changed.
        "keyword-002-log",
        ["CREATE TABLE kw_log (rev INTEGER PRIMARY KEY, doc_rowid INTEGER NOT NULL)"],
    ),
]

VECTOR_MIGRATIONS = [
    (
        "vector-001-blobs",
        [
            """CREATE TABLE vec_docs (
                space TEXT NOT NULL, doc_id TEXT NOT NULL, kind TEXT NOT NULL,
                start_ts REAL NOT NULL, end_ts REAL NOT NULL, status TEXT NOT NULL,
                vec BLOB, rev INTEGER NOT NULL, PRIMARY KEY (space, doc_id))""",
            "CREATE INDEX vec_docs_rev ON vec_docs (space, rev)",
        ],
    ),
    (
        # The highest rev handed out, so a write does not scan every row for MAX(rev).
        "vector-002-rev-counter",
        [
            "CREATE TABLE vec_rev (id INTEGER PRIMARY KEY CHECK (id = 0), rev INTEGER NOT NULL)",
            "INSERT INTO vec_rev SELECT 0, COALESCE(MAX(rev), 0) FROM vec_docs",
        ],
    ),
]

CATCH_UP_ROWS = 160  # rows a writer lets pile up before it brings the in-memory copy along
_IN_CHUNK = 500  # ids per `IN (...)`: well under any SQLite build's variable limit
_LOG_KEEP = 200_000  # kw_log entries kept; a copy further behind than this reloads in full
_LOG_PRUNE_EVERY = 10_000  # entries between two prunes


def _chunks(items: Sequence, size: int = _IN_CHUNK) -> Iterator[Sequence]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _filter_sql(flt: SearchFilter, alias: str) -> tuple[str, list]:
    sql = [f"AND {alias}.kind IN ({','.join('?' * len(flt.kinds))})",
           f"AND {alias}.status IN ({','.join('?' * len(flt.statuses))})"]
    params: list = [*flt.kinds, *flt.statuses]
    if flt.end is not None:
        sql.append(f"AND {alias}.start_ts < ?")
        params.append(flt.end)
    if flt.start is not None:
        sql.append(f"AND {alias}.end_ts > ?")
        params.append(flt.start)
    return " ".join(sql), params


class FtsKeywordIndex:
    """Keyword search over an FTS5 table, answered from an exact in-memory copy of it.

    FTS5 is the index of record. Scoring every match of an OR query through `bm25()` and a
    join for the filters costs ~10 ms at 100k docs, so searches run on `_KeywordMemory`:
    the same postings, the same bm25 formula and statistics, the same order (ties by rowid,
    as SQLite's sort leaves them), in numpy. It follows writes through `kw_log`. A query
    term that FTS5 would split into several tokens (a phrase) goes to SQL instead.
    """

    def __init__(self, db: SQLiteDB):
        self.db = db
        db.migrate(KEYWORD_MIGRATIONS)
        self._lock = threading.Lock()
        self._memory = _KeywordMemory()
        self._behind = 0  # rows written since the copy last caught up (catch_up_every)

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        if not docs:
            return
        rows = self.prepare(docs)
        with self.db.tx() as con:
            self.write_rows(con, rows)
        self.catch_up()

    @staticmethod
    def prepare(docs: Sequence[IndexDoc]) -> list[tuple]:
        """The rows `write_rows` stores for `docs`, tokenized: the CPU part of a write, which
        needs no transaction (a doc given twice: the last one wins, in its own place)."""
        latest: dict[tuple[str, str], IndexDoc] = {}
        for doc in docs:
            latest.pop((doc.space, doc.id), None)
            latest[(doc.space, doc.id)] = doc
        return [(d.space, d.id, d.kind, d.start, d.end, d.status, index_text(d.text))
                for d in latest.values()]

    def write_rows(self, con: sqlite3.Connection, rows: Sequence[tuple]) -> None:
        """Store prepared rows inside a transaction the caller holds; `catch_up` after the
        commit brings the in-memory copy along."""
        if not rows:
            return
        old = self._rowids(con, [(r[0], r[1]) for r in rows])
        self._remove(con, old)
        # New rows take rowids after every row left, in input order: what inserting one
        # by one would give, so rowid order (bm25's tie-break) is unchanged.
        top = con.execute("SELECT COALESCE(MAX(rowid), 0) FROM kw_docs").fetchone()[0]
        ids = range(top + 1, top + 1 + len(rows))
        con.executemany(
            "INSERT INTO kw_docs(rowid, space, doc_id, kind, start_ts, end_ts, status)"
            " VALUES (?,?,?,?,?,?,?)", [(i, *r[:6]) for i, r in zip(ids, rows, strict=True)])
        con.executemany("INSERT INTO kw_fts(rowid, tokens) VALUES (?,?)",
                        [(i, r[6]) for i, r in zip(ids, rows, strict=True)])
        self._log(con, [*old, *ids])

    def delete(self, space: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        with self.db.tx() as con:
            old = self._rowids(con, [(space, i) for i in dict.fromkeys(ids)])
            self._remove(con, old)
            self._log(con, old)
        self.catch_up()

    def catch_up(self) -> None:
        """Bring the in-memory copy up to date in the writer's thread, so the next search
        (a recall, on the path users feel) does not pay for what was just written."""
        with self._lock:
            self._behind = 0
            if self._memory.rev >= 0:  # loaded: keep it current; else the first search loads
                self._memory.refresh(self.db.connect())

    def catch_up_every(self, rows: int, batch: int = CATCH_UP_ROWS) -> None:
        """After a write of `rows` rows: catch the copy up once `batch` rows have piled up.
        Writers pay for the copy in batches (adding 20 rows at a time costs about twice per
        row what 160 at a time does: `_add_rows`' fixed numpy and SQL steps), and a search
        pays for at most `batch` rows, since every search brings the copy up to date."""
        with self._lock:
            self._behind += rows
            if self._behind < batch:
                return
        self.catch_up()

    @staticmethod
    def _rowids(con: sqlite3.Connection, keys: list[tuple[str, str]]) -> list[int]:
        by_space: dict[str, list[str]] = {}
        for space, doc_id in keys:
            by_space.setdefault(space, []).append(doc_id)
        found: list[int] = []
        for space, doc_ids in by_space.items():
            for part in _chunks(doc_ids):
                found += [r[0] for r in con.execute(
                    f"SELECT rowid FROM kw_docs WHERE space=? AND doc_id IN"
                    f" ({','.join('?' * len(part))})", (space, *part))]
        return found

    @staticmethod
    def _remove(con: sqlite3.Connection, rowids: list[int]) -> None:
        if rowids:
            con.executemany("DELETE FROM kw_fts WHERE rowid=?", [(r,) for r in rowids])
            con.executemany("DELETE FROM kw_docs WHERE rowid=?", [(r,) for r in rowids])

    @staticmethod
    def _log(con: sqlite3.Connection, rowids: Sequence[int]) -> None:
        if not rowids:
            return
        con.executemany("INSERT INTO kw_log(doc_rowid) VALUES (?)", [(r,) for r in rowids])
        top = con.execute("SELECT MAX(rev) FROM kw_log").fetchone()[0]
        if top % _LOG_PRUNE_EVERY < len(rowids):  # now and then, forget old entries
            con.execute("DELETE FROM kw_log WHERE rev <= ?", (top - _LOG_KEEP,))

    def keyword_search(self, space: str, query: str, k: int,
                       flt: SearchFilter = ACTIVE) -> list[Hit]:
        return self._search_terms(space, search_terms(query), k, flt)

    def _search_terms(self, space: str, terms: list[str], k: int,
                      flt: SearchFilter) -> list[Hit]:
        """BM25 over tokens already made (search_terms), none made again."""
        if not terms or k <= 0:
            return []
        # Ask for extra rows so excluded ids do not leave the result short.
        limit = k + len(flt.exclude_ids)
        con = self.db.connect()
        with self._lock:
            phrases = self._memory.phrases(terms)
            if phrases is not None:
                self._memory.refresh(con)
                rows = self._memory.search(space, phrases, flt, limit)
        if phrases is None:
            rows = self._search_sql(con, space, terms, flt, limit)
        hits = [Hit(doc_id, score) for doc_id, score in rows if doc_id not in flt.exclude_ids]
        return hits[:k]

    @staticmethod
    def _search_sql(con: sqlite3.Connection, space: str, terms: list[str], flt: SearchFilter,
                    limit: int) -> list[tuple[str, float]]:
        match = " OR ".join(f'"{t}"' for t in terms)
        where, params = _filter_sql(flt, "d")
        rows = con.execute(
            "SELECT d.doc_id, bm25(kw_fts) AS s FROM kw_fts JOIN kw_docs d"
            " ON d.rowid = kw_fts.rowid WHERE kw_fts MATCH ? AND d.space = ? "
            f"{where} ORDER BY s LIMIT ?",
            [match, space, *params, limit],
        ).fetchall()
        return [(r[0], -float(r[1])) for r in rows]

    def held_terms(self, space: str, terms: Sequence[str]) -> set[str]:
        """The terms some document of the space holds: a lookup each, in process, of the
        token as it is (tokenizing a stem again can change it: decis → deci)."""
        return {t for t in terms if self._search_terms(space, [t], 1, ACTIVE)}

    def count(self, space: str, flt: SearchFilter = ACTIVE) -> int:
        """Documents matching the filter, counted on the in-memory copy (a SQL count over a
        large space costs a recall tens of milliseconds per time layer)."""
        with self._lock:
            self._memory.refresh(self.db.connect())
            return self._memory.count(space, flt)


_PLAIN_PIECE = re.compile(r"[0-9a-z]+|[\u3400-\u4dbf\u4e00-\u9fff]+")


class _FtsTokens:
    """What FTS5's own tokenizer makes of a string, asked of FTS5 itself (an empty in-memory
    table with the same tokenizer, written and rolled back), and remembered."""

    def __init__(self) -> None:
        self._con = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._con.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
        self._con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        self.known: dict[str, tuple[str, ...]] = {}

    def learn(self, pieces: Iterable[str]) -> None:
        new = [p for p in set(pieces) if p not in self.known]
        # Lower-case ASCII letters and digits, and CJK ideographs, are token characters that
        # unicode61 neither folds nor splits: such a piece is its own token, no need to ask.
        plain = [p for p in new if _PLAIN_PIECE.fullmatch(p)]
        for piece in plain:
            self.known[piece] = (piece,)
        new = [p for p in new if p not in self.known]
        if not new:
            return
        out: dict[int, list[tuple[int, str]]] = {}
        self._con.execute("BEGIN")
        try:
            self._con.executemany("INSERT INTO t(rowid, x) VALUES (?,?)", enumerate(new, 1))
            for doc, term, offset in self._con.execute("SELECT doc, term, offset FROM v"):
                out.setdefault(doc, []).append((offset, term))
        finally:
            self._con.execute("ROLLBACK")
        for i, piece in enumerate(new, 1):
            self.known[piece] = tuple(t for _, t in sorted(out.get(i, ())))


_NO_SLOTS = np.zeros(0, np.int32)
_NO_SLOTS.flags.writeable = False


class _Posting:
    """Docs (slots) holding one token and how often, as numpy arrays; chunks added since the
    last read wait in `pending` and are joined on the next read."""

    __slots__ = ("pending", "slots", "tf")

    def __init__(self) -> None:
        # One shared empty array to start from (arrays() replaces it, never writes into it):
        # a new word is a new posting.
        self.slots = self.tf = _NO_SLOTS
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self.pending:
            self.slots = np.concatenate([self.slots, *(p[0] for p in self.pending)])
            self.tf = np.concatenate([self.tf, *(p[1] for p in self.pending)])
            self.pending = []
        return self.slots, self.tf


_K1, _B = 1.2, 0.75  # FTS5 bm25()'s constants
# Small writes (a PUT's rows) are kept as delta segments — the batch's (token, slot, tf)
# arrays as they are — instead of being spread over one posting per token: spreading costs a
# Python step per (token, row) pair (~20 µs a row, most of a PUT's catch-up), while a search
# reads a delta with one vectorised compare per query token. Deltas are folded into the
# postings, in bulk, once there are this many of them or this many pairs.
_MAX_DELTAS = 64
_MAX_DELTA_PAIRS = 16_384
_MEMORY_COLUMNS = ("SELECT f.rowid, d.space, d.doc_id, d.kind, d.start_ts, d.end_ts, d.status,"
                   " f.tokens FROM kw_fts f LEFT JOIN kw_docs d ON d.rowid = f.rowid")


class _KeywordMemory:
    """Every row of kw_fts (all spaces: bm25 statistics are over the whole table) as postings
    of FTS5's own tokens, with each doc's filter columns, refreshed from kw_log.

    `search` computes exactly what FTS5's bm25() computes (SQLite 3.40 fts5_aux.c), in the
    same floating-point order: per phrase idf = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6;
    score = Σ idf · tf·(k1+1) / (tf + k1·(1 - b + b·D/avgdl)), D = the row's token count,
    avgdl = all tokens / N. Ties are ordered by rowid, as SQLite's stable sort leaves them.
    """

    def __init__(self) -> None:
        self.tokens = _FtsTokens()
        self.rev = -1  # kw_log revision this copy reflects; -1 = not loaded
        self._reset()

    def _reset(self) -> None:
        self.slot_of: dict[int, int] = {}
        self.doc_ids: list[str | None] = []
        self.codes: dict[str, dict[str, int]] = {"space": {}, "kind": {}, "status": {}}
        cap = 1024
        self.rowid = np.zeros(cap, np.int64)
        self.space = np.zeros(cap, np.int32)
        self.kind = np.zeros(cap, np.int32)
        self.status = np.zeros(cap, np.int32)
        self.start = np.zeros(cap, np.float64)
        self.end = np.zeros(cap, np.float64)
        self.length = np.zeros(cap, np.float64)
        self.alive = np.zeros(cap, bool)
        self.token_id: dict[str, int] = {}  # FTS5 token → index into postings
        self.piece_id: dict[str, int] = {}  # piece of kw_fts.tokens → its one token's id, or -1
        self.postings: list[_Posting] = []
        self.deltas: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (token, slot, tf)
        self.delta_pairs = 0
        self._joined: tuple | None = None  # the deltas' arrays joined; None: not since a change
        self.n_rows = 0
        self.n_tokens = 0
        self.dead = 0

    @property
    def size(self) -> int:
        return len(self.doc_ids)

    # ------------------------------------------------------------ keeping up with SQLite
    def refresh(self, con: sqlite3.Connection) -> None:
        latest = con.execute("SELECT COALESCE(MAX(rev), 0) FROM kw_log").fetchone()[0]
        if latest == self.rev:
            return
        if 0 <= self.rev < latest and not (self.dead > 1000 and self.dead > self.n_rows):
            # Revs are contiguous (the newest entry is never pruned), so a missing first
            # entry means this copy fell behind the pruning: then it reloads in full.
            entries = con.execute("SELECT rev, doc_rowid FROM kw_log WHERE rev > ? AND rev <= ?"
                                  " ORDER BY rev", (self.rev, latest)).fetchall()
            if entries and entries[0][0] == self.rev + 1:
                changed = sorted({e[1] for e in entries})
                for rowid in changed:
                    self._drop(rowid)
                for part in _chunks(changed):
                    self._add_rows(con.execute(
                        f"{_MEMORY_COLUMNS} WHERE f.rowid IN ({','.join('?' * len(part))})",
                        part).fetchall())
                self.rev = latest
                return
        # First use, too far behind, too many dead slots, or a log that went backwards (a new
        # database file): load everything. Rows written after `latest` may be read here too;
        # their log entries replay them later, which drops and re-adds them.
        self._reset()
        cursor = con.execute(f"{_MEMORY_COLUMNS} ORDER BY f.rowid")
        while rows := cursor.fetchmany(20_000):
            self._add_rows(rows)
        self.rev = latest

    def _drop(self, rowid: int) -> None:
        slot = self.slot_of.pop(rowid, None)
        if slot is None:
            return
        self.alive[slot] = False
        self.n_rows -= 1
        self.n_tokens -= int(self.length[slot])
        self.dead += 1

    def _code(self, column: str, value: str) -> int:
        codes = self.codes[column]
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(codes)
        return code

    def _grow(self, need: int) -> None:
        cap = self.rowid.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap * 2)
        for name in ("rowid", "space", "kind", "status", "start", "end", "length", "alive"):
            old = getattr(self, name)
            grown = np.zeros(new_cap, old.dtype)
            grown[:cap] = old
            setattr(self, name, grown)

    def _token(self, token: str) -> int:
        tid = self.token_id.get(token)
        if tid is None:
            tid = self.token_id[token] = len(self.postings)
            self.postings.append(_Posting())
        return tid

    def _add_rows(self, rows: list) -> None:
        """Rows of _MEMORY_COLUMNS; each gets a new slot. Postings are built in bulk: every
        (token, row) pair counted with numpy instead of per-token Python work."""
        if not rows:
            return
        for r in rows:
            self._drop(r[0])  # a rowid listed twice in one refresh
        texts = [r[7] for r in rows]
        # One split of everything (no list per row): the same pieces, row by row.
        flat = " ".join(texts).split(" ")
        per_row = [t.count(" ") + 1 for t in texts]
        piece_id, known = self.piece_id, self.tokens.known
        new = [p for p in set(flat) if p not in piece_id]
        self.tokens.learn(new)
        for piece in new:  # -1: a piece FTS5 splits further (or drops); handled below
            tokens = known[piece]
            piece_id[piece] = self._token(tokens[0]) if len(tokens) == 1 else -1
        n = len(rows)
        tids = np.fromiter(map(piece_id.__getitem__, flat), np.int64, count=len(flat))
        row_of = np.repeat(np.arange(n, dtype=np.int64), per_row)
        odd = np.flatnonzero(tids < 0)
        if odd.size:
            more = [(self._token(t), row_of[i]) for i in odd.tolist() for t in known[flat[i]]]
            keep = tids >= 0
            tids = np.concatenate([tids[keep], np.asarray([m[0] for m in more], np.int64)])
            row_of = np.concatenate([row_of[keep], np.asarray([m[1] for m in more], np.int64)])
        base = self.size
        self._grow(base + n)
        slots = slice(base, base + n)
        lengths = np.bincount(row_of, minlength=n)
        self.length[slots] = lengths
        self.alive[slots] = True
        self.rowid[slots] = [r[0] for r in rows]
        code = self._code
        self.space[slots] = [-1 if r[1] is None else code("space", r[1]) for r in rows]
        # An FTS row without kw_docs (space -1) still counts for bm25 but is never returned.
        self.kind[slots] = [0 if r[1] is None else code("kind", r[3]) for r in rows]
        self.status[slots] = [0 if r[1] is None else code("status", r[6]) for r in rows]
        self.start[slots] = [0.0 if r[1] is None else r[4] for r in rows]
        self.end[slots] = [0.0 if r[1] is None else r[5] for r in rows]
        self.doc_ids.extend(r[2] for r in rows)
        self.slot_of.update((r[0], base + j) for j, r in enumerate(rows))
        self.n_rows += n
        self.n_tokens += int(lengths.sum())
        if tids.size:
            pairs, tf = np.unique(tids * n + row_of, return_counts=True)
            tok, row = pairs // n, (pairs % n + base).astype(np.int32)
            self.deltas.append((tok, row, tf.astype(np.int32)))
            self.delta_pairs += tok.size
            self._joined = None
            if len(self.deltas) >= _MAX_DELTAS or self.delta_pairs >= _MAX_DELTA_PAIRS:
                self._fold_deltas()

    def _fold_deltas(self) -> None:
        """Spread the delta segments over the postings: one chunk per token, slots in the
        order they were added (postings never hold a slot twice: a rewritten row gets a new
        slot)."""
        if not self.deltas:
            return
        tok = np.concatenate([d[0] for d in self.deltas])
        row = np.concatenate([d[1] for d in self.deltas])
        tf = np.concatenate([d[2] for d in self.deltas])
        self.deltas, self.delta_pairs, self._joined = [], 0, None
        order = np.lexsort((row, tok))
        tok, row, tf = tok[order], row[order], tf[order]
        cuts = np.flatnonzero(np.diff(tok)) + 1
        postings = self.postings
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(tok)], strict=True):
            postings[int(tok[lo])].pending.append((row[lo:hi], tf[lo:hi]))

    def _posting(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """A token's slots and term frequencies: its posting plus its pairs in the deltas
        (all deltas joined once per change, so a query token costs one compare)."""
        slots, tf = self.postings[tid].arrays()
        if not self.deltas:
            return slots, tf
        if self._joined is None:
            self._joined = tuple(np.concatenate([d[i] for d in self.deltas]) for i in range(3))
        tok, row, freq = self._joined
        hit = tok == tid
        if not hit.any():
            return slots, tf
        return np.concatenate([slots, row[hit]]), np.concatenate([tf, freq[hit]])

    # ------------------------------------------------------------ search
    def phrases(self, terms: list[str]) -> list[str] | None:
        """FTS5's token for each query term, or None when one would be a multi-token phrase
        (or no token at all) and only FTS5 itself should answer."""
        self.tokens.learn(terms)
        out = []
        for term in terms:
            tokens = self.tokens.known[term]
            if len(tokens) != 1:
                return None
            out.append(tokens[0])
        return out

    def search(self, space: str, phrases: list[str], flt: SearchFilter,
               limit: int) -> list[tuple[str, float]]:
        space_code = self.codes["space"].get(space)
        if space_code is None or self.n_rows == 0 or limit <= 0:
            return []
        n_rows, avgdl = self.n_rows, self.n_tokens / self.n_rows
        matched = []
        for token in phrases:
            tid = self.token_id.get(token)
            if tid is None:
                continue
            slots, counts = self._posting(tid)
            live = self.alive[slots]
            if not live.all():
                slots, counts = slots[live], counts[live]
            tf = counts.astype(np.float64)  # bm25() counts in doubles
            n_hit = len(slots)
            if n_hit:
                idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
                matched.append((slots, tf, idf if idf > 0.0 else 1e-6))
        if not matched:
            return []
        # Only this space's documents are scored (idf above still counts every space, as
        # FTS5 does): a small space is not slowed down by a large one beside it.
        parts = []
        for slots, tf, idf in matched:  # phrase by phrase, as bm25() sums them
            mine = self.space[slots] == space_code
            slots, tf = slots[mine], tf[mine]
            length = self.length[slots]
            parts.append((slots, idf * ((tf * (_K1 + 1.0))
                                        / (tf + _K1 * (1 - _B + _B * length / avgdl)))))
        cand, inverse = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
        if cand.size == 0:
            return []
        score = np.zeros(cand.size, np.float64)
        at = 0
        for slots, contribution in parts:  # a slot is in a posting once: plain fancy adds
            score[inverse[at:at + slots.size]] += contribution
            at += slots.size
        keep = self._allowed("kind", flt.kinds)[self.kind[cand]]
        keep &= self._allowed("status", flt.statuses)[self.status[cand]]
        if flt.end is not None:
            keep &= self.start[cand] < flt.end
        if flt.start is not None:
            keep &= self.end[cand] > flt.start
        cand, score = cand[keep], score[keep]
        if cand.size == 0:
            return []
        neg = -score  # bm25() itself: ascending is best first
        if cand.size > limit:  # everything tied with the limit-th best, then sort those
            bound = np.partition(neg, limit - 1)[limit - 1]
            near = neg <= bound
            cand, neg = cand[near], neg[near]
        order = np.lexsort((self.rowid[cand], neg))[:limit]
        return [(self.doc_ids[s], float(-n)) for s, n in zip(cand[order].tolist(),
                                                             neg[order].tolist(), strict=True)]

    def count(self, space: str, flt: SearchFilter) -> int:
        space_code = self.codes["space"].get(space)
        if space_code is None:
            return 0
        n = self.size
        keep = self.alive[:n] & (self.space[:n] == space_code)
        keep &= self._allowed("kind", flt.kinds)[self.kind[:n]]
        keep &= self._allowed("status", flt.statuses)[self.status[:n]]
        if flt.end is not None:
            keep &= self.start[:n] < flt.end
        if flt.start is not None:
            keep &= self.end[:n] > flt.start
        total = int(keep.sum())
        if flt.exclude_ids:
            ids = self.doc_ids
            total -= sum(1 for s in np.flatnonzero(keep).tolist() if ids[s] in flt.exclude_ids)
        return total

    def _allowed(self, column: str, values: Sequence[str]) -> np.ndarray:
        codes = self.codes[column]
        lut = np.zeros(len(codes) + 1, bool)
        for value in values:
            if value in codes:
                lut[codes[value]] = True
        return lut


_STATUS_CODES = {"active": 0, "archived": 1, "superseded": 2}
_KIND_CODES = {"event": 0, "message": 1}
_DELETED = 255


def _lookup(codes: Sequence[int]) -> np.ndarray:
    """A uint8 code → allowed table: `table[codes_array]` is np.isin without the sort."""
    table = np.zeros(256, bool)
    table[list(codes)] = True
    return table


@dataclass
class _SpaceMatrix:
    """Vectors of one space held in memory, refreshed from SQLite by revision number."""

    dim: int
    rev: int = -1
    ids: list[str] = field(default_factory=list)
    pos: dict[str, int] = field(default_factory=dict)
    vecs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    start: np.ndarray = field(default_factory=lambda: np.zeros(0))
    end: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kind: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    status: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))

    def __post_init__(self) -> None:
        self.vecs = np.zeros((0, self.dim), np.float32)

    @property
    def size(self) -> int:
        return len(self.ids)

    def _grow(self, need: int) -> None:
        cap = self.vecs.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap * 2, 1024)

        def grow(a: np.ndarray, fill: float = 0) -> np.ndarray:
            out = np.full((new_cap, *a.shape[1:]), fill, a.dtype)
            out[:cap] = a
            return out

        self.vecs, self.start, self.end = grow(self.vecs), grow(self.start), grow(self.end)
        self.kind, self.status = grow(self.kind), grow(self.status, _DELETED)

    def apply(self, rows: list) -> None:
        """Rows (doc_id, kind, start_ts, end_ts, status, vec, rev) in rev order, one per doc."""
        if not rows:
            return
        new_ids = [r[0] for r in rows if r[0] not in self.pos]
        self._grow(self.size + len(new_ids))
        at, blobs, starts, ends, kinds, statuses = [], [], [], [], [], []
        for doc_id, kind, start, end, status, vec, _ in rows:
            i = self.pos.get(doc_id)
            if i is None:
                i = self.size
                self.ids.append(doc_id)
                self.pos[doc_id] = i
            if vec is None:
                self.status[i] = _DELETED
                continue
            at.append(i)
            blobs.append(vec)
            starts.append(start)
            ends.append(end)
            kinds.append(_KIND_CODES[kind])
            statuses.append(_STATUS_CODES[status])
        if at:
            self.vecs[at] = np.frombuffer(b"".join(blobs), np.float32).reshape(len(at), self.dim)
            self.start[at], self.end[at] = starts, ends
            self.kind[at], self.status[at] = kinds, statuses
        self.rev = max(self.rev, max(r[6] for r in rows))


class NumpyVectorIndex:
    """Exact cosine search. Vectors persist in SQLite; each space's matrix is cached in memory
    and refreshed incrementally when another writer (thread or process) bumps its revision."""

    def __init__(self, db: SQLiteDB, dim: int):
        self.db = db
        self.dim = dim
        self._cache: dict[str, _SpaceMatrix] = {}
        self._lock = threading.Lock()
        db.migrate(VECTOR_MIGRATIONS)

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        for doc in docs:
            if doc.vector is None or len(doc.vector) != self.dim:
                raise ValueError(f"{doc.id}: vector of dimension {self.dim} required")
        if not docs:
            return
        # float32 rows via array('f'): the same rounding as np.asarray(..., float32), faster.
        vecs = np.frombuffer(b"".join(array("f", doc.vector) for doc in docs),
                             np.float32).reshape(len(docs), self.dim)
        # Each row divided by its own norm exactly as np.linalg.norm computes it for one
        # vector (sqrt of x·x in float32), so stored bytes match a one-by-one upsert.
        norms = np.asarray([max(float(np.sqrt(v.dot(v))), 1e-12) for v in vecs], np.float32)
        vecs = vecs / norms[:, None]
        self._write([(doc.space, doc.id, doc.kind, doc.start, doc.end, doc.status, v.tobytes())
                     for doc, v in zip(docs, vecs, strict=True)])

    def delete(self, space: str, ids: Sequence[str]) -> None:
        self._write([(space, i, "event", 0.0, 0.0, "active", None) for i in ids])

    def _write(self, rows: list[tuple]) -> None:
        if not rows:
            return
        with self.db.tx() as con:
            rev = con.execute("SELECT rev FROM vec_rev WHERE id = 0").fetchone()[0]
            con.executemany(
                "INSERT OR REPLACE INTO vec_docs VALUES (?,?,?,?,?,?,?,?)",
                [(*row, rev + 1 + n) for n, row in enumerate(rows)],
            )
            con.execute("UPDATE vec_rev SET rev = ? WHERE id = 0", (rev + len(rows),))
        for space in {row[0] for row in rows} & set(self._cache):
            self._matrix(space)  # the writer's thread applies its rows, not the next search

    def _matrix(self, space: str) -> _SpaceMatrix:
        con = self.db.connect()
        latest = con.execute("SELECT MAX(rev) FROM vec_docs WHERE space=?", (space,)).fetchone()[0]
        with self._lock:
            m = self._cache.setdefault(space, _SpaceMatrix(self.dim))
            if latest is not None and latest > m.rev:
                rows = con.execute(
                    "SELECT doc_id, kind, start_ts, end_ts, status, vec, rev FROM vec_docs"
                    " WHERE space=? AND rev>? ORDER BY rev", (space, m.rev),
                ).fetchall()
                m.apply(rows)
            return m

    def vector_search(self, space: str, vector: np.ndarray, k: int,
                      flt: SearchFilter = ACTIVE) -> list[Hit]:
        m = self._matrix(space)
        n = m.size
        if n == 0 or k <= 0:
            return []
        scores = m.vecs[:n] @ np.asarray(vector, np.float32)
        mask = _lookup([_KIND_CODES[x] for x in flt.kinds])[m.kind[:n]]
        mask &= _lookup([_STATUS_CODES[x] for x in flt.statuses])[m.status[:n]]
        if flt.start is not None:
            mask &= m.end[:n] > flt.start
        if flt.end is not None:
            mask &= m.start[:n] < flt.end
        for doc_id in flt.exclude_ids:
            i = m.pos.get(doc_id)
            if i is not None:
                mask[i] = False
        candidates = np.flatnonzero(mask)
        if candidates.size == 0:
            return []
        sub = scores[candidates]
        top = min(k, sub.size)
        best = np.argpartition(-sub, top - 1)[:top]
        best = best[np.argsort(-sub[best], kind="stable")]
        return [Hit(m.ids[candidates[i]], float(sub[i])) for i in best]

    def count(self, space: str, flt: SearchFilter = ACTIVE) -> int:
        m = self._matrix(space)
        return int(np.sum(m.status[: m.size] != _DELETED))

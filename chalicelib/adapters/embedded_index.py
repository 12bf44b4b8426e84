"""Embedded search indexes: SQLite FTS5 for keywords, exact numpy cosine for vectors.

Both live in the same SQLite file as the store. The keyword index receives text already
tokenized by `chalicelib.textproc` (the contract shared with OpenSearch), so FTS5's own
tokenizer only has to split on the spaces we put in.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..models import IndexDoc
from ..ports import ACTIVE, Hit, SearchFilter
from ..textproc import index_text, query_terms
from .sqlite_db import SQLiteDB

KEYWORD_MIGRATIONS = [
    (
        "keyword-001-fts5",
        [
            """CREATE TABLE kw_docs (
                rowid INTEGER PRIMARY KEY, space TEXT NOT NULL, doc_id TEXT NOT NULL,
                kind TEXT NOT NULL, start_ts REAL NOT NULL, end_ts REAL NOT NULL,
                status TEXT NOT NULL, UNIQUE (space, doc_id))""",
            "CREATE VIRTUAL TABLE kw_fts USING fts5(tokens, tokenize='unicode61 remove_diacritics 0')",
        ],
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
]


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
    def __init__(self, db: SQLiteDB):
        self.db = db
        db.migrate(KEYWORD_MIGRATIONS)

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        with self.db.tx() as con:
            for doc in docs:
                row = con.execute("SELECT rowid FROM kw_docs WHERE space=? AND doc_id=?",
                                  (doc.space, doc.id)).fetchone()
                if row is not None:
                    con.execute("DELETE FROM kw_fts WHERE rowid=?", (row[0],))
                    con.execute("DELETE FROM kw_docs WHERE rowid=?", (row[0],))
                cur = con.execute(
                    "INSERT INTO kw_docs(space, doc_id, kind, start_ts, end_ts, status)"
                    " VALUES (?,?,?,?,?,?)",
                    (doc.space, doc.id, doc.kind, doc.start, doc.end, doc.status),
                )
                con.execute("INSERT INTO kw_fts(rowid, tokens) VALUES (?,?)",
                            (cur.lastrowid, index_text(doc.text)))

    def delete(self, space: str, ids: Sequence[str]) -> None:
        with self.db.tx() as con:
            for doc_id in ids:
                row = con.execute("SELECT rowid FROM kw_docs WHERE space=? AND doc_id=?",
                                  (space, doc_id)).fetchone()
                if row is not None:
                    con.execute("DELETE FROM kw_fts WHERE rowid=?", (row[0],))
                    con.execute("DELETE FROM kw_docs WHERE rowid=?", (row[0],))

    def keyword_search(self, space: str, query: str, k: int,
                       flt: SearchFilter = ACTIVE) -> list[Hit]:
        terms = query_terms(query)
        if not terms or k <= 0:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        where, params = _filter_sql(flt, "d")
        # Ask for extra rows so excluded ids do not leave the result short.
        rows = self.db.connect().execute(
            "SELECT d.doc_id, bm25(kw_fts) AS s FROM kw_fts JOIN kw_docs d"
            " ON d.rowid = kw_fts.rowid WHERE kw_fts MATCH ? AND d.space = ? "
            f"{where} ORDER BY s LIMIT ?",
            [match, space, *params, k + len(flt.exclude_ids)],
        ).fetchall()
        hits = [Hit(r[0], -float(r[1])) for r in rows if r[0] not in flt.exclude_ids]
        return hits[:k]

    def count(self, space: str, flt: SearchFilter = ACTIVE) -> int:
        where, params = _filter_sql(flt, "d")
        if flt.exclude_ids:
            where += f" AND d.doc_id NOT IN ({','.join('?' * len(flt.exclude_ids))})"
            params += sorted(flt.exclude_ids)
        row = self.db.connect().execute(
            f"SELECT COUNT(*) FROM kw_docs d WHERE d.space = ? {where}", [space, *params]
        ).fetchone()
        return int(row[0])


_STATUS_CODES = {"active": 0, "archived": 1, "superseded": 2}
_KIND_CODES = {"event": 0, "message": 1}
_DELETED = 255


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
        new_ids = [r["doc_id"] for r in rows if r["doc_id"] not in self.pos]
        self._grow(self.size + len(new_ids))
        for r in rows:
            i = self.pos.get(r["doc_id"])
            if i is None:
                i = self.size
                self.ids.append(r["doc_id"])
                self.pos[r["doc_id"]] = i
            if r["vec"] is None:
                self.status[i] = _DELETED
                continue
            self.vecs[i] = np.frombuffer(r["vec"], np.float32)
            self.start[i], self.end[i] = r["start_ts"], r["end_ts"]
            self.kind[i] = _KIND_CODES[r["kind"]]
            self.status[i] = _STATUS_CODES[r["status"]]
            self.rev = max(self.rev, r["rev"])
        if rows:
            self.rev = max(self.rev, max(r["rev"] for r in rows))


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
        rows = []
        for doc in docs:
            if doc.vector is None or len(doc.vector) != self.dim:
                raise ValueError(f"{doc.id}: vector of dimension {self.dim} required")
            vec = np.asarray(doc.vector, np.float32)
            vec = vec / max(float(np.linalg.norm(vec)), 1e-12)
            rows.append((doc.space, doc.id, doc.kind, doc.start, doc.end, doc.status,
                         vec.tobytes()))
        self._write(rows)

    def delete(self, space: str, ids: Sequence[str]) -> None:
        self._write([(space, i, "event", 0.0, 0.0, "active", None) for i in ids])

    def _write(self, rows: list[tuple]) -> None:
        if not rows:
            return
        with self.db.tx() as con:
            rev = con.execute("SELECT COALESCE(MAX(rev), 0) FROM vec_docs").fetchone()[0]
            con.executemany(
                "INSERT OR REPLACE INTO vec_docs VALUES (?,?,?,?,?,?,?,?)",
                [(*row, rev + 1 + n) for n, row in enumerate(rows)],
            )

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
        mask = np.isin(m.kind[:n], [_KIND_CODES[x] for x in flt.kinds])
        mask &= np.isin(m.status[:n], [_STATUS_CODES[x] for x in flt.statuses])
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

"""The indexing outbox of the embedded backend (the IndexOutbox port).

A trigger on `messages` queues every stored or changed message twice — once per lane — in the
same transaction as the message, in SQL: nothing is lost on a crash, and every process using
the file (the server, the CLI) sees the same queues. The store writes with INSERT OR REPLACE,
which fires INSERT triggers only (SQLite runs no UPDATE trigger for a REPLACE), so one trigger
covers new and changed messages; an unchanged message is not written at all.

Two tables rather than one with per-lane flags: each lane deletes what it has done, so neither
ever reads past the other's backlog (the vector lane can be hours behind during an import), and
the trigger's two plain inserts cost less than one insert plus two partial indexes (measured).
`vector_queue` is indexed by space so a recall can count what is not embedded yet in its space.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.ports import Freshness, Lane, OutboxEntry

OUTBOX_MIGRATIONS = [
    (
        "outbox-001-messages",
        [
            """CREATE TABLE index_outbox (
                id INTEGER PRIMARY KEY, space TEXT NOT NULL,
                session TEXT NOT NULL, seq INTEGER NOT NULL)""",
            """CREATE TRIGGER index_outbox_insert AFTER INSERT ON messages BEGIN
                INSERT INTO index_outbox (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq); END""",
        ],
    ),
    (
        # One queue per lane. Whatever the single queue held goes to both.
        "outbox-002-lanes",
        [
            "CREATE TABLE keyword_queue (id INTEGER PRIMARY KEY, space TEXT NOT NULL,"
            " session TEXT NOT NULL, seq INTEGER NOT NULL)",
            "CREATE TABLE vector_queue (id INTEGER PRIMARY KEY, space TEXT NOT NULL,"
            " session TEXT NOT NULL, seq INTEGER NOT NULL)",
            "CREATE INDEX vector_queue_space ON vector_queue (space)",
            "INSERT INTO keyword_queue (space, session, seq)"
            " SELECT space, session, seq FROM index_outbox ORDER BY id",
            "INSERT INTO vector_queue (space, session, seq)"
            " SELECT space, session, seq FROM index_outbox ORDER BY id",
            "DROP TRIGGER IF EXISTS index_outbox_insert",
            "DROP TRIGGER IF EXISTS index_outbox_update",
            "DROP TABLE index_outbox",
            """CREATE TRIGGER index_queues_insert AFTER INSERT ON messages BEGIN
                INSERT INTO keyword_queue (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq);
                INSERT INTO vector_queue (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq); END""",
        ],
    ),
    (
        # AUTOINCREMENT: an id is never handed out twice. Without it an emptied queue starts
        # again at 1, and a drainer that took entries before another emptied the queue would,
        # on finishing, remove newer entries that reuse those ids (found by bench load
        # --mixed: ~0.8% of acknowledged messages never reached the keyword index).
        "outbox-003-monotonic-ids",
        [
            "DROP TRIGGER IF EXISTS index_queues_insert",  # before a rename rewrites it
            *(statement for table in ("keyword_queue", "vector_queue") for statement in (
                f"ALTER TABLE {table} RENAME TO {table}_old",
                f"CREATE TABLE {table} (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                " space TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL)",
                f"INSERT INTO {table} SELECT * FROM {table}_old ORDER BY id",
                f"DROP TABLE {table}_old")),
            "CREATE INDEX IF NOT EXISTS vector_queue_space ON vector_queue (space)",
            """CREATE TRIGGER index_queues_insert AFTER INSERT ON messages BEGIN
                INSERT INTO keyword_queue (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq);
                INSERT INTO vector_queue (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq); END""",
        ],
    ),
]

_TABLE = {"keyword": "keyword_queue", "vector": "vector_queue"}
_CHUNK = 500


class SqliteOutbox:
    def __init__(self, db: SQLiteDB):
        self.db = db
        db.migrate(OUTBOX_MIGRATIONS)

    def take(self, lane: Lane, limit: int, space: str | None = None) -> list[OutboxEntry]:
        table = _TABLE[lane]
        if space is None:
            sql, params = f"SELECT id, space, session, seq FROM {table} ORDER BY id LIMIT ?", (
                limit,)
        else:
            sql = f"SELECT id, space, session, seq FROM {table} WHERE space = ? ORDER BY id LIMIT ?"
            params = (space, limit)
        rows = self.db.connect().execute(sql, params).fetchall()
        return [OutboxEntry(r[0], r[1], r[2], r[3]) for r in rows]

    def done(self, lane: Lane, ids: Sequence[int]) -> None:
        table = _TABLE[lane]
        with self.db.tx() as con:
            for i in range(0, len(ids), _CHUNK):
                part = list(ids[i:i + _CHUNK])
                con.execute(f"DELETE FROM {table} WHERE id IN ({','.join('?' * len(part))})",
                            part)

    def pending(self, space: str | None = None) -> Freshness:
        con = self.db.connect()
        counts = []
        for table in _TABLE.values():
            if space is None:
                counts.append(con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            else:
                counts.append(con.execute(f"SELECT COUNT(*) FROM {table} WHERE space = ?",
                                          (space,)).fetchone()[0])
        return Freshness(keyword_pending=int(counts[0]), vector_pending=int(counts[1]))

    def backlog(self, lane: Lane) -> int:
        """An upper bound of the entries queued in a lane, all spaces, read from the ends of
        the primary key (no count: writers ask before every batch)."""
        table = _TABLE[lane]  # two subqueries: SQLite reads each end of the key directly
        top, low = self.db.connect().execute(
            f"SELECT (SELECT MAX(id) FROM {table}), (SELECT MIN(id) FROM {table})").fetchone()
        return 0 if top is None else int(top - low + 1)

    @staticmethod
    def exists(db: SQLiteDB) -> bool:
        return db.connect().execute(
            "SELECT 1 FROM sqlite_master WHERE name IN ('keyword_queue', 'index_outbox')"
        ).fetchone() is not None

    @staticmethod
    def drop(db: SQLiteDB) -> None:
        """Remove the queues and their trigger (switching to inline indexing); the migrations
        create them again if background indexing comes back."""
        with db.tx() as con:
            for trigger in ("index_queues_insert", "index_outbox_insert", "index_outbox_update"):
                con.execute(f"DROP TRIGGER IF EXISTS {trigger}")
            for table in ("keyword_queue", "vector_queue", "index_outbox"):
                con.execute(f"DROP TABLE IF EXISTS {table}")
            con.execute("DELETE FROM schema_migrations WHERE name LIKE 'outbox-%'")

    # ------------------------------------------------------------ for the ingest writer
    @staticmethod
    def keyword_mark(con: sqlite3.Connection) -> int:
        """The newest keyword entry id, read inside a write transaction: every entry above it
        at commit time was queued by that same transaction (writers are serialised)."""
        return con.execute("SELECT COALESCE(MAX(id), 0) FROM keyword_queue").fetchone()[0]

    @staticmethod
    def unqueue_keywords(con: sqlite3.Connection, mark: int) -> None:
        """Drop the keyword entries queued after `mark` by the caller's transaction, which
        wrote their keyword rows itself."""
        con.execute("DELETE FROM keyword_queue WHERE id > ?", (mark,))

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

Fair across spaces, the vector lane: `take` without a space fills its batch round-robin over
the spaces that have entries — the oldest entry of each in turn, then the next oldest —
starting after the space the caller served last (`after`), in name order. A space with one
new message is in the next batch however many another space has queued (a 6,000-message
PUT), as long as at most `limit` spaces have entries; with more, it is served within
⌈spaces / limit⌉ batches. The index on space holds the rowid (`id`), so it is an index on
(space, id): each space's oldest entries and the next space by name are index seeks,
whatever the backlog (a batch of 32 from 200,000 queued entries: ~0.3 ms).

The keyword lane stays oldest first: a PUT writes its own keyword rows in its transaction,
so no new message waits in that queue; it holds only what other writers left (a data dir
from before, another program), and a recall catches up its own space's entries within its
budget. An index on space there would cost every PUT's trigger ~2.5 µs a message (measured:
26 vs 23.5 µs for the trigger's insert-and-unqueue), ~2% of a PUT, for no one waiting.
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

    def take(self, lane: Lane, limit: int, space: str | None = None,
             after: str | None = None) -> list[OutboxEntry]:
        """The oldest entries of `space`; without one, in the vector lane a batch shared
        fairly by the spaces with entries, starting with the first space after `after` (the
        module docstring), in the keyword lane the oldest entries of all.
        Round-robin order: each served space's oldest entry, in the order the spaces were
        served, then their next ones — so the last new space in it is the one served last."""
        table = _TABLE[lane]
        con = self.db.connect()
        if space is not None:
            rows = con.execute(f"SELECT id, space, session, seq FROM {table} WHERE space = ?"
                               " ORDER BY id LIMIT ?", (space, limit)).fetchall()
            return [OutboxEntry(*r) for r in rows]
        if lane == "keyword":  # oldest first (the module docstring)
            rows = con.execute(f"SELECT id, space, session, seq FROM {table} ORDER BY id"
                               " LIMIT ?", (limit,)).fetchall()
            return [OutboxEntry(*r) for r in rows]
        if limit <= 0:
            return []
        return self._fair(con, table, self._spaces(con, table, after, limit), limit)

    @staticmethod
    def _spaces(con: sqlite3.Connection, table: str, after: str | None,
                limit: int) -> list[str]:
        """Up to `limit` spaces with entries, in name order from the first after `after`,
        wrapping round: one index seek per space (a recursive MIN over the space index)."""
        walk = (f"WITH RECURSIVE s(space) AS (SELECT (SELECT MIN(space) FROM {table}{{first}})"
                f" UNION ALL SELECT (SELECT MIN(space) FROM {table} WHERE space > s.space)"
                " FROM s WHERE s.space IS NOT NULL LIMIT ?)"
                " SELECT space FROM s WHERE space IS NOT NULL")
        spaces: list[str] = []
        if after is not None:
            spaces = [r[0] for r in con.execute(walk.format(first=" WHERE space > ?"),
                                                (after, limit + 1))][:limit]
        if len(spaces) < limit:  # round again from the first name, up to `after` itself
            for (name,) in con.execute(walk.format(first=""), (limit + 1,)):
                if (after is not None and name > after) or len(spaces) >= limit:
                    break
                spaces.append(name)
        return spaces

    @staticmethod
    def _fair(con: sqlite3.Connection, table: str, spaces: list[str],
              limit: int) -> list[OutboxEntry]:
        """Share `limit` among `spaces` evenly; what a space lacks goes to the others
        (water-filling: each round asks every space that had all it asked for again)."""
        taken: dict[str, list[tuple]] = {s: [] for s in spaces}
        room, open_ = limit, list(spaces)
        sql = (f"SELECT id, space, session, seq FROM {table} WHERE space = ? AND id > ?"
               " ORDER BY id LIMIT ?")
        while room > 0 and open_:
            share = max(1, room // len(open_))
            still: list[str] = []
            for name in open_:
                if room <= 0:
                    break
                ask = min(share, room)
                last = taken[name][-1][0] if taken[name] else 0
                rows = con.execute(sql, (name, last, ask)).fetchall()
                taken[name] += rows
                room -= len(rows)
                if len(rows) == ask:
                    still.append(name)
            open_ = still
        deepest = max((len(rows) for rows in taken.values()), default=0)
        return [OutboxEntry(*taken[name][rank]) for rank in range(deepest)
                for name in spaces if rank < len(taken[name])]

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

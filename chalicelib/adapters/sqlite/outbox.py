"""The indexing outbox of the embedded backend (the IndexOutbox port).

A trigger on `messages` records every stored or changed message in `index_outbox`, in the same
transaction as the message, in SQL: nothing is lost on a crash, and every process using the
file (the server, the CLI) sees the same queue. The store writes with INSERT OR REPLACE, which
fires INSERT triggers only (SQLite runs no UPDATE trigger for a REPLACE), so one trigger
covers new and changed messages; an unchanged message is not written at all.

Each entry is done per lane (keyword, vector) and leaves the queue when both are. Two partial
indexes hold only the entries still pending in a lane, so a recall finds its own space's
pending keyword entries, and counts what is pending, without reading the (possibly long)
vector backlog.
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.ports import Freshness, Lane, OutboxEntry

OUTBOX_MIGRATIONS = [
    (
        "outbox-001-messages",
        [
            # No AUTOINCREMENT: a new id is max(id) + 1, above every entry a drainer has read
            # and not yet deleted, and it spares a sqlite_sequence write per message.
            """CREATE TABLE index_outbox (
                id INTEGER PRIMARY KEY, space TEXT NOT NULL,
                session TEXT NOT NULL, seq INTEGER NOT NULL)""",
            """CREATE TRIGGER index_outbox_insert AFTER INSERT ON messages BEGIN
                INSERT INTO index_outbox (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq); END""",
            # Never fired (see above); dropped by outbox-002.
            """CREATE TRIGGER index_outbox_update AFTER UPDATE OF content_hash ON messages
                WHEN NEW.content_hash IS NOT OLD.content_hash BEGIN
                INSERT INTO index_outbox (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq); END""",
        ],
    ),
    (
        "outbox-002-lanes",
        [
            "DROP TRIGGER IF EXISTS index_outbox_update",
            "ALTER TABLE index_outbox ADD COLUMN keyword_done INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE index_outbox ADD COLUMN vector_done INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX outbox_keyword ON index_outbox (space, id) WHERE keyword_done = 0",
            "CREATE INDEX outbox_vector ON index_outbox (space, id) WHERE vector_done = 0",
        ],
    ),
]

_FLAG = {"keyword": "keyword_done", "vector": "vector_done"}
_INDEX = {"keyword": "outbox_keyword", "vector": "outbox_vector"}
_CHUNK = 500


class SqliteOutbox:
    def __init__(self, db: SQLiteDB):
        self.db = db
        db.migrate(OUTBOX_MIGRATIONS)

    def take(self, lane: Lane, limit: int, space: str | None = None) -> list[OutboxEntry]:
        flag = _FLAG[lane]
        if space is None:
            sql, params = (f"SELECT id, space, session, seq FROM index_outbox WHERE {flag} = 0"
                           " ORDER BY id LIMIT ?"), (limit,)
        else:
            sql = (f"SELECT id, space, session, seq FROM index_outbox INDEXED BY {_INDEX[lane]}"
                   f" WHERE space = ? AND {flag} = 0 ORDER BY id LIMIT ?")
            params = (space, limit)
        rows = self.db.connect().execute(sql, params).fetchall()
        return [OutboxEntry(r[0], r[1], r[2], r[3]) for r in rows]

    def done(self, lane: Lane, ids: Sequence[int]) -> None:
        flag = _FLAG[lane]
        with self.db.tx() as con:
            for i in range(0, len(ids), _CHUNK):
                part = list(ids[i:i + _CHUNK])
                marks = ",".join("?" * len(part))
                con.execute(f"UPDATE index_outbox SET {flag} = 1 WHERE id IN ({marks})", part)
                con.execute(f"DELETE FROM index_outbox WHERE id IN ({marks})"
                            " AND keyword_done = 1 AND vector_done = 1", part)

    def pending(self, space: str | None = None) -> Freshness:
        con = self.db.connect()
        counts = []
        for lane in ("keyword", "vector"):
            if space is None:
                sql, params = f"SELECT COUNT(*) FROM index_outbox WHERE {_FLAG[lane]} = 0", ()
            else:
                sql = (f"SELECT COUNT(*) FROM index_outbox INDEXED BY {_INDEX[lane]}"
                       f" WHERE space = ? AND {_FLAG[lane]} = 0")
                params = (space,)
            counts.append(int(con.execute(sql, params).fetchone()[0]))
        return Freshness(keyword_pending=counts[0], vector_pending=counts[1])

    @staticmethod
    def exists(db: SQLiteDB) -> bool:
        return db.connect().execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'index_outbox'").fetchone() is not None

    @staticmethod
    def drop(db: SQLiteDB) -> None:
        """Remove the queue and its trigger (switching to inline indexing); the migrations
        create them again if background indexing comes back."""
        with db.tx() as con:
            con.execute("DROP TRIGGER IF EXISTS index_outbox_insert")
            con.execute("DROP TRIGGER IF EXISTS index_outbox_update")
            con.execute("DROP TABLE IF EXISTS index_outbox")
            con.execute("DELETE FROM schema_migrations WHERE name LIKE 'outbox-%'")

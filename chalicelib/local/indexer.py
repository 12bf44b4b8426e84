"""Background message indexing for the embedded backend: the local twin of the AWS stream.

A message write is durable once its row is in SQLite; embedding it and writing the FTS5 and
vector rows is work that can follow. A trigger on the messages table records every insert and
content change in `index_outbox` — in the same transaction as the message, in SQL, so nothing
is lost on a crash and another process (the CLI, a second server) sees the same queue. A
daemon thread drains the outbox; `flush()` drains it in the caller before a search, so a
recall always sees every message stored before it (read-your-writes).

Why: ingest sits on the chat host's hot path. Writing the search rows inline costs ~7× the
message write itself (`annals bench load`), while a recall can afford to finish the queue.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.usecases.indexing import message_docs, prepare_docs, write_docs
from chalicelib.wiring import Services

log = logging.getLogger("annals.indexer")

OUTBOX_MIGRATIONS = [
    (
        "outbox-001-messages",
        [
            # No AUTOINCREMENT: a new id is max(id) + 1, which is always above every entry a
            # drainer has read and not yet deleted (so `DELETE … id <= top` never takes a
            # newer one), and it spares a sqlite_sequence write per message.
            """CREATE TABLE index_outbox (
                id INTEGER PRIMARY KEY, space TEXT NOT NULL,
                session TEXT NOT NULL, seq INTEGER NOT NULL)""",
            """CREATE TRIGGER index_outbox_insert AFTER INSERT ON messages BEGIN
                INSERT INTO index_outbox (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq); END""",
            """CREATE TRIGGER index_outbox_update AFTER UPDATE OF content_hash ON messages
                WHEN NEW.content_hash IS NOT OLD.content_hash BEGIN
                INSERT INTO index_outbox (space, session, seq)
                VALUES (NEW.space, NEW.session, NEW.seq); END""",
        ],
    ),
]

BATCH = 256


class OutboxIndexer:
    """Drains `index_outbox` into the keyword and vector indexes of `services`."""

    def __init__(self, services: Services, db: SQLiteDB, poll_seconds: float = 0.5):
        db.migrate(OUTBOX_MIGRATIONS)
        self.services = services
        self.db = db
        self.poll = poll_seconds
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- the queue

    def pending(self) -> int:
        return int(self.db.connect().execute("SELECT COUNT(*) FROM index_outbox").fetchone()[0])

    def notify(self) -> None:
        self._wake.set()

    def drain_once(self, limit: int = BATCH) -> int:
        """Index up to `limit` queued messages; returns how many entries were consumed."""
        rows = self.db.connect().execute(
            "SELECT id, space, session, seq FROM index_outbox ORDER BY id LIMIT ?", (limit,)
        ).fetchall()
        if not rows:
            return 0
        inline = replace(self.services, message_indexer=None, index_inline=True)
        store = self.services.store
        wanted = {(r["space"], r["session"], r["seq"]) for r in rows}
        messages = [m for key in sorted(wanted) if (m := store.get_message(*key)) is not None]
        # Embed and write before taking the entries off the queue: a failure retries later.
        write_docs(inline, prepare_docs(inline, message_docs(inline, messages)))
        top = max(r["id"] for r in rows)
        with self.db.tx() as con:
            con.execute("DELETE FROM index_outbox WHERE id <= ?", (top,))
        return len(rows)

    def flush(self) -> int:
        """Drain everything queued now (the caller waits). Returns the entries consumed."""
        total = 0
        with self._lock:
            while consumed := self.drain_once():
                total += consumed
        return total

    @staticmethod
    def retire(services: Services, db: SQLiteDB) -> int:
        """Switching to inline indexing: index what is still queued, then remove the queue
        and its triggers (the migration re-creates them if background mode comes back).
        Returns the entries drained."""
        con = db.connect()
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name='index_outbox'").fetchone():
            return 0
        drained = OutboxIndexer(services, db).flush()
        with db.tx() as tx:
            tx.execute("DROP TRIGGER IF EXISTS index_outbox_insert")
            tx.execute("DROP TRIGGER IF EXISTS index_outbox_update")
            tx.execute("DROP TABLE IF EXISTS index_outbox")
            tx.execute("DELETE FROM schema_migrations WHERE name = ?", (OUTBOX_MIGRATIONS[0][0],))
        return drained

    # -------------------------------------------------------------- the thread

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="annals-indexer",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.poll)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # keep the queue; the next tick (or a recall) retries
                log.exception("background indexing failed; will retry")

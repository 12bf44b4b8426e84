"""One SQLite database file shared by the embedded store and indexes.

A connection per thread (sqlite3 objects must not cross threads), WAL so readers never wait
for the writer, a busy timeout so concurrent writers queue instead of failing, and
`BEGIN IMMEDIATE` for write transactions so two writers cannot both read-then-write stale rows.
Migrations are a numbered list applied in order and recorded in PRAGMA user_version.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

# Every connection's settings (bench/load.py gives its raw-sqlite3 baseline the same ones).
# synchronous=NORMAL in WAL mode: a commit is not fsynced, the WAL is at checkpoints. A power
# cut can lose the last commits but never corrupts the file (SQLite's documented guarantee for
# WAL + NORMAL); an application crash loses nothing. cache_size, temp_store and mmap_size were
# measured too (bench/README.md): no gain worth a setting, so they stay at SQLite's defaults.
PRAGMAS = ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=30000", "foreign_keys=ON")


def private_file(path: Path) -> None:
    """The database holds every conversation: its folder is the owner's only (0700) and the
    file 0600 — SQLite gives its -wal and -shm files the database file's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(path.parent, 0o700)
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
        os.chmod(path, 0o600)
    except PermissionError:  # a shared folder we may not change: keep going as it is
        pass


class SQLiteDB:
    def __init__(self, path: Path | str, migrations: Sequence[tuple[str, Sequence[str]]] = ()):
        self.path = str(path)
        if self.path != ":memory:":
            private_file(Path(self.path))
        self._local = threading.local()
        self._lock = threading.Lock()
        self.migrate(migrations)

    def connect(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                  check_same_thread=False)
            con.row_factory = sqlite3.Row
            for pragma in PRAGMAS:
                con.execute(f"PRAGMA {pragma}")
            self._local.con = con
        return con

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: everything in the block commits together or not at all."""
        con = self.connect()
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def migrate(self, migrations: Sequence[tuple[str, Sequence[str]]]) -> None:
        """Apply the named migrations this file has not seen yet, each in its own transaction.

        Different components keep separate version counters in a small table so the store and
        the indexes can evolve independently inside one file.
        """
        if not migrations:
            return
        with self._lock, self.tx() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name TEXT PRIMARY KEY, applied_at TEXT DEFAULT CURRENT_TIMESTAMP)"
            )
            done = {r[0] for r in con.execute("SELECT name FROM schema_migrations")}
            for name, statements in migrations:
                if name in done:
                    continue
                for statement in statements:
                    con.execute(statement)
                con.execute("INSERT INTO schema_migrations(name) VALUES (?)", (name,))

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

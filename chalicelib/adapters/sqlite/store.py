"""Embedded Store: messages, events with every version, deliveries and job state in SQLite."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.domain.models import Delivery, Event, Message, SessionState, trusted
from chalicelib.domain.records import Record
from chalicelib.ports import ConflictError, Page, R, UpsertOutcome

MIGRATIONS: list[tuple[str, list[str]]] = [
    (
        "store-001-initial",
        [
            """CREATE TABLE messages (
                space TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL,
                role TEXT NOT NULL, speaker TEXT NOT NULL, content TEXT NOT NULL,
                at TEXT NOT NULL, at_ts REAL NOT NULL, content_hash TEXT NOT NULL,
                PRIMARY KEY (space, session, seq))""",
            """CREATE TABLE sessions (
                space TEXT NOT NULL, session TEXT NOT NULL,
                extracted_upto INTEGER NOT NULL DEFAULT -1, dirty_from INTEGER,
                PRIMARY KEY (space, session))""",
            """CREATE TABLE events (
                space TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
                start_ts REAL NOT NULL, end_ts REAL NOT NULL, status TEXT NOT NULL,
                version INTEGER NOT NULL, PRIMARY KEY (space, id))""",
            "CREATE INDEX events_by_time ON events (space, start_ts, id)",
            """CREATE TABLE event_versions (
                space TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL,
                body TEXT NOT NULL, PRIMARY KEY (space, id, version))""",
            """CREATE TABLE deliveries (
                space TEXT NOT NULL, window TEXT NOT NULL, ref TEXT NOT NULL,
                delivered_ts REAL NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY (space, window, ref, delivered_ts))""",
            "CREATE INDEX deliveries_by_time ON deliveries (space, window, delivered_ts)",
            """CREATE TABLE window_counters (
                space TEXT NOT NULL, window TEXT NOT NULL, recalls INTEGER NOT NULL,
                PRIMARY KEY (space, window))""",
            """CREATE TABLE job_state (
                job TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL,
                PRIMARY KEY (job, key))""",
        ],
    ),
    (
        # Typed records (chalicelib.domain.records) replace the job_state catch-all: one row
        # per record. Old rows are converted by _convert_job_state on first open.
        "store-002-records",
        [
            """CREATE TABLE records (
                kind TEXT NOT NULL, scope TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY (kind, scope, key))""",
        ],
    ),
]

_IN = 500  # ids per IN (...)


def _encode_cursor(start_ts: float, event_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([start_ts, event_id]).encode()).decode()


def decode_cursor(cursor: str) -> tuple[float, str]:
    """Raises ValueError on anything that is not a cursor this adapter wrote."""
    try:
        start_ts, event_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(start_ts), str(event_id)
    except Exception as exc:  # any garbage is the caller's mistake, not ours
        raise ValueError("invalid cursor") from exc


class SQLiteStore:
    def __init__(self, db: SQLiteDB):
        self.db = db
        db.migrate(MIGRATIONS)
        _convert_job_state(db)

    # ------------------------------------------------------------ messages
    def upsert_messages(self, space: str, session: str, messages: Sequence[Message],
                        now: datetime) -> UpsertOutcome:
        with self.db.tx() as con:
            return self.write_messages(con, space, session, messages)

    @staticmethod
    def write_messages(con: sqlite3.Connection, space: str, session: str,
                       messages: Sequence[Message]) -> UpsertOutcome:
        """upsert_messages inside a transaction the caller holds (the ingest writer joins it
        with the keyword rows: chalicelib.adapters.sqlite.ingest)."""
        outcome = UpsertOutcome()
        state = con.execute(
            "SELECT extracted_upto, dirty_from FROM sessions WHERE space=? AND session=?",
            (space, session),
        ).fetchone()
        extracted_upto = state[0] if state else -1
        dirty_from = state[1] if state else None
        # One lookup for the batch, then decide in order as one-by-one upserts would (a
        # seq given twice sees the first write), then one executemany.
        stored = SQLiteStore.stored_hashes(con, space, session, [m.seq for m in messages])
        rows = []
        for msg in messages:
            old_hash = stored.get(msg.seq)
            if old_hash == msg.content_hash:
                outcome.unchanged.append(msg.seq)
                continue
            rows.append((space, session, msg.seq, msg.role, msg.speaker, msg.content,
                         msg.at.isoformat(), msg.at.timestamp(), msg.content_hash))
            stored[msg.seq] = msg.content_hash
            if old_hash is None:
                outcome.accepted.append(msg.seq)
            else:
                outcome.changed.append(msg.seq)
            if old_hash is not None and msg.seq <= extracted_upto:
                dirty_from = msg.seq if dirty_from is None else min(dirty_from, msg.seq)
        con.executemany("INSERT OR REPLACE INTO messages VALUES (?,?,?,?,?,?,?,?,?)", rows)
        con.execute(
            "INSERT INTO sessions(space, session, extracted_upto, dirty_from) VALUES (?,?,?,?)"
            " ON CONFLICT(space, session) DO UPDATE SET dirty_from=excluded.dirty_from",
            (space, session, extracted_upto, dirty_from),
        )
        return outcome

    @staticmethod
    def stored_hashes(con: sqlite3.Connection, space: str, session: str,
                      seqs: Sequence[int]) -> dict[int, str]:
        """seq → content hash of the stored messages among `seqs`, in one lookup per 500."""
        stored: dict[int, str] = {}
        seqs = list(dict.fromkeys(seqs))
        for i in range(0, len(seqs), _IN):
            part = seqs[i : i + _IN]
            stored.update(con.execute(
                "SELECT seq, content_hash FROM messages WHERE space=? AND session=?"
                f" AND seq IN ({','.join('?' * len(part))})", (space, session, *part)))
        return stored

    def get_messages(self, space: str, session: str, seq_from: int | None = None,
                     seq_to: int | None = None) -> list[Message]:
        rows = self.db.connect().execute(
            "SELECT * FROM messages WHERE space=? AND session=? AND seq>=? AND seq<=?"
            " ORDER BY seq",
            (space, session, -1 if seq_from is None else seq_from,
             2**62 if seq_to is None else seq_to),
        ).fetchall()
        return [_message(r) for r in rows]

    def get_message(self, space: str, session: str, seq: int) -> Message | None:
        found = self.get_messages(space, session, seq, seq)
        return found[0] if found else None

    def load_messages(self, space: str, keys: Sequence[tuple[str, int]]) -> list[Message]:
        by_session: dict[str, list[int]] = {}
        for session, seq in dict.fromkeys(keys):
            by_session.setdefault(session, []).append(seq)
        con = self.db.connect()
        out: list[Message] = []
        for session, seqs in by_session.items():
            for i in range(0, len(seqs), _IN):
                part = seqs[i:i + _IN]
                out += [_message(r) for r in con.execute(
                    "SELECT * FROM messages WHERE space=? AND session=?"
                    f" AND seq IN ({','.join('?' * len(part))})", (space, session, *part))]
        return out

    def delete_message(self, space: str, session: str, seq: int, now: datetime) -> Message | None:
        with self.db.tx() as con:
            row = con.execute(
                "SELECT * FROM messages WHERE space=? AND session=? AND seq=?",
                (space, session, seq),
            ).fetchone()
            if row is None:
                return None
            con.execute("DELETE FROM messages WHERE space=? AND session=? AND seq=?",
                        (space, session, seq))
            con.execute(
                "UPDATE sessions SET dirty_from = CASE WHEN dirty_from IS NULL OR dirty_from > ?"
                " THEN ? ELSE dirty_from END WHERE space=? AND session=? AND extracted_upto>=?",
                (seq, seq, space, session, seq),
            )
            return _message(row)

    # ------------------------------------------------------------ sessions
    def get_session(self, space: str, session: str) -> SessionState | None:
        found = self._sessions("WHERE s.space=? AND s.session=?", (space, session))
        return found[0] if found else None

    def list_sessions(self, space: str | None = None) -> list[SessionState]:
        if space is None:
            return self._sessions("", ())
        return self._sessions("WHERE s.space=?", (space,))

    def _sessions(self, where: str, params: tuple) -> list[SessionState]:
        rows = self.db.connect().execute(
            "SELECT s.space, s.session, s.extracted_upto, s.dirty_from,"
            " (SELECT MAX(at_ts) FROM messages m WHERE m.space=s.space AND m.session=s.session)"
            "   AS last_ts,"
            " (SELECT MIN(at_ts) FROM messages m WHERE m.space=s.space AND m.session=s.session"
            "   AND m.seq > s.extracted_upto) AS pending_ts,"
            " (SELECT COUNT(*) FROM messages m WHERE m.space=s.space AND m.session=s.session)"
            "   AS n"
            f" FROM sessions s {where} ORDER BY s.space, s.session",
            params,
        ).fetchall()
        return [
            SessionState(
                space=r["space"], session=r["session"], extracted_upto=r["extracted_upto"],
                dirty_from=r["dirty_from"], message_count=r["n"],
                last_message_at=_from_ts(r["last_ts"]), pending_since=_from_ts(r["pending_ts"]),
            )
            for r in rows
        ]

    def mark_extracted(self, space: str, session: str, upto: int) -> None:
        with self.db.tx() as con:
            con.execute(
                "INSERT INTO sessions(space, session, extracted_upto, dirty_from)"
                " VALUES (?,?,?,NULL) ON CONFLICT(space, session) DO UPDATE SET"
                " extracted_upto=MAX(extracted_upto, excluded.extracted_upto), dirty_from=NULL",
                (space, session, upto),
            )

    # ------------------------------------------------------------ events
    def create_event(self, event: Event) -> Event:
        body = event.model_dump_json()
        with self.db.tx() as con:
            if con.execute("SELECT 1 FROM events WHERE space=? AND id=?",
                           (event.space, event.id)).fetchone():
                raise ConflictError(f"event {event.id} already exists")
            con.execute(
                "INSERT INTO events VALUES (?,?,?,?,?,?,?)",
                (event.space, event.id, body, event.when.start.timestamp(),
                 event.when.end.timestamp(), event.status, event.version),
            )
            con.execute("INSERT INTO event_versions VALUES (?,?,?,?)",
                        (event.space, event.id, event.version, body))
        return event

    def update_event(self, event: Event, expected_version: int) -> Event:
        new = event.model_copy(update={"version": expected_version + 1})
        body = new.model_dump_json()
        with self.db.tx() as con:
            cur = con.execute(
                "UPDATE events SET body=?, start_ts=?, end_ts=?, status=?, version=?"
                " WHERE space=? AND id=? AND version=?",
                (body, new.when.start.timestamp(), new.when.end.timestamp(), new.status,
                 new.version, new.space, new.id, expected_version),
            )
            if cur.rowcount != 1:
                raise ConflictError(f"event {new.id} is not at version {expected_version}")
            con.execute("INSERT INTO event_versions VALUES (?,?,?,?)",
                        (new.space, new.id, new.version, body))
        return new

    def get_event(self, space: str, event_id: str) -> Event | None:
        row = self.db.connect().execute(
            "SELECT body FROM events WHERE space=? AND id=?", (space, event_id)
        ).fetchone()
        return Event.model_validate_json(row["body"]) if row else None

    def load_events(self, space: str, ids: Sequence[str]) -> list[Event]:
        wanted = list(dict.fromkeys(ids))
        con = self.db.connect()
        out: list[Event] = []
        for i in range(0, len(wanted), _IN):
            part = wanted[i:i + _IN]
            out += [Event.model_validate_json(r["body"]) for r in con.execute(
                f"SELECT body FROM events WHERE space=? AND id IN ({','.join('?' * len(part))})",
                (space, *part))]
        return out

    def list_events(self, space: str, *, start: datetime | None = None,
                    end: datetime | None = None, statuses: Sequence[str] = ("active",),
                    limit: int = 50, cursor: str | None = None,
                    kinds: Sequence[str] | None = None) -> Page:
        sql = ["SELECT body, start_ts, id FROM events WHERE space=?"]
        params: list = [space]
        if statuses:
            sql.append(f"AND status IN ({','.join('?' * len(statuses))})")
            params.extend(statuses)
        if kinds is not None:  # the kind is in the body (every version writes it)
            sql.append("AND coalesce(json_extract(body, '$.kind'), 'event')"
                       f" IN ({','.join('?' * len(kinds)) or 'NULL'})")
            params.extend(kinds)
        if start is not None:
            sql.append("AND end_ts > ?")
            params.append(start.timestamp())
        if end is not None:
            sql.append("AND start_ts < ?")
            params.append(end.timestamp())
        if cursor:
            after_ts, after_id = decode_cursor(cursor)
            sql.append("AND (start_ts > ? OR (start_ts = ? AND id > ?))")
            params.extend([after_ts, after_ts, after_id])
        sql.append("ORDER BY start_ts, id LIMIT ?")
        params.append(limit + 1)
        rows = self.db.connect().execute(" ".join(sql), params).fetchall()
        events = [Event.model_validate_json(r["body"]) for r in rows[:limit]]
        next_cursor = None
        if len(rows) > limit:
            last = rows[limit - 1]
            next_cursor = _encode_cursor(last["start_ts"], last["id"])
        return Page(events=events, next_cursor=next_cursor)

    def event_history(self, space: str, event_id: str) -> list[Event]:
        rows = self.db.connect().execute(
            "SELECT body FROM event_versions WHERE space=? AND id=? ORDER BY version",
            (space, event_id),
        ).fetchall()
        return [Event.model_validate_json(r["body"]) for r in rows]

    # ------------------------------------------------------------ deliveries
    def add_deliveries(self, space: str, window: str, refs: Sequence[str],
                       at: datetime) -> list[Delivery]:
        with self.db.tx() as con:
            row = con.execute("SELECT recalls FROM window_counters WHERE space=? AND window=?",
                              (space, window)).fetchone()
            count = row["recalls"] if row else 0
            out = [Delivery(space=space, window=window, ref=ref, delivered_at=at,
                            recall_count=count) for ref in dict.fromkeys(refs)]
            con.executemany(
                "INSERT OR REPLACE INTO deliveries VALUES (?,?,?,?,?)",
                [(space, window, d.ref, at.timestamp(), d.model_dump_json()) for d in out],
            )
        return out

    def recent_deliveries(self, space: str, window: str, since: datetime) -> list[Delivery]:
        rows = self.db.connect().execute(
            "SELECT body FROM deliveries WHERE space=? AND window=? AND delivered_ts>=?"
            " ORDER BY delivered_ts",
            (space, window, since.timestamp()),
        ).fetchall()
        return [Delivery.model_validate_json(r["body"]) for r in rows]

    def bump_recall_count(self, space: str, window: str) -> int:
        with self.db.tx() as con:
            con.execute(
                "INSERT INTO window_counters VALUES (?,?,1) ON CONFLICT(space, window)"
                " DO UPDATE SET recalls = recalls + 1",
                (space, window),
            )
            row = con.execute("SELECT recalls FROM window_counters WHERE space=? AND window=?",
                              (space, window)).fetchone()
        return int(row["recalls"])

    def recall_count(self, space: str, window: str) -> int:
        row = self.db.connect().execute(
            "SELECT recalls FROM window_counters WHERE space=? AND window=?",
            (space, window)).fetchone()
        return int(row["recalls"]) if row else 0

    def purge_deliveries(self, before: datetime) -> int:
        with self.db.tx() as con:
            return con.execute("DELETE FROM deliveries WHERE delivered_ts < ?",
                               (before.timestamp(),)).rowcount

    # ------------------------------------------------------------ typed records
    def put_record(self, record: Record) -> None:
        with self.db.tx() as con:
            con.execute("INSERT OR REPLACE INTO records VALUES (?,?,?,?)",
                        (record.KIND, record.scope, record.key, record.model_dump_json()))

    def get_record(self, kind: type[R], scope: str, key: str = "") -> R | None:
        row = self.db.connect().execute(
            "SELECT body FROM records WHERE kind=? AND scope=? AND key=?",
            (kind.KIND, scope, key)).fetchone()
        return kind.model_validate_json(row["body"]) if row else None

    def list_records(self, kind: type[R], scope: str) -> list[R]:
        rows = self.db.connect().execute(
            "SELECT body FROM records WHERE kind=? AND scope=? ORDER BY key",
            (kind.KIND, scope)).fetchall()
        return [kind.model_validate_json(r["body"]) for r in rows]

    def delete_records(self, kind: type[R], scope: str, keys: Sequence[str]) -> int:
        with self.db.tx() as con:
            return sum(con.execute("DELETE FROM records WHERE kind=? AND scope=? AND key=?",
                                   (kind.KIND, scope, key)).rowcount for key in keys)


def _convert_job_state(db: SQLiteDB) -> None:
    """Data dirs from before typed records: turn each job_state row into records, once."""
    from chalicelib.domain import records as rec

    con = db.connect()
    rows = con.execute("SELECT job, key, state FROM job_state").fetchall()
    if not rows:
        return
    out: list[Record] = []
    for row in rows:
        state, scope = json.loads(row["state"]), row["key"]
        if row["job"] == "people":
            out += [rec.Person(scope=scope, key=name) for name in state.get("names", [])]
        elif row["job"] == "usage":
            out += [rec.MemoryUse(scope=scope, key=ref, count=u["count"], last=u["last"])
                    for ref, u in state.get("refs", {}).items()]
        elif row["job"] == "journal":
            out += [rec.JournalBatch(scope=scope, key=b["id"], at=b["at"],
                                     created=b.get("created", []),
                                     revived=[tuple(p) for p in b.get("revived", [])],
                                     superseded=[tuple(p) for p in b.get("superseded", [])],
                                     rolled_back=b.get("rolled_back", False))
                    for b in state.get("batches", [])]
        elif row["job"] == "llm-usage":
            out += [rec.LLMUsageRecord(scope=scope, key=task, model=state.get("model", ""),
                                       **{k: int(v) for k, v in usage.items()
                                          if k in rec.LLMUsageRecord.model_fields})
                    for task, usage in (state.get("tasks") or {}).items()]
        elif row["job"] == "merge":
            out.append(rec.MergeState(scope=scope, **{k: v for k, v in state.items()
                                                       if k in rec.MergeState.model_fields}))
    with db.tx() as tx:
        tx.executemany("INSERT OR REPLACE INTO records VALUES (?,?,?,?)",
                       [(r.KIND, r.scope, r.key, r.model_dump_json()) for r in out])
        tx.execute("DELETE FROM job_state")


def _message(row) -> Message:
    # trusted: rows were validated on the way in; this is read on every index pass.
    return trusted(
        Message, space=row["space"], session=row["session"], seq=row["seq"], role=row["role"],
        speaker=row["speaker"], content=row["content"], at=datetime.fromisoformat(row["at"]),
        content_hash=row["content_hash"],
    )


def _from_ts(ts: float | None) -> datetime | None:
    """A stored epoch as a time; one outside what datetime can hold (a message stored before
    times were range-checked) reads as None rather than failing every listing."""
    from datetime import UTC

    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, UTC)
    except (OverflowError, OSError, ValueError):
        return None

"""The embedded backend's message write (the MessageIngest port): messages and their keyword
rows in one transaction, concurrent PUTs committed together.

Why one transaction: a PUT answers only once its messages are findable by keyword (issue 9),
so the store write and the keyword write are one unit anyway; as one transaction nothing is
read back (the old path re-loaded the messages from the keyword queue) and a crash between the
two cannot leave a stored message unfindable. The trigger on `messages` still queues both lanes
(other writers rely on it); the keyword entries this transaction made are removed before it
commits, so only the vector lane's remain.

Why group commit: a commit is the dearest part of a small write — FTS5 flushes a new index
segment at every commit (measured: ~0.3 ms, more than tokenizing a batch of 20) — so PUTs that
arrive while another is committing wait for it and are then written together, in one
transaction, by whichever of them gets the writer lock first (the classic leader/follower
scheme of database logs). Each PUT still gets its own outcome, and a batch that fails does not
fail the others: the group is then retried batch by batch.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.index import FtsKeywordIndex
from chalicelib.adapters.sqlite.outbox import SqliteOutbox
from chalicelib.adapters.sqlite.store import SQLiteStore
from chalicelib.domain.models import IndexDoc, Message
from chalicelib.ports import UpsertOutcome

log = logging.getLogger("annals.ingest")


@dataclass
class _Batch:
    space: str
    session: str
    messages: Sequence[Message]
    docs: dict[str, IndexDoc]  # message ref → its keyword document
    outcome: UpsertOutcome | None = None
    error: BaseException | None = None
    done: bool = False


class SqliteMessageIngest:
    def __init__(self, db: SQLiteDB, keywords: FtsKeywordIndex, outbox: SqliteOutbox):
        self.db = db
        self.keywords = keywords
        self.outbox = outbox  # its migrations made the queues this writer trims
        self._pending: list[_Batch] = []
        self._pending_lock = threading.Lock()
        self._leader = threading.Lock()

    def put(self, space: str, session: str, messages: Sequence[Message],
            keyword_docs: Sequence[IndexDoc]) -> UpsertOutcome:
        batch = _Batch(space, session, messages, {d.id: d for d in keyword_docs})
        with self._pending_lock:
            self._pending.append(batch)
        with self._leader:
            if not batch.done:  # nobody wrote it while this thread waited: lead a group
                with self._pending_lock:
                    group, self._pending = self._pending, []
                self._commit(group)
        if batch.error is not None:
            raise batch.error
        assert batch.outcome is not None
        return batch.outcome

    def _commit(self, group: list[_Batch]) -> None:
        try:
            self._write_isolated(group)
        finally:
            try:  # in batches; the next search pays for what is left (catch_up_every)
                self.keywords.catch_up_every(sum(len(b.messages) for b in group))
            except Exception:
                log.exception("keyword copy not refreshed after a write; the next search will")
            for batch in group:
                if batch.outcome is None and batch.error is None:
                    batch.error = RuntimeError("the group commit stopped before this batch")
                batch.done = True

    def _write_isolated(self, group: list[_Batch]) -> None:
        try:
            self._write(group)
        except Exception as exc:
            if len(group) == 1:
                group[0].error = exc
                return
            for batch in group:  # a fault stays with the batch that caused it
                try:
                    self._write([batch])
                except Exception as exc:
                    batch.error = exc

    def _write(self, group: list[_Batch]) -> None:
        """One transaction for the whole group; outcomes are kept only once it commits."""
        outcomes = []
        with self.db.tx() as con:
            mark = self.outbox.keyword_mark(con)
            rows: dict[tuple[str, str], tuple] = {}
            for batch in group:
                outcome = SQLiteStore.write_messages(con, batch.space, batch.session,
                                                     batch.messages)
                outcomes.append(outcome)
                # Only what the store wrote is tokenized: a host re-sending its recent window
                # costs no tokenizing for the messages it had sent before.
                written = {*outcome.accepted, *outcome.changed}
                for row in self.keywords.prepare([batch.docs[m.ref] for m in batch.messages
                                                  if m.seq in written]):
                    rows.pop((row[0], row[1]), None)  # twice in a group: the later wins
                    rows[(row[0], row[1])] = row
            self.keywords.write_rows(con, list(rows.values()))
            self.outbox.unqueue_keywords(con, mark)
        for batch, outcome in zip(group, outcomes, strict=True):
            batch.outcome = outcome


"""Messages and session state on DynamoDB.

The session item is the serialisation point of its session, as SQLite's write transaction
is: it carries a revision `rev`, and every change to the session's messages is one
TransactWriteItems that (a) puts/deletes the messages with their own conditions
(`attribute_not_exists(pk)` for a new seq, `content_hash = :old` for a changed one) and
(b) rewrites the session item on the condition that `rev` is still the one read. Any
interleaved writer cancels the transaction; the loser re-reads and re-decides, so each
message ends up counted exactly once as accepted, unchanged or changed.

The session item keeps the aggregates SessionState reports (message count, latest message
time, oldest pending message time) so listing sessions never reads messages. They are
updated incrementally; only when the message holding an extreme value is edited to a
less extreme time or deleted is the session re-read (`seq, at_us` only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.adapters.dynamodb import codec, keys
from chalicelib.adapters.dynamodb.base import Retry, TableBase
from chalicelib.adapters.dynamodb.table import batch_get, error_code, query_all
from chalicelib.domain.models import Message, SessionState
from chalicelib.ports import UpsertOutcome

TX_MAX_MESSAGES = 99  # + the session item = the 100-operation TransactWriteItems limit
TX_MAX_BYTES = 3_500_000  # stay under the 4 MB transaction limit
_ITEM_OVERHEAD = 400


@dataclass
class SessionRecord:
    space: str
    session: str
    extracted_upto: int = -1
    dirty_from: int | None = None
    count: int = 0
    last_us: int | None = None
    pending_us: int | None = None
    rev: int = 0  # 0 = not stored yet

    @classmethod
    def from_item(cls, item: dict) -> SessionRecord:
        p = codec.from_item(item)
        return cls(space=p["space"], session=p["session"], extracted_upto=p["extracted_upto"],
                   dirty_from=p.get("dirty_from"), count=p["message_count"],
                   last_us=p.get("last_at_us"), pending_us=p.get("pending_at_us"), rev=p["rev"])

    def item(self) -> dict:
        plain: dict[str, Any] = {
            "pk": keys.space_pk(self.space), "sk": keys.session_sk(self.session),
            "gsi2pk": keys.SESSIONS_PARTITION,
            "gsi2sk": keys.session_gsi2sk(self.space, self.session),
            "entity": "session", "space": self.space, "session": self.session,
            "extracted_upto": self.extracted_upto, "message_count": self.count,
            "rev": self.rev + 1,
        }
        for name, value in (("dirty_from", self.dirty_from), ("last_at_us", self.last_us),
                            ("pending_at_us", self.pending_us)):
            if value is not None:
                plain[name] = value
        return codec.to_item(plain)

    def condition(self) -> dict:
        if self.rev == 0:
            return {"ConditionExpression": "attribute_not_exists(pk)"}
        return {"ConditionExpression": "#rev = :rev",
                "ExpressionAttributeNames": {"#rev": "rev"},
                "ExpressionAttributeValues": {":rev": {"N": str(self.rev)}}}

    def state(self) -> SessionState:
        def at(us: int | None) -> datetime | None:
            return None if us is None else keys.from_epoch_us(us)

        return SessionState(space=self.space, session=self.session,
                            extracted_upto=self.extracted_upto, dirty_from=self.dirty_from,
                            last_message_at=at(self.last_us), pending_since=at(self.pending_us),
                            message_count=self.count)


class MessageOps(TableBase):
    # ------------------------------------------------------------ messages
    def upsert_messages(self, space: str, session: str, messages: Sequence[Message],
                        now: datetime) -> UpsertOutcome:
        outcome = UpsertOutcome()
        for chunk in _chunks(messages) or [[]]:
            accepted, unchanged, changed = self._optimistic(
                lambda chunk=chunk: self._upsert_chunk(space, session, chunk),
                f"upsert into {space}/{session}")
            outcome.accepted.extend(accepted)
            outcome.unchanged.extend(unchanged)
            outcome.changed.extend(changed)
        return outcome

    def _upsert_chunk(self, space: str, session: str, msgs: list[Message]):
        rec = self._session(space, session) or SessionRecord(space, session)
        stored = self._stored(space, session, {m.seq for m in msgs})  # seq → (hash, at_us)
        current = dict(stored)
        accepted: list[int] = []
        unchanged: list[int] = []
        changed: list[int] = []
        writes: dict[int, Message] = {}
        rescan: str | None = None
        for m in msgs:
            old = current.get(m.seq)
            if old is not None and old[0] == m.content_hash:
                unchanged.append(m.seq)
                continue
            at = keys.epoch_us(m.at)
            pending = m.seq > rec.extracted_upto
            if old is None:
                accepted.append(m.seq)
                rec.count += 1
            else:
                changed.append(m.seq)
                if not pending:
                    rec.dirty_from = _min(rec.dirty_from, m.seq)
                if old[1] == rec.last_us and at < old[1]:
                    rescan = "all"
                if pending and old[1] == rec.pending_us and at > old[1]:
                    rescan = rescan or "pending"
            rec.last_us = _max(rec.last_us, at)
            if pending:
                rec.pending_us = _min(rec.pending_us, at)
            current[m.seq] = (m.content_hash, at)
            writes[m.seq] = m
        if not writes and rec.rev:
            return accepted, unchanged, changed  # nothing to write, session already exists
        if rescan:
            self._rescan(rec, rescan, {seq: current[seq][1] for seq in writes})
        ops = [self._put(rec.item(), **rec.condition())]
        for seq, m in writes.items():
            if seq in stored:
                cond = {"ConditionExpression": "content_hash = :h",
                        "ExpressionAttributeValues": {":h": {"S": stored[seq][0]}}}
            else:
                cond = {"ConditionExpression": "attribute_not_exists(pk)"}
            ops.append(self._put(codec.message_item(m), **cond))
        if self._transact(ops) != "ok":
            raise Retry
        return accepted, unchanged, changed

    def _stored(self, space: str, session: str, seqs: set[int]) -> dict[int, tuple[str, int]]:
        pk = keys.messages_pk(space, session)
        key_list = [{"pk": {"S": pk}, "sk": {"S": keys.seq_key(s)}} for s in sorted(seqs)]
        items = batch_get(self.client, self.table_name, key_list, self.batch_backoff,
                          projection="#q, content_hash, at_us", names={"#q": "seq"})
        out = {}
        for item in items:
            p = codec.from_item(item)
            out[p["seq"]] = (p["content_hash"], p["at_us"])
        return out

    def _rescan(self, rec: SessionRecord, mode: str, overlay: dict[int, int],
                removed: int | None = None) -> None:
        """Recompute the time aggregates from the stored messages plus the pending writes:
        `all` → latest and oldest-pending; `pending` → oldest-pending only."""
        first = 0 if mode == "all" else rec.extracted_upto + 1
        times = {seq: at for seq, at in self._message_times(rec.space, rec.session, first)}
        times.update((s, at) for s, at in overlay.items() if s >= first)
        times.pop(removed, None)
        if mode == "all":
            rec.last_us = max(times.values(), default=None)
        rec.pending_us = min((at for s, at in times.items() if s > rec.extracted_upto),
                             default=None)

    def _message_times(self, space: str, session: str, seq_from: int):
        if seq_from > keys.MAX_SEQ:
            return
        for item in query_all(
            self.client, TableName=self.table_name, ConsistentRead=True,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
            ProjectionExpression="#q, at_us", ExpressionAttributeNames={"#q": "seq"},
            ExpressionAttributeValues={":pk": {"S": keys.messages_pk(space, session)},
                                       ":lo": {"S": keys.seq_key(max(0, seq_from))},
                                       ":hi": {"S": keys.MESSAGES_END}},
        ):
            yield int(item["seq"]["N"]), int(item["at_us"]["N"])

    def get_messages(self, space: str, session: str, seq_from: int | None = None,
                     seq_to: int | None = None) -> list[Message]:
        lo = 0 if seq_from is None else max(0, seq_from)
        hi = keys.MAX_SEQ if seq_to is None else min(keys.MAX_SEQ, seq_to)
        if lo > hi:
            return []
        items = query_all(
            self.client, TableName=self.table_name, ConsistentRead=True,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
            ExpressionAttributeValues={":pk": {"S": keys.messages_pk(space, session)},
                                       ":lo": {"S": keys.seq_key(lo)},
                                       ":hi": {"S": keys.seq_key(hi)}},
        )
        return [codec.message_from(i) for i in items]

    def get_message(self, space: str, session: str, seq: int) -> Message | None:
        if not 0 <= seq <= keys.MAX_SEQ:
            return None
        item = self._get(keys.messages_pk(space, session), keys.seq_key(seq))
        return codec.message_from(item) if item else None

    def load_messages(self, space: str, keys: Sequence[tuple[str, int]]) -> list[Message]:
        """BatchGetItem (100 keys a call) of the keys; missing ones are skipped."""
        items = batch_get(self.client, self.table_name, _message_keys(space, keys),
                          self.batch_backoff)
        return [codec.message_from(i) for i in items]

    def delete_message(self, space: str, session: str, seq: int, now: datetime) -> Message | None:
        if not 0 <= seq <= keys.MAX_SEQ:
            return None
        return self._optimistic(lambda: self._delete(space, session, seq),
                                f"delete {space}/{session}/{seq}")

    def _delete(self, space: str, session: str, seq: int) -> Message | None:
        key = {"pk": {"S": keys.messages_pk(space, session)}, "sk": {"S": keys.seq_key(seq)}}
        item = self._get(key["pk"]["S"], key["sk"]["S"])
        if item is None:
            return None
        message = codec.message_from(item)
        at = int(item["at_us"]["N"])
        ops: list[dict] = [{"Delete": {
            "TableName": self.table_name, "Key": key,
            "ConditionExpression": "content_hash = :h",
            "ExpressionAttributeValues": {":h": {"S": message.content_hash}}}}]
        rec = self._session(space, session)
        if rec is not None:
            rec.count -= 1
            if rec.extracted_upto >= seq:
                rec.dirty_from = _min(rec.dirty_from, seq)
            if at == rec.last_us:
                self._rescan(rec, "all", {}, removed=seq)
            elif seq > rec.extracted_upto and at == rec.pending_us:
                self._rescan(rec, "pending", {}, removed=seq)
            ops.append(self._put(rec.item(), **rec.condition()))
        if self._transact(ops) != "ok":
            raise Retry
        return message

    # ------------------------------------------------------------ sessions
    def _session(self, space: str, session: str) -> SessionRecord | None:
        item = self._get(keys.space_pk(space), keys.session_sk(session))
        return SessionRecord.from_item(item) if item else None

    def get_session(self, space: str, session: str) -> SessionState | None:
        rec = self._session(space, session)
        return rec.state() if rec else None

    def list_sessions(self, space: str | None = None) -> list[SessionState]:
        if space is None:  # every space: the sparse gsi2 (eventually consistent)
            request: dict[str, Any] = {
                "IndexName": keys.SESSIONS_INDEX,
                "KeyConditionExpression": "gsi2pk = :p",
                "ExpressionAttributeValues": {":p": {"S": keys.SESSIONS_PARTITION}}}
        else:  # one space: its own partition, strongly consistent
            request = {
                "ConsistentRead": True,
                "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
                "ExpressionAttributeValues": {":p": {"S": keys.space_pk(space)},
                                              ":s": {"S": "SES#"}}}
        items = query_all(self.client, TableName=self.table_name, **request)
        states = [SessionRecord.from_item(i).state() for i in items]
        return sorted(states, key=lambda s: (s.space, s.session))

    def mark_extracted(self, space: str, session: str, upto: int) -> None:
        self._optimistic(lambda: self._mark(space, session, upto),
                         f"mark_extracted {space}/{session}")

    def _mark(self, space: str, session: str, upto: int) -> None:
        rec = self._session(space, session) or SessionRecord(space, session)
        before = replace(rec)
        rec.extracted_upto = upto if rec.rev == 0 else max(rec.extracted_upto, upto)
        rec.dirty_from = None
        if rec.rev and rec.extracted_upto != before.extracted_upto:
            self._rescan(rec, "pending", {})
        if rec.rev and rec == before:
            return
        try:
            self.client.put_item(TableName=self.table_name, Item=rec.item(), **rec.condition())
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise
            raise Retry from None


def _chunks(messages: Sequence[Message]) -> list[list[Message]]:
    """Input order kept; each chunk fits one transaction (distinct seqs and bytes)."""
    chunks: list[list[Message]] = []
    seqs: set[int] = set()
    size = 0
    for m in messages:
        keys.seq_key(m.seq)  # validate before anything is written
        m_size = len(m.content.encode()) + len(m.speaker.encode()) + _ITEM_OVERHEAD
        new_seq = m.seq not in seqs
        if not chunks or (new_seq and len(seqs) >= TX_MAX_MESSAGES) or size + m_size > TX_MAX_BYTES:
            chunks.append([])
            seqs, size = set(), 0
        chunks[-1].append(m)
        seqs.add(m.seq)
        size += m_size
    return chunks


def _message_keys(space: str, wanted: Sequence[tuple[str, int]]) -> list[dict]:
    """Table keys of (session, seq) pairs, each once (BatchGetItem refuses a repeated key);
    a seq outside the key range cannot be stored, so it is left out."""
    pairs = dict.fromkeys((session, seq) for session, seq in wanted if 0 <= seq <= keys.MAX_SEQ)
    return [{"pk": {"S": keys.messages_pk(space, session)}, "sk": {"S": keys.seq_key(seq)}}
            for session, seq in pairs]


def _min(a: int | None, b: int) -> int:
    return b if a is None else min(a, b)


def _max(a: int | None, b: int) -> int:
    return b if a is None else max(a, b)

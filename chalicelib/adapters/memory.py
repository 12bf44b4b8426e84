"""In-memory Store, KeywordIndex and VectorIndex: the process's dicts, for fast use-case tests.

Each behaves as its embedded counterpart (SQLiteStore, FtsKeywordIndex, NumpyVectorIndex)
does; the contract suites run against all of them. One lock per object; nothing persists.
Stored models are copies, so a caller that mutates what it passed in or got back cannot
change what is stored.
"""

from __future__ import annotations

import base64
import json
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from chalicelib.domain.models import Delivery, Event, IndexDoc, Message, SessionState
from chalicelib.domain.records import Record
from chalicelib.domain.textproc import search_terms, tokenize
from chalicelib.ports import ACTIVE, ConflictError, Hit, Page, R, SearchFilter, UpsertOutcome

# ------------------------------------------------------------------ store


def _encode_cursor(start_ts: float, event_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([start_ts, event_id]).encode()).decode()


def _decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        start_ts, event_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return float(start_ts), str(event_id)
    except Exception as exc:  # any garbage is the caller's mistake
        raise ValueError("invalid cursor") from exc


def _utc(ts: float | None) -> datetime | None:
    # SQLite keeps message times as epoch seconds for these columns and answers in UTC.
    return None if ts is None else datetime.fromtimestamp(ts, UTC)


@dataclass
class _Session:
    extracted_upto: int = -1
    dirty_from: int | None = None


class MemoryStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: dict[tuple[str, str], dict[int, Message]] = {}
        self._sessions: dict[tuple[str, str], _Session] = {}
        self._events: dict[tuple[str, str], Event] = {}
        self._versions: dict[tuple[str, str], list[Event]] = {}
        # Keyed like SQLite's primary key; a replaced delivery moves to the end, as a new row.
        self._deliveries: dict[tuple[str, str, str, float], Delivery] = {}
        self._recalls: dict[tuple[str, str], int] = {}
        self._records: dict[tuple[str, str, str], Record] = {}

    # ------------------------------------------------------------ messages
    def upsert_messages(self, space: str, session: str, messages: Sequence[Message],
                        now: datetime) -> UpsertOutcome:
        outcome = UpsertOutcome()
        with self._lock:
            stored = self._messages.setdefault((space, session), {})
            state = self._sessions.setdefault((space, session), _Session())
            for msg in messages:
                old = stored.get(msg.seq)
                if old is not None and old.content_hash == msg.content_hash:
                    outcome.unchanged.append(msg.seq)
                    continue
                stored[msg.seq] = msg.model_copy(deep=True)
                if old is None:
                    outcome.accepted.append(msg.seq)
                    continue
                outcome.changed.append(msg.seq)
                if msg.seq <= state.extracted_upto:
                    state.dirty_from = (msg.seq if state.dirty_from is None
                                        else min(state.dirty_from, msg.seq))
        return outcome

    def get_messages(self, space: str, session: str, seq_from: int | None = None,
                     seq_to: int | None = None) -> list[Message]:
        lo = -1 if seq_from is None else seq_from
        hi = 2**62 if seq_to is None else seq_to
        with self._lock:
            stored = self._messages.get((space, session), {})
            return [stored[s].model_copy(deep=True) for s in sorted(stored) if lo <= s <= hi]

    def get_message(self, space: str, session: str, seq: int) -> Message | None:
        with self._lock:
            found = self._messages.get((space, session), {}).get(seq)
            return found.model_copy(deep=True) if found else None

    def load_messages(self, space: str, keys: Sequence[tuple[str, int]]) -> list[Message]:
        with self._lock:
            found = (self._messages.get((space, session), {}).get(seq)
                     for session, seq in dict.fromkeys(keys))
            return [m.model_copy(deep=True) for m in found if m is not None]

    def delete_message(self, space: str, session: str, seq: int, now: datetime) -> Message | None:
        with self._lock:
            gone = self._messages.get((space, session), {}).pop(seq, None)
            state = self._sessions.get((space, session))
            if gone is not None and state is not None and state.extracted_upto >= seq:
                state.dirty_from = seq if state.dirty_from is None else min(state.dirty_from, seq)
            return gone

    # ------------------------------------------------------------ sessions
    def get_session(self, space: str, session: str) -> SessionState | None:
        with self._lock:
            if (space, session) not in self._sessions:
                return None
            return self._session_state(space, session)

    def list_sessions(self, space: str | None = None) -> list[SessionState]:
        with self._lock:
            return [self._session_state(*key) for key in sorted(self._sessions)
                    if space is None or key[0] == space]

    def _session_state(self, space: str, session: str) -> SessionState:
        state = self._sessions[(space, session)]
        stored = self._messages.get((space, session), {})
        times = [m.at.timestamp() for m in stored.values()]
        pending = [m.at.timestamp() for s, m in stored.items() if s > state.extracted_upto]
        return SessionState(
            space=space, session=session, extracted_upto=state.extracted_upto,
            dirty_from=state.dirty_from, message_count=len(stored),
            last_message_at=_utc(max(times, default=None)),
            pending_since=_utc(min(pending, default=None)))

    def mark_extracted(self, space: str, session: str, upto: int) -> None:
        with self._lock:
            state = self._sessions.get((space, session))
            if state is None:
                self._sessions[(space, session)] = _Session(extracted_upto=upto)
            else:
                state.extracted_upto = max(state.extracted_upto, upto)
                state.dirty_from = None

    # ------------------------------------------------------------ events
    def create_event(self, event: Event) -> Event:
        key = (event.space, event.id)
        with self._lock:
            if key in self._events:
                raise ConflictError(f"event {event.id} already exists")
            self._events[key] = event.model_copy(deep=True)
            self._versions[key] = [event.model_copy(deep=True)]
        return event

    def update_event(self, event: Event, expected_version: int) -> Event:
        new = event.model_copy(update={"version": expected_version + 1})
        key = (new.space, new.id)
        with self._lock:
            current = self._events.get(key)
            if current is None or current.version != expected_version:
                raise ConflictError(f"event {new.id} is not at version {expected_version}")
            self._events[key] = new.model_copy(deep=True)
            self._versions[key].append(new.model_copy(deep=True))
        return new

    def get_event(self, space: str, event_id: str) -> Event | None:
        with self._lock:
            found = self._events.get((space, event_id))
            return found.model_copy(deep=True) if found else None

    def load_events(self, space: str, ids: Sequence[str]) -> list[Event]:
        with self._lock:
            found = (self._events.get((space, i)) for i in dict.fromkeys(ids))
            return [e.model_copy(deep=True) for e in found if e is not None]

    def list_events(self, space: str, *, start: datetime | None = None,
                    end: datetime | None = None, statuses: Sequence[str] = ("active",),
                    limit: int = 50, cursor: str | None = None,
                    kinds: Sequence[str] | None = None) -> Page:
        after = _decode_cursor(cursor) if cursor else None
        lo = None if start is None else start.timestamp()
        hi = None if end is None else end.timestamp()
        with self._lock:
            rows = sorted(
                ((e.when.start.timestamp(), e.id), e) for (sp, _), e in self._events.items()
                if sp == space and (not statuses or e.status in statuses)
                and (kinds is None or e.kind in kinds)
                and (lo is None or e.when.end.timestamp() > lo)
                and (hi is None or e.when.start.timestamp() < hi))
            if after is not None:
                rows = [r for r in rows if r[0] > after]
            rows = rows[:limit + 1]
            events = [e.model_copy(deep=True) for _, e in rows[:limit]]
        next_cursor = _encode_cursor(*rows[limit - 1][0]) if len(rows) > limit else None
        return Page(events=events, next_cursor=next_cursor)

    def event_history(self, space: str, event_id: str) -> list[Event]:
        with self._lock:
            return [e.model_copy(deep=True) for e in self._versions.get((space, event_id), [])]

    # ------------------------------------------------------------ deliveries
    def add_deliveries(self, space: str, window: str, refs: Sequence[str],
                       at: datetime) -> list[Delivery]:
        with self._lock:
            count = self._recalls.get((space, window), 0)
            out = [Delivery(space=space, window=window, ref=ref, delivered_at=at,
                            recall_count=count) for ref in dict.fromkeys(refs)]
            for d in out:
                key = (space, window, d.ref, at.timestamp())
                self._deliveries.pop(key, None)
                self._deliveries[key] = d.model_copy()
        return out

    def recent_deliveries(self, space: str, window: str, since: datetime) -> list[Delivery]:
        ts = since.timestamp()
        with self._lock:
            found = [(k[3], d) for k, d in self._deliveries.items()
                     if k[:2] == (space, window) and k[3] >= ts]
        found.sort(key=lambda pair: pair[0])  # stable: ties stay in write order, as in SQLite
        return [d.model_copy() for _, d in found]

    def bump_recall_count(self, space: str, window: str) -> int:
        with self._lock:
            count = self._recalls[(space, window)] = self._recalls.get((space, window), 0) + 1
        return count

    def recall_count(self, space: str, window: str) -> int:
        with self._lock:
            return self._recalls.get((space, window), 0)

    def purge_deliveries(self, before: datetime) -> int:
        ts = before.timestamp()
        with self._lock:
            old = [k for k in self._deliveries if k[3] < ts]
            for k in old:
                del self._deliveries[k]
        return len(old)

    # ------------------------------------------------------------ typed records
    def put_record(self, record: Record) -> None:
        with self._lock:
            self._records[(record.KIND, record.scope, record.key)] = record.model_copy(deep=True)

    def get_record(self, kind: type[R], scope: str, key: str = "") -> R | None:
        with self._lock:
            found = self._records.get((kind.KIND, scope, key))
            return found.model_copy(deep=True) if found else None  # type: ignore[return-value]

    def list_records(self, kind: type[R], scope: str) -> list[R]:
        with self._lock:
            found = sorted((k[2], r) for k, r in self._records.items()
                           if k[:2] == (kind.KIND, scope))
            return [r.model_copy(deep=True) for _, r in found]  # type: ignore[misc]

    def delete_records(self, kind: type[R], scope: str, keys: Sequence[str]) -> int:
        with self._lock:
            return sum(self._records.pop((kind.KIND, scope, k), None) is not None for k in keys)


# ------------------------------------------------------------------ search indexes


def _allowed(flt: SearchFilter, kind: str, status: str, start: float, end: float) -> bool:
    return (kind in flt.kinds and status in flt.statuses
            and (flt.end is None or start < flt.end) and (flt.start is None or end > flt.start))


# FtsKeywordIndex hands `tokenize` output to FTS5's unicode61 tokenizer, which splits and
# folds a few characters `tokenize` keeps (its Unicode tables are older): the apostrophe of
# "don't", some kana marks, New Tai Lue vowels, Vedic signs; and Greek/Latin variant forms.
# Exhaustively checked against FTS5 in tests/unit/test_memory_adapters.py.
_FTS_SPLIT = re.compile("['\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3\u3099-\u309c\u30a0\u30fb]+")
_FTS_FOLD = str.maketrans("µſςϐϑϕϖϰϱϵẛ\u1fbe", "μsσβθφπκρεṡι")
_K1, _B = 1.2, 0.75


def fts_tokens(token: str) -> tuple[str, ...]:
    """What FTS5 makes of one `tokenize` token: usually itself; several tokens (a phrase)
    or none for the characters above."""
    return tuple(t for t in _FTS_SPLIT.split(token.translate(_FTS_FOLD)) if t)


@dataclass
class _KeywordDoc:
    doc: IndexDoc
    tokens: tuple[str, ...]
    order: int  # FTS5's rowid: the tie-break among equal scores


class MemoryKeywordIndex:
    """BM25 as FTS5's bm25() computes it (see chalicelib.adapters.sqlite.index): statistics
    over every doc of every space, one idf per query term (a phrase if FTS5 splits it),
    summed in query order, ties by insertion order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._docs: dict[tuple[str, str], _KeywordDoc] = {}
        self._postings: dict[str, dict[tuple[str, str], int]] = {}  # token → doc → tf
        self._n_tokens = 0
        self._next = 0

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        tokenized = [(d, tuple(t for tok in tokenize(d.text) for t in fts_tokens(tok)))
                     for d in docs]
        with self._lock:
            for doc, tokens in tokenized:
                key = (doc.space, doc.id)
                self._remove(key)
                self._next += 1
                self._docs[key] = _KeywordDoc(doc.model_copy(update={"vector": None}), tokens,
                                              self._next)
                self._n_tokens += len(tokens)
                for t in tokens:
                    posting = self._postings.setdefault(t, {})
                    posting[key] = posting.get(key, 0) + 1

    def delete(self, space: str, ids: Sequence[str]) -> None:
        with self._lock:
            for doc_id in ids:
                self._remove((space, doc_id))

    def _remove(self, key: tuple[str, str]) -> None:
        old = self._docs.pop(key, None)
        if old is None:
            return
        self._n_tokens -= len(old.tokens)
        for t in set(old.tokens):
            posting = self._postings[t]
            del posting[key]
            if not posting:
                del self._postings[t]

    def _phrase_tf(self, phrase: tuple[str, ...]) -> dict[tuple[str, str], int]:
        """Occurrences of the phrase per doc (overlapping ones too, as FTS5 counts them)."""
        if not phrase:
            return {}
        first = self._postings.get(phrase[0], {})
        if len(phrase) == 1:
            return first
        n, out = len(phrase), {}
        for key in first:
            tokens = self._docs[key].tokens
            tf = sum(tokens[i:i + n] == phrase for i in range(len(tokens) - n + 1))
            if tf:
                out[key] = tf
        return out

    def keyword_search(self, space: str, query: str, k: int,
                       flt: SearchFilter = ACTIVE) -> list[Hit]:
        return self._search_terms(space, search_terms(query), k, flt)

    def _search_terms(self, space: str, terms: list[str], k: int,
                      flt: SearchFilter) -> list[Hit]:
        """BM25 over tokens already made (search_terms), none made again."""
        phrases = [fts_tokens(t) for t in terms]
        if not phrases or k <= 0:
            return []
        scores: dict[tuple[str, str], float] = {}
        with self._lock:
            n_rows = len(self._docs)
            if not n_rows:
                return []
            avgdl = self._n_tokens / n_rows
            for phrase in phrases:
                tfs = self._phrase_tf(phrase)
                if not tfs:
                    continue
                idf = math.log((n_rows - len(tfs) + 0.5) / (len(tfs) + 0.5))
                idf = idf if idf > 0.0 else 1e-6
                for key, tf in tfs.items():
                    entry = self._docs[key]
                    d = entry.doc
                    if (key[0] != space or d.id in flt.exclude_ids
                            or not _allowed(flt, d.kind, d.status, d.start, d.end)):
                        continue
                    # bm25()'s expression, in its floating-point order
                    length = len(entry.tokens)
                    scores[key] = scores.get(key, 0.0) + idf * (
                        (tf * (_K1 + 1.0)) / (tf + _K1 * (1 - _B + _B * length / avgdl)))
            ranked = sorted(scores, key=lambda key: (-scores[key], self._docs[key].order))
        return [Hit(key[1], scores[key]) for key in ranked[:k]]

    def held_terms(self, space: str, terms: Sequence[str]) -> set[str]:
        """The terms some document of the space holds: a lookup each, in process, of the
        token as it is (tokenizing a stem again can change it: decis → deci)."""
        return {t for t in terms if self._search_terms(space, [t], 1, ACTIVE)}

    def count(self, space: str, flt: SearchFilter = ACTIVE) -> int:
        with self._lock:
            return sum(1 for (sp, _), e in self._docs.items()
                       if sp == space and e.doc.id not in flt.exclude_ids
                       and _allowed(flt, e.doc.kind, e.doc.status, e.doc.start, e.doc.end))


class MemoryVectorIndex:
    """Exact cosine over L2-normalised float32 vectors, per space."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._lock = threading.Lock()
        self._docs: dict[str, dict[str, tuple[IndexDoc, np.ndarray]]] = {}

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        for doc in docs:
            if doc.vector is None or len(doc.vector) != self.dim:
                raise ValueError(f"{doc.id}: vector of dimension {self.dim} required")
        rows = []
        for doc in docs:
            v = np.asarray(doc.vector, np.float32)
            # normalised as NumpyVectorIndex does it, so both store the same float32 bytes
            norm = np.float32(max(float(np.sqrt(v.dot(v))), 1e-12))
            rows.append((doc.model_copy(update={"vector": None}), v / norm))
        with self._lock:
            for doc, v in rows:
                self._docs.setdefault(doc.space, {})[doc.id] = (doc, v)

    def delete(self, space: str, ids: Sequence[str]) -> None:
        with self._lock:
            docs = self._docs.get(space, {})
            for doc_id in ids:
                docs.pop(doc_id, None)

    def vector_search(self, space: str, vector: np.ndarray, k: int,
                      flt: SearchFilter = ACTIVE) -> list[Hit]:
        if k <= 0:
            return []
        with self._lock:
            found = [(doc_id, v) for doc_id, (d, v) in self._docs.get(space, {}).items()
                     if doc_id not in flt.exclude_ids
                     and _allowed(flt, d.kind, d.status, d.start, d.end)]
        if not found:
            return []
        scores = np.stack([v for _, v in found]) @ np.asarray(vector, np.float32)
        best = np.argsort(-scores, kind="stable")[:k]
        return [Hit(found[i][0], float(scores[i])) for i in best.tolist()]

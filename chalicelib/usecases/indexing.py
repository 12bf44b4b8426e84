"""How memories reach the search indexes.

- What each memory looks like to the indexes (`message_doc`, `event_doc`); an embedding also
  reads the other party's turn before it (`embedded_texts`), keywords stay on the memory's
  own words.
- `Indexer`: build, embed and write documents through the ports.
- Three `IndexWriter`s, one chosen at wiring (chalicelib.wiring):
  * `InlineIndexWriter` (tests, bench, `ANNALS_INDEX_MESSAGES=inline`): everything in the call;
  * `OutboxIndexWriter` (local default): a message write only queues its indexing (the
    store's own transaction adds an outbox entry); background lanes index keywords first,
    then vectors; a recall spends a small budget catching up its own space's keywords;
  * `StreamIndexWriter` (AWS): the table stream indexes; `apply_changes` is its worker.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import numpy as np

from chalicelib.domain.cleaning import clean as clean_text
from chalicelib.domain.errors import TooManyRequests
from chalicelib.domain.models import Event, IndexDoc, Message, trusted
from chalicelib.domain.refs import event_ref, message_ref
from chalicelib.domain.textproc import is_cjk
from chalicelib.ports import (
    ChangeRecord,
    Freshness,
    IndexOutbox,
    Lane,
    MessageIngest,
    OutboxEntry,
    Services,
    UpsertOutcome,
)

log = logging.getLogger("annals.indexing")

# How a reply's embedding reads the turn it answers (bench/README.md, "Context in the
# embedding"), measured both ways on both benches:
# - English (and other spaced scripts): e5 reads "the turn before\nthe reply" as one text
#   (the turn cut to CONTEXT_CHARS) — LoCoMo 26/30/42 R@10 0.772, against 0.753 mixing
#   vectors and 0.752 without context;
# - Chinese: the reply's vector mixed with the turn's, own + CONTEXT_WEIGHT × before,
#   normalised — Chinese bench R@5 0.800, against 0.758 as one text: read as one text the
#   companion's question outweighed a short Chinese reply.
CONTEXT_CHARS = 300
CONTEXT_WEIGHT = 0.4
CONTEXT_MAX_GAP = timedelta(hours=1)


def message_text(msg: Message, clean: Callable[[str], str] = clean_text) -> str:
    """Speaker and words are the searchable text: people ask "what did Mel say". The words
    as cleaned (chalicelib.domain.cleaning): no reasoning or status blocks."""
    return f"{msg.speaker}: {clean(msg.content)}"


def event_text(event: Event) -> str:
    names = " ".join(p for p in event.participants if p not in event.summary)
    return " ".join(part for part in (event.title + ".", event.summary, names) if part)


def message_doc(msg: Message, clean: Callable[[str], str] = clean_text) -> IndexDoc:
    ts = msg.at.timestamp()  # trusted: every field is computed here, nothing to check
    return trusted(IndexDoc, id=msg.ref, space=msg.space, kind="message",
                   text=message_text(msg, clean), start=ts, end=ts + 1, status="active",
                   importance=5, vector=None, context_text=None)


def searchable(event: Event) -> bool:
    """Summaries are never search documents: they cite a whole session, so as recall cards
    they would stand in for the precise evidence (prefer_events, dedupe_evidence) and answer
    every question vaguely. They are read through the event list, export and threads."""
    return event.kind != "summary"


def event_doc(event: Event) -> IndexDoc:
    return IndexDoc(id=event.ref, space=event.space, kind="event", text=event_text(event),
                    start=event.when.start.timestamp(), end=event.when.end.timestamp(),
                    status=event.status, importance=event.importance)


def with_context(doc: IndexDoc, msg: Message | None, prev: Message | None,
                 clean: Callable[[str], str] = clean_text) -> IndexDoc:
    """A reply ("Researching adoption agencies") means what it answers ("Any plans for the
    summer?"), so its embedding leans towards the other party's turn before it. Only the
    other party's: a speaker's own previous message is usually another topic; and only a
    turn said shortly before (CONTEXT_MAX_GAP): a message days after the last one opens a
    new exchange, it answers nothing."""
    if msg is None or prev is None or prev.speaker == msg.speaker \
            or msg.at - prev.at > CONTEXT_MAX_GAP:
        return doc
    return doc.model_copy(update={"context_text": message_text(prev, clean)})


def mixes_context(doc: IndexDoc) -> bool:
    """Chinese (CJK) replies mix vectors with their context; others read it as one text."""
    return is_cjk(doc.text)


def embedded_texts(doc: IndexDoc) -> list[str]:
    """What the embedder reads for a document (see CONTEXT_WEIGHT)."""
    if not doc.context_text:
        return [doc.text]
    if mixes_context(doc):
        return [doc.text, doc.context_text]
    return [f"{doc.context_text[:CONTEXT_CHARS]}\n{doc.text}"]


def doc_vector(texts: Sequence[str], vectors: dict[str, np.ndarray]) -> np.ndarray:
    """A document's vector from the vectors of its `embedded_texts`."""
    if len(texts) == 2:
        return mix_context(vectors[texts[0]], vectors[texts[1]])
    return vectors[texts[0]]


def mix_context(own: np.ndarray, context: np.ndarray | None,
                weight: float = CONTEXT_WEIGHT) -> np.ndarray:
    """normalise(own + weight · context); `own` alone when there is no context."""
    if context is None or weight <= 0:
        return own
    mixed = own.astype(np.float64) + weight * context.astype(np.float64)
    norm = float(np.linalg.norm(mixed))
    return (mixed / norm).astype(own.dtype) if norm else own


class Indexer:
    """Documents for messages and events, embedded and written through `services`' ports."""

    def __init__(self, services: Services):
        self.services = services

    # ------------------------------------------------------------ documents
    def _turns(self, space: str, keys: set[tuple[str, int]],
               known: dict[tuple[str, int], Message]) -> dict[tuple[str, int], Message]:
        """`known` plus the stored messages at the other keys, in one read."""
        missing = [k for k in keys if k not in known and k[1] >= 0]
        found = dict(known)
        if missing:
            found.update(((m.session, m.seq), m)
                         for m in self.services.store.load_messages(space, missing))
        return found

    def message_docs(self, messages: Sequence[Message]) -> list[IndexDoc]:
        docs: list[IndexDoc] = []
        for space in dict.fromkeys(m.space for m in messages):
            mine = [m for m in messages if m.space == space]
            turns = self._turns(space, {(m.session, m.seq - 1) for m in mine},
                                {(m.session, m.seq): m for m in mine})
            clean = self.services.clean
            docs += [with_context(message_doc(m, clean), m, turns.get((m.session, m.seq - 1)),
                                  clean)
                     for m in mine]
        return docs

    def event_docs(self, events: Sequence[Event]) -> list[IndexDoc]:
        """An event's embedding leans towards the turn its first message answered, as
        messages do (measured on LoCoMo: R@10 0.773 → 0.789)."""
        docs: list[IndexDoc] = []
        for space in dict.fromkeys(e.space for e in events):
            mine = [e for e in events if e.space == space]
            firsts = {(e.sources[0].session, e.sources[0].seq_start) for e in mine if e.sources}
            turns = self._turns(space, firsts | {(s, q - 1) for s, q in firsts}, {})
            for event in mine:
                doc = event_doc(event)
                if event.sources:
                    s = event.sources[0]
                    doc = with_context(doc, turns.get((s.session, s.seq_start)),
                                       turns.get((s.session, s.seq_start - 1)),
                                       self.services.clean)
                docs.append(doc)
        return docs

    # ------------------------------------------------------------ writing
    def embed(self, docs: Sequence[IndexDoc]) -> list[IndexDoc]:
        """Embed first, write later: if the embedder fails nothing has been written yet.
        Each distinct text once: a turn before a reply in the same batch is also a document
        of it, so its vector serves both."""
        if not docs:
            return []
        read = [embedded_texts(d) for d in docs]
        texts = list(dict.fromkeys(t for each in read for t in each))
        vectors = dict(zip(texts, self.services.embedder.embed_passages(texts), strict=True))
        return [d.model_copy(update={"vector": doc_vector(each, vectors).tolist()})
                for d, each in zip(docs, read, strict=True)]

    def write(self, docs: Sequence[IndexDoc]) -> None:
        if not docs:
            return
        self.services.keywords.upsert(docs)
        if self.services.vectors is not self.services.keywords:  # OpenSearch: one document
            self.services.vectors.upsert(docs)

    def write_keywords(self, docs: Sequence[IndexDoc]) -> None:
        if docs:
            self.services.keywords.upsert(docs)

    def write_vectors(self, docs: Sequence[IndexDoc]) -> None:
        if docs:
            self.services.vectors.upsert(docs)

    def index_events(self, events: Sequence[Event]) -> None:
        events = [e for e in events if searchable(e)]
        active = [e for e in events if e.status == "active"]
        for space in dict.fromkeys(e.space for e in events if e.status != "active"):
            self.unindex(space, [e.ref for e in events if e.space == space
                                 and e.status != "active"])
        self.write(self.embed(self.event_docs(active)))

    def unindex(self, space: str, refs: Sequence[str]) -> None:
        if not refs:
            return
        self.services.keywords.delete(space, refs)
        if self.services.vectors is not self.services.keywords:
            self.services.vectors.delete(space, refs)


# ------------------------------------------------------------------ the writers


class InlineIndexWriter:
    """Everything inside the call: what tests and benchmarks need to see at once."""

    name = "inline"

    def __init__(self, indexer: Indexer):
        self.indexer = indexer
        self.store = indexer.services.store

    def put_messages(self, space: str, session: str, messages: Sequence[Message],
                     now: datetime) -> UpsertOutcome:
        seqs = [m.seq for m in messages]
        stored = {m.seq: m.content_hash
                  for m in self.store.get_messages(space, session, min(seqs), max(seqs))}
        fresh = [m for m in messages if stored.get(m.seq) != m.content_hash]
        # Embed before writing anything: an embedder failure must leave no half-ingested batch.
        docs = {d.id: d for d in self.indexer.embed(self.indexer.message_docs(fresh))}
        outcome = self.store.upsert_messages(space, session, messages, now)
        written = set(outcome.accepted) | set(outcome.changed)
        self.indexer.write([docs[m.ref] for m in messages if m.seq in written and m.ref in docs])
        return outcome

    def index_events(self, events: Sequence[Event]) -> None:
        self.indexer.index_events(events)

    def remove(self, space: str, refs: Sequence[str]) -> None:
        self.indexer.unindex(space, refs)

    def freshen(self, space: str, budget_seconds: float) -> Freshness:
        return Freshness()


class StreamIndexWriter:
    """AWS: the DynamoDB stream delivers every change to `apply_changes`, so a request never
    waits for embeddings or OpenSearch.

    Fairness across spaces is the stream's, not ours: a message's partition key is its
    (space, session) (adapters.dynamodb.keys.messages_pk), and the stream keeps each key's
    changes in order within a shard, which carries the keys of one or more table partitions.
    The indexer reads each shard in batches of 100, one batch per shard at a time (the event
    source's default ParallelizationFactor, 1), in stream order. So spaces on different
    shards never wait for each other, but within a shard it is first in, first out: a
    6,000-message import in space A ahead of space B's new message on the same shard delays
    it by 60 batches, and a small table has a single partition, so a single shard. A
    ParallelizationFactor up to 10 (the stack's event source) would let up to 10 batches of a
    shard run at once, each partition key still in order."""

    name = "stream"

    def __init__(self, services: Services):
        self.store = services.store

    def put_messages(self, space: str, session: str, messages: Sequence[Message],
                     now: datetime) -> UpsertOutcome:
        return self.store.upsert_messages(space, session, messages, now)

    def index_events(self, events: Sequence[Event]) -> None:
        pass  # the stream sees the event items change

    def remove(self, space: str, refs: Sequence[str]) -> None:
        pass  # the stream sees the REMOVE (messages) or the status change (events)

    def freshen(self, space: str, budget_seconds: float) -> Freshness:
        return Freshness()


class OutboxIndexWriter:
    """The local twin of the AWS stream. A message write is durable once its row (and, in the
    same transaction, its queue entries) is in SQLite; indexing follows in two lanes:

    - keyword: tokenize and write FTS rows. The PUT writes them itself, in the transaction
      that stores the messages (the MessageIngest port; concurrent PUTs share one commit):
      keeping the keyword index current costs what it costs whoever does it, and done here
      that cost stays on the path that causes it, while a recall finds every acknowledged
      message at once. The background lane and a recall's budgeted `freshen` pick up what
      other writers left queued (a process without this writer, a migration);
    - vector: embed and write vectors — costly, background only; a recall never waits for it
      and its trace says how many messages are not embedded yet.

    Events (extraction, hand-saved memories) are few and indexed inline.
    """

    name = "outbox"

    def __init__(self, indexer: Indexer, outbox: IndexOutbox, ingest: MessageIngest,
                 keyword_batch: int = 128, vector_batch: int = 32):
        self.indexer = indexer
        self.outbox = outbox
        self.ingest = ingest  # messages and their keyword rows, one transaction
        self.store = indexer.services.store
        self.keyword_batch = keyword_batch
        self.vector_batch = vector_batch
        # Set on every queued write; each background lane waits on its own.
        self.queued = {"keyword": threading.Event(), "vector": threading.Event()}
        self._lanes = {"keyword": threading.Lock(), "vector": threading.Lock()}
        # The space each lane served last: its next batch starts with the space after it
        # (IndexOutbox.take), so the lane goes round the spaces with entries.
        self._served: dict[Lane, str | None] = {"keyword": None, "vector": None}
        self._failures: dict[int, int] = {}  # outbox entry id → failed attempts (isolate)
        self.backlog_limit = 0  # messages queued per space before a PUT is refused; 0: none

    def put_messages(self, space: str, session: str, messages: Sequence[Message],
                     now: datetime) -> UpsertOutcome:
        self._check_backlog(space)
        clean = self.indexer.services.clean
        outcome = self.ingest.put(space, session, messages,
                                  [message_doc(m, clean) for m in messages])
        if outcome.accepted or outcome.changed:
            self.queued["vector"].set()
        return outcome

    def _check_backlog(self, space: str) -> None:
        """Queued work per space is bounded on a server (`backlog_limit`,
        ANNALS_LIMIT_SPACE_BACKLOG, set by `annals serve`): a space with that many messages
        waiting to be embedded takes no more until the lane has caught up a little (429,
        Retry-After ≈ the time to embed a tenth of it at about 20 messages a second) — a
        bulk importer slows down, nobody else's messages wait (the lane is fair besides).
        The CLI, which embeds what it imports itself, has no such limit."""
        limit = self.backlog_limit
        if not limit:
            return
        waiting = self.outbox.pending(space).vector_pending
        if waiting >= limit:
            raise TooManyRequests(
                f"space {space!r} has {waiting} messages waiting to be embedded, its limit "
                "(ANNALS_LIMIT_SPACE_BACKLOG); send the rest when they are",
                retry_after=max(5, min(300, limit // 200)))

    def index_events(self, events: Sequence[Event]) -> None:
        self.indexer.index_events(events)

    def remove(self, space: str, refs: Sequence[str]) -> None:
        self.indexer.unindex(space, refs)

    def freshen(self, space: str, budget_seconds: float) -> Freshness:
        """Index this space's pending keyword entries, a small batch at a time, while the
        budget lasts. It does not wait for the lane's lock: two threads indexing the same
        entry both write the message as it is now, so the work is only done twice, and a
        recall must not wait behind a batch of other spaces' messages."""
        deadline = time.perf_counter() + budget_seconds
        indexed = 0
        while time.perf_counter() < deadline:
            done = self._index("keyword", self.outbox.take("keyword", 32, space))
            indexed += done
            if done == 0:
                break
        pending = self.outbox.pending(space)
        return Freshness(keyword_pending=pending.keyword_pending,
                         vector_pending=pending.vector_pending, indexed_now=indexed)

    def drain(self, lane: Lane, limit: int | None = None, space: str | None = None) -> int:
        """Index one batch of a lane (one thread per lane at a time); returns how many entries
        it consumed. Without a space, a vector batch is shared round-robin by the spaces
        with entries, starting after the one the last batch served (IndexOutbox.take): a
        space's 6,000-message backlog leaves room for another's new message in the very
        next batch. The lane moves on only once a batch is indexed, so after a failure
        `isolate` takes the same one."""
        limit = limit or (self.keyword_batch if lane == "keyword" else self.vector_batch)
        with self._lanes[lane]:
            if space is not None:
                return self._index(lane, self.outbox.take(lane, limit, space))
            entries = self.outbox.take(lane, limit, after=self._served[lane])
            consumed = sum(self._index(lane, part) for part in by_space_smallest_first(entries))
            if entries:
                self._served[lane] = list(dict.fromkeys(e.space for e in entries))[-1]
            return consumed

    def _index(self, lane: Lane, entries: Sequence[OutboxEntry]) -> int:
        """Write the entries' documents, then take them off the queue (so a failure leaves
        them queued for a retry)."""
        if not entries:
            return 0
        messages = self._messages(entries)
        if lane == "keyword":  # keywords read a message's own words only: no context
            self.indexer.write_keywords([message_doc(m, self.indexer.services.clean)
                                         for m in messages])
        else:
            self.indexer.write_vectors(self.indexer.embed(self.indexer.message_docs(messages)))
        self.outbox.done(lane, [e.id for e in entries])
        return len(entries)

    def isolate(self, lane: Lane, now: datetime, attempts: int = 3) -> int:
        """After a batch failed: index its entries one by one, so one bad message does not
        hold up the queue. An entry that fails `attempts` times is quarantined: taken off
        the queue and kept as a JobFailure record (job "index"), shown by /stats. Returns
        the entries quarantined. It takes the batch `drain` took (the lane has not moved on)."""
        quarantined = 0
        with self._lanes[lane]:
            for entry in self.outbox.take(lane, self.keyword_batch if lane == "keyword"
                                          else self.vector_batch, after=self._served[lane]):
                try:
                    self._index(lane, [entry])
                    self._failures.pop(entry.id, None)
                except Exception as exc:
                    tries = self._failures[entry.id] = self._failures.get(entry.id, 0) + 1
                    if tries < attempts:
                        continue
                    self._quarantine(lane, entry, exc, now)
                    quarantined += 1
        return quarantined

    def _quarantine(self, lane: Lane, entry: OutboxEntry, exc: Exception,
                    now: datetime) -> None:
        from chalicelib.domain.records import JobFailure

        ref = message_ref(entry.session, entry.seq)
        log.error("quarantined %s of space %s from the %s lane: %s", ref, entry.space, lane,
                  exc)
        self.store.put_record(JobFailure(
            scope="index", key=f"{entry.space}/{lane}/{ref}", space=entry.space,
            error=f"{type(exc).__name__}: {str(exc)[:300]}", failures=self._failures.pop(
                entry.id, 1), first_at=now, last_at=now, quarantined=True))
        self.outbox.done(lane, [entry.id])

    def drain_all(self, lane: Lane) -> int:
        total = 0
        while consumed := self.drain(lane):
            total += consumed
        return total

    def _messages(self, entries: Sequence[OutboxEntry]) -> list[Message]:
        """The current messages behind the entries (a deleted one is simply gone)."""
        by_space: dict[str, set[tuple[str, int]]] = {}
        for e in entries:
            by_space.setdefault(e.space, set()).add((e.session, e.seq))
        out: list[Message] = []
        for space, keys in by_space.items():
            out += self.store.load_messages(space, sorted(keys))
        return out


def by_space_smallest_first(entries: Sequence[OutboxEntry]) -> list[list[OutboxEntry]]:
    """A shared batch's entries as one part per space, the space with the fewest first: each
    part is embedded and written on its own, so a space's one new message is findable once
    its own small part is, not after the 31 of the backlog it shares the batch with (the
    delay a backlog causes another space stays within the batch under way)."""
    parts: dict[str, list[OutboxEntry]] = {}
    for entry in entries:
        parts.setdefault(entry.space, []).append(entry)
    return sorted(parts.values(), key=len)


# ------------------------------------------------------------------ the AWS stream worker


def changed_docs(indexer: Indexer,
                 record: ChangeRecord) -> tuple[list[IndexDoc], list[tuple[str, str]]]:
    """The documents to write and the (space, ref) pairs to delete for one table change."""
    image = record.new_image or {}
    entity = image.get("entity") or (record.old_image or {}).get("entity")
    if record.event_name == "REMOVE":
        old = record.old_image or {}
        if entity == "message":
            return [], [(old["space"], message_ref(old["session"], int(old["seq"])))]
        if entity == "event":
            return [], [(old["space"], event_ref(old["id"]))]
        return [], []
    if entity == "message":
        return indexer.message_docs([Message.model_validate(image)]), []
    if entity == "event":
        event = Event.model_validate({k: image[k] for k in Event.model_fields if k in image})
        if not searchable(event):
            return [], []
        if event.status != "active":
            return [], [(event.space, event.ref)]
        return indexer.event_docs([event]), []
    return [], []  # versions, sessions, deliveries, records: nothing to index


def apply_changes(services: Services, records: Sequence[ChangeRecord]) -> list[str]:
    """The stream worker: index each change in order. Returns the ids of the records that
    failed — this one and every later one, so a later change to the same item is never
    applied before it (the Lambda reports them as a partial batch failure)."""
    indexer = Indexer(services)
    for position, record in enumerate(records):
        try:
            docs, deletions = changed_docs(indexer, record)
            indexer.write(indexer.embed(docs))
            for space, ref in deletions:
                indexer.unindex(space, [ref])
        except Exception:
            log.exception("indexing stream record %s failed", record.id)
            return [r.id for r in records[position:]]
    return []

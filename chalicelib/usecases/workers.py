"""Background workers of the AWS path, as plain functions of (services, records):

- `handle_extract_batch`: the SQS worker. Jobs are {"kind": "check-session" | "extract-session",
  "space", "session"}; a check extracts only when the session is ready (jobs.session_readiness).
- `handle_stream_batch`: the DynamoDB stream worker. New or changed messages and events are
  embedded and written to the search index; removed messages are taken out of it.

Both return the ids of the records that failed, so the Lambda reports a partial batch failure
and only those are retried (then dead-lettered), never the whole batch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from chalicelib.domain.models import Event, IndexDoc, Message
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.indexing import event_docs, message_docs, prepare_docs, unindex, write_docs
from chalicelib.usecases.jobs import session_readiness
from chalicelib.wiring import Services

log = logging.getLogger("annals.workers")

JOB_KINDS = ("check-session", "extract-session")


@dataclass(frozen=True)
class QueueRecord:
    id: str  # SQS messageId
    body: str


@dataclass(frozen=True)
class StreamRecord:
    id: str  # stream sequence number
    event_name: str  # INSERT | MODIFY | REMOVE
    new_image: dict[str, Any] | None  # plain values (already deserialized)
    old_image: dict[str, Any] | None


def parse_job(body: str) -> dict:
    job = json.loads(body)
    if not isinstance(job, dict) or job.get("kind") not in JOB_KINDS:
        raise ValueError(f"not an extraction job: {body[:200]!r}")
    if not all(isinstance(job.get(k), str) and job[k] for k in ("space", "session")):
        raise ValueError("an extraction job needs a space and a session")
    return job


def run_extract_job(services: Services, job: dict, now: datetime | None = None) -> dict:
    """One job. Safe to run twice: event ids are deterministic over their evidence."""
    now = now or services.clock()
    space, session = job["space"], job["session"]
    if job["kind"] == "check-session":
        state = services.store.get_session(space, session)
        if state is None or session_readiness(services, state, now) is None:
            return {"space": space, "session": session, "extracted": 0, "ready": False}
    events = extract_session(services, space, session, now)
    return {"space": space, "session": session, "extracted": len(events), "ready": True}


def handle_extract_batch(services: Services, records: Sequence[QueueRecord],
                         run: Callable[[Services, dict], dict] = run_extract_job) -> list[str]:
    failed: list[str] = []
    for record in records:
        try:
            job = parse_job(record.body)
        except ValueError as exc:  # a malformed job will never succeed: drop it, loudly
            log.error("dropping SQS message %s: %s", record.id, exc)
            continue
        job["message_id"] = record.id  # the idempotency key: SQS redelivers with the same id
        try:
            result = run(services, job)
            log.info("extraction job done", extra={"job": job, "result": result})
        except Exception:
            log.exception("extraction job failed: %s", job)
            failed.append(record.id)
    return failed


def docs_for(services: Services,
             record: StreamRecord) -> tuple[list[IndexDoc], list[tuple[str, str]]]:
    """The index documents to write and the (space, ref) pairs to delete for one record."""
    image = record.new_image or {}
    entity = image.get("entity") or (record.old_image or {}).get("entity")
    if record.event_name == "REMOVE":
        old = record.old_image or {}
        if entity == "message":
            return [], [(old["space"], f"message:{old['session']}:{old['seq']}")]
        if entity == "event":
            return [], [(old["space"], f"event:{old['id']}")]
        return [], []
    if entity == "message":
        return message_docs(services, [Message.model_validate(image)]), []
    if entity == "event":
        fields = {k: image[k] for k in Event.model_fields if k in image}
        return event_docs(services, [Event.model_validate(fields)]), []
    return [], []  # versions, sessions, deliveries, job state: nothing to index


def handle_stream_batch(services: Services, records: Sequence[StreamRecord]) -> list[str]:
    inline = replace(services, index_inline=True)  # this worker *is* the indexer
    failed: list[str] = []
    for position, record in enumerate(records):
        try:
            docs, deletions = docs_for(inline, record)
            write_docs(inline, prepare_docs(inline, docs))
            for space, ref in deletions:
                unindex(inline, space, [ref])
        except Exception:
            log.exception("indexing stream record %s failed", record.id)
            # Stream batches are ordered: report this and everything after it, so a later
            # change to the same item can never be applied before this one.
            failed.extend(r.id for r in records[position:])
            break
    return failed

"""LLM usage per space and task, kept as typed records (one per task) for `GET …/stats`."""

from __future__ import annotations

from chalicelib.domain.records import LLMUsageRecord
from chalicelib.ports import LLMUsage, Store

COUNTERS = ("calls", "prompt_tokens", "completion_tokens", "failures")


def persist_usage(store: Store, space: str, delta: LLMUsage, task: str,
                  model: str = "") -> LLMUsageRecord:
    """Add `delta` to the space's record for `task` ("extract", "merge")."""
    record = store.get_record(LLMUsageRecord, space, task) or LLMUsageRecord(scope=space,
                                                                              key=task)
    updated = record.model_copy(update={
        **{c: getattr(record, c) + getattr(delta, c) for c in COUNTERS},
        "model": model or record.model})
    store.put_record(updated)
    return updated


def space_usage(store: Store, space: str) -> dict:
    """{"total", "tasks", "model"}: zeros when no LLM call was ever made."""
    records = store.list_records(LLMUsageRecord, space)
    tasks = {r.key: _usage(r).as_dict() for r in records}
    total = LLMUsage()
    for r in records:
        total.add(_usage(r))
    model = next((r.model for r in records if r.model), "")
    return {"total": total.as_dict(), "tasks": tasks, "model": model}


def _usage(record: LLMUsageRecord) -> LLMUsage:
    return LLMUsage(**{c: getattr(record, c) for c in COUNTERS})

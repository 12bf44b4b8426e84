"""Per-space numbers for GET /v1/spaces/{space}/stats: events by status, sessions and
messages, LLM usage (calls, tokens, failures) and the merge pass's state."""

from __future__ import annotations

from chalicelib.adapters.llm import space_usage
from chalicelib.usecases.merge import MERGE_JOB
from chalicelib.wiring import Services

STATUSES = ("active", "archived", "superseded")


def count_events(services: Services, space: str, status: str) -> int:
    total, cursor = 0, None
    while True:
        page = services.store.list_events(space, statuses=(status,), limit=500, cursor=cursor)
        total += len(page.events)
        if not page.next_cursor:
            return total
        cursor = page.next_cursor


def space_stats(services: Services, space: str) -> dict:
    events = {status: count_events(services, space, status) for status in STATUSES}
    sessions = services.store.list_sessions(space)
    merge = services.store.get_job_state(MERGE_JOB, space) or {}
    return {
        "space": space,
        "events": {**events, "total": sum(events.values())},
        "sessions": len(sessions),
        "messages": sum(s.message_count for s in sessions),
        "pending_sessions": sum(1 for s in sessions
                                if s.pending_since is not None or s.dirty_from is not None),
        "extractor": services.extractor.name,
        "llm": {"provider": services.settings.llm,
                "model": services.llm.model if services.llm is not None else None,
                **space_usage(services.store, space)},
        "merge": {"pending": merge.get("pending", 0), "runs": merge.get("runs", 0),
                  "last_merged_at": merge.get("last_merged_at")},
    }

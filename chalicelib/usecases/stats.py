"""Per-space numbers for GET /v1/spaces/{space}/stats: events by status, sessions and
messages, how far the search indexes are behind, LLM usage and the merge pass's state."""

from __future__ import annotations

from chalicelib.domain.records import JobFailure, MergeState
from chalicelib.ports import Services, iter_events
from chalicelib.usecases.llm_usage import space_usage

STATUSES = ("active", "archived", "superseded")


def count_events(services: Services, space: str, status: str, kind: str = "event") -> int:
    """Events of a status; summaries are counted apart (`kind="summary"`): they retell
    events, so counting them as events would inflate the chronicle."""
    return sum(1 for e in iter_events(services.store, space, (status,))
               if (e.kind == "summary") == (kind == "summary"))


JOBS = ("quiet-window", "merge", "cooldown", "index")


def failures(services: Services, space: str) -> list[dict]:
    """Background work that failed for this space (chalicelib.usecases.jobs.isolated)."""
    return [{"job": r.scope, "unit": r.key, "error": r.error, "failures": r.failures,
             "last_at": r.last_at.isoformat(), "quarantined": r.quarantined}
            for job in JOBS for r in services.store.list_records(JobFailure, job)
            if r.space == space]


def space_stats(services: Services, space: str) -> dict:
    events = {status: count_events(services, space, status) for status in STATUSES}
    sessions = services.store.list_sessions(space)
    merge = services.store.get_record(MergeState, space) or MergeState(scope=space)
    fresh = services.index.freshen(space, 0.0)
    return {
        "space": space,
        "events": {**events, "total": sum(events.values())},
        "summaries": count_events(services, space, "active", kind="summary"),
        "sessions": len(sessions),
        "messages": sum(s.message_count for s in sessions),
        "pending_sessions": sum(1 for s in sessions if s.has_unread),
        "indexing": {"writer": services.index.name,
                     "keyword_pending": fresh.keyword_pending,
                     "vector_pending": fresh.vector_pending},
        "extractor": services.extractor.name,
        "merger": services.merger.name,
        "llm": {**space_usage(services.store, space), "provider": services.settings.llm,
                "model": services.llm.model if services.llm is not None else None},
        "failures": failures(services, space),
        "merge": {"pending": merge.pending, "runs": merge.runs,
                  "last_merged_at": merge.last_merged_at.isoformat()
                  if merge.last_merged_at else None},
    }

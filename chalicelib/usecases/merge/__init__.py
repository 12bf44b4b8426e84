"""The merge pass (seed 000): every `merge_every` new events, look at a window of recent events
and apply instructions add / update / delete / keep, through a Merger: the LLM merger when
configured (the offline one when it fails), else the offline one.

`merge_space` runs the pass on one space (the scheduled job in chalicelib.usecases.jobs calls it
per space), writing every change as a new version
(history keeps them all) and keeping the search indexes in step.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from chalicelib.domain.merge import MergeInstruction, MergeResult, apply_instructions
from chalicelib.domain.models import Event, SessionState
from chalicelib.domain.records import MergeState
from chalicelib.ports import ConflictError, LLMError, Services, iter_events, track_usage
from chalicelib.usecases.llm_usage import persist_usage
from chalicelib.usecases.merge.offline import OfflineMerger

log = logging.getLogger("annals.merge")


def written_order(event: Event) -> tuple:
    """The order events were written: creation time, then conversation order."""
    first = event.sources[0] if event.sources else None
    return (event.created_at, first.session if first else "", first.seq_start if first else -1,
            event.when.start, event.id)


def save_result(services: Services, space: str, result: MergeResult) -> MergeResult:
    """Write every change as a new version and keep the indexes in step. A change that lost
    a race (someone edited the event meanwhile) is skipped and reported."""
    store = services.store
    saved = MergeResult(skipped=list(result.skipped))
    for event in result.created:
        try:
            saved.created.append(store.create_event(event))
        except ConflictError as exc:
            saved.skipped.append(f"create {event.id}: {exc}")
    for target, bucket in ((result.updated, saved.updated), (result.superseded,
                                                            saved.superseded)):
        for event in target:
            try:
                bucket.append(store.update_event(event, event.version))
            except ConflictError as exc:
                saved.skipped.append(f"write {event.id}: {exc}")
    services.index.index_events([*saved.created, *saved.updated, *saved.superseded])
    return saved


def plan(services: Services, window: Sequence[Event], new_ids: set[str],
         space: str) -> tuple[list[MergeInstruction], str]:
    """Instructions from the configured merger; when it fails (LLMError), from the offline
    merger. Returns them with the name of the merger that gave them."""
    merger = services.merger
    if services.llm is None:
        return merger.instructions(window, new_ids), merger.name
    with track_usage() as usage:
        try:
            return merger.instructions(window, new_ids), merger.name
        except LLMError as exc:
            log.warning("%s merge failed for %s (%s); offline merger", merger.name, space, exc)
            offline = OfflineMerger(services.embedder, services.settings.merge_similarity)
            return offline.instructions(window, new_ids), "offline-fallback"
        finally:
            if usage.calls or usage.failures:
                persist_usage(services.store, space, usage, "merge", services.llm.model)


def merge_window(services: Services, window: Sequence[Event], new_ids: set[str], space: str,
                 now: datetime, note: Callable[[list[str]], None] | None = None,
                 ) -> tuple[MergeResult, str]:
    """Plan, apply and save one window. `note(ids)` is told the events about to be written
    before any is (merge_space keeps them in MergeState.reindex until the pass is done)."""
    instructions, merger_name = plan(services, window, new_ids, space)
    result = apply_instructions(window, instructions, now, space=space)
    if note is not None and result.changes:
        note([e.id for e in (*result.created, *result.updated, *result.superseded)])
    # the graph's use-cases load with a merge pass, not with the merger (wiring builds one
    # for every process, a cold start that only recalls included)
    from chalicelib.usecases.graph.relations import record_updates

    # `updates` relations (docs/graph.md) before the writes: a retried pass finds these
    # writes done and plans nothing for them again.
    record_updates(services, space, window, instructions, result, now)
    return save_result(services, space, result), merger_name


def finish_indexing(services: Services, space: str, state: MergeState) -> MergeState:
    """A pass that failed part-way left `state.reindex`: what it wrote (or was about to) is
    indexed again as it is now — its retry finds those writes done and would skip them."""
    services.index.index_events(services.store.load_events(space, state.reindex))
    state = state.model_copy(update={"reindex": []})
    services.store.put_record(state)
    return state


def sessions_fingerprint(sessions: Sequence[SessionState]) -> str:
    """Changes whenever extraction can have written events in a space (messages arrived,
    were extracted, edited): the job skips reading an unchanged space's events."""
    h = hashlib.sha256()
    for s in sorted(sessions, key=lambda s: s.session):
        h.update(f"{s.session}|{s.extracted_upto}|{s.message_count}|{s.dirty_from}|"
                 f"{s.pending_since}\x1f".encode())
    return h.hexdigest()[:16]


def merge_space(services: Services, space: str, now: datetime | None = None, *,
                force: bool = False, fingerprint: str | None = None) -> dict:
    """Merge one space if it has `merge_every` new events (or at once with `force`, e.g. the
    consolidate route). New = active events created after the last merge's marker. With a
    `fingerprint` equal to the last one seen, nothing is read: jobs.merge_job's, of the
    space's sessions (sessions_fingerprint) and of the last hand save or graph import
    (KnownSpace.events_at), so every way events arrive moves it."""
    now = now or services.clock()
    settings = services.settings
    state = services.store.get_record(MergeState, space) or MergeState(scope=space)
    if state.reindex:
        state = finish_indexing(services, space, state)
    summary = {"new": state.pending, "merged": False, "created": 0,
               "updated": 0, "superseded": 0, "merger": None}
    if not force and fingerprint is not None and state.fingerprint == fingerprint:
        return summary
    # Summaries are not merged, nor counted as new: they retell events, never duplicate one.
    events = sorted((e for e in iter_events(services.store, space) if e.kind != "summary"),
                    key=written_order)
    new = [e for e in events if state.marker is None or e.created_at > state.marker]
    summary["new"] = len(new)
    if not force and len(new) < settings.merge_every:
        if (state.pending, state.fingerprint) != (len(new), fingerprint):
            services.store.put_record(state.model_copy(update={
                "pending": len(new), "fingerprint": fingerprint}))
        return summary

    def note(ids: list[str]) -> None:
        nonlocal state
        state = state.model_copy(update={"reindex": sorted({*state.reindex, *ids})})
        services.store.put_record(state)

    events = merge_chunks(services, space, events, new, now, summary, note)
    summary["merged"] = True
    if not new and not (summary["created"] or summary["updated"] or summary["superseded"]):
        return summary  # nothing new, nothing done (e.g. a consolidate sent again): no run
    stamps = [e.created_at for e in events] + ([state.marker] if state.marker else [])
    services.store.put_record(state.model_copy(update={
        "marker": max(stamps) if stamps else now, "last_merged_at": now, "pending": 0,
        "runs": state.runs + 1, "fingerprint": fingerprint, "reindex": []}))
    log.info("merge %s: %s", space, summary)
    return summary


def merge_chunks(services: Services, space: str, events: list[Event], new: list[Event],
                 now: datetime, summary: dict,
                 note: Callable[[list[str]], None] | None = None) -> list[Event]:
    """Merge the new events a chunk at a time, each with the events written just before it;
    later chunks see earlier chunks' outcome. Returns the space's events after the merge."""
    settings = services.settings
    step = max(settings.merge_every, settings.merge_window // 2)
    chunks = [new[i:i + step] for i in range(0, len(new), step)] or [[]]
    gone: set[str] = set()
    for chunk in chunks:
        chunk_ids = {e.id for e in chunk}
        before = [e for e in events if e.id not in chunk_ids and e.id not in gone
                  and (not chunk or written_order(e) < written_order(chunk[0]))]
        room = max(0, settings.merge_window - len(chunk))
        window = [*(before[-room:] if room else []), *chunk]
        window = [e for e in window if e.id not in gone]
        result, merger_name = merge_window(services, window, chunk_ids, space, now, note)
        gone |= {e.id for e in result.superseded}
        summary["created"] += len(result.created)
        summary["updated"] += len(result.updated)
        summary["superseded"] += len(result.superseded)
        summary["merger"] = merger_name
        latest = {e.id: e for e in [*result.created, *result.updated]}
        events = [latest.get(e.id, e) for e in events if e.id not in gone]
        events += [e for e in result.created if e.id not in {x.id for x in events}]
    return events

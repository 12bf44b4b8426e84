"""Which spaces exist. A space is known from its sessions, or from a `KnownSpace` record
(`domain.records`) that every write adding events without messages leaves: a hand save
(`events.save_event`: POST …/events, `annals save`, MCP `save_memory`) and a graph import
(`graph_import.import_graph`: POST …/graph, `annals import --format graph`). The record's
`events_at` says when such a write last added events, so the merge job sees that a space
changed without reading its events (`jobs.merge_job`)."""

from __future__ import annotations

from datetime import datetime

from chalicelib.domain.records import KEYS_SCOPE, KnownSpace
from chalicelib.ports import Services


def remember_space(services: Services, space: str, now: datetime | None = None) -> None:
    """Note that `space` got events by a write outside its sessions, after the write: a
    merge pass that read the space before it still finds the record changed after it."""
    services.store.put_record(KnownSpace(scope=KEYS_SCOPE, key=space,
                                         events_at=now or services.clock()))


def known_spaces(services: Services) -> dict[str, KnownSpace]:
    """The KnownSpace records by space."""
    return {r.key: r for r in services.store.list_records(KnownSpace, KEYS_SCOPE)}


def all_spaces(services: Services) -> list[str]:
    """Every space that has sessions, or events saved by hand or imported."""
    found = {s.space for s in services.store.list_sessions(None)}
    found.update(known_spaces(services))
    return sorted(found)

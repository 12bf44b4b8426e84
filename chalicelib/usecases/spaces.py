"""Which spaces exist. A space is known from its sessions, or from a `KnownSpace` record
(`domain.records`) that every write adding events without messages leaves: a hand save
(`events.save_event`: POST …/events, `annals save`, MCP `save_memory`) and a graph import
(`graph_import.import_graph`: POST …/graph, `annals import --format graph`). The record's
`events_at` says when such a write last added events, so the merge job sees that a space
changed without reading its events (`jobs.merge_job`).

Reads of a space nothing was ever written to answer 404 `unknown_space` at the doors that
call `require_space` (app.py's read routes, the CLI's local recall and export): a misspelt
space no longer answers like an empty one."""

from __future__ import annotations

import threading
import weakref
from datetime import datetime

from chalicelib.domain.errors import NotFound
from chalicelib.domain.records import KEYS_SCOPE, KnownSpace
from chalicelib.ports import Services, Store

# The spaces a store was seen to hold, per store object and process. Only the known are
# kept: no route deletes a space, so a known space stays known and nothing need invalidate
# it; an unknown one is read again each time, so a write by another process (the CLI, another
# Lambda) counts at once.
_KNOWN: weakref.WeakKeyDictionary[Store, set[str]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def remember_space(services: Services, space: str, now: datetime | None = None) -> None:
    """Note that `space` got events by a write outside its sessions, after the write: a
    merge pass that read the space before it still finds the record changed after it."""
    services.store.put_record(KnownSpace(scope=KEYS_SCOPE, key=space,
                                         events_at=now or services.clock()))


def known_spaces(services: Services) -> dict[str, KnownSpace]:
    """The KnownSpace records by space."""
    return {r.key: r for r in services.store.list_records(KnownSpace, KEYS_SCOPE)}


def space_known(services: Services, space: str) -> bool:
    """Whether anything was ever written to `space`: sessions (PUT messages, the gateway),
    or a KnownSpace record (a hand save, a graph import). One store read for a space with
    sessions, two for one without; none once this process has seen the space."""
    with _LOCK:
        if space in _KNOWN.get(services.store, ()):
            return True
    found = bool(services.store.list_sessions(space)) or \
        services.store.get_record(KnownSpace, KEYS_SCOPE, space) is not None
    if found:
        with _LOCK:
            _KNOWN.setdefault(services.store, set()).add(space)
    return found


def require_space(services: Services, space: str) -> None:
    """404 `unknown_space` for a read of a space nothing was ever written to."""
    if not space_known(services, space):
        raise NotFound(f"no space {space!r}: nothing was ever written there (messages or "
                       "memories); check its spelling", code="unknown_space")


def all_spaces(services: Services) -> list[str]:
    """Every space that has sessions, or events saved by hand or imported."""
    found = {s.space for s in services.store.list_sessions(None)}
    found.update(known_spaces(services))
    return sorted(found)

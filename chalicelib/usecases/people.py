"""The people of a space: every speaker seen at ingest, one `Person` record each, so recall can
tell a name in a query ("What did Caroline research?") without scanning messages.

Role words and placeholders ("user", "assistant", "{{char}}", "AI", "用户", …:
chalicelib.domain.names.is_placeholder) are speakers but never people: they get no record,
and records a space kept from before are not read back as people."""

from __future__ import annotations

import weakref
from collections.abc import Iterable

from chalicelib.domain.names import is_placeholder
from chalicelib.domain.records import Person
from chalicelib.ports import Services


def known_people(services: Services, space: str) -> set[str]:
    return {p.key for p in services.store.list_records(Person, space)
            if not is_placeholder(p.key)}


# Names this process has already seen stored, per (store, space): the common case — a batch
# from people we know — then costs no read. The set only grows; a stale cache can only cause
# an extra write of a record that exists, never a lost name.
_seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store → {space: names}


def remember_people(services: Services, space: str, names: Iterable[str]) -> None:
    new = {n for n in names if not is_placeholder(n)}
    seen = _seen.setdefault(services.store, {})
    known = seen.setdefault(space, set())
    if new <= known:
        return
    if not known:
        known |= known_people(services, space)
    for name in sorted(new - known):
        services.store.put_record(Person(scope=space, key=name))
    known |= new

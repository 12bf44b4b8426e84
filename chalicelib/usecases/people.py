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
    return space_people(services, space)[0]


def space_people(services: Services, space: str) -> tuple[set[str], set[str]]:
    """(the people of the space, those of them who spoke as the user), in one read."""
    people = [p for p in services.store.list_records(Person, space) if not is_placeholder(p.key)]
    return {p.key for p in people}, {p.key for p in people if p.user}


# Names this process has already seen stored, per (store, space): the common case — a batch
# from people we know — then costs no read. The set only grows; a stale cache can only cause
# an extra write of a record that exists, never a lost name.
_seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store → {space: (names, users)}


def remember_people(services: Services, space: str, names: Iterable[str],
                    users: Iterable[str] = ()) -> None:
    """A record for each new name; `users`, the names that spoke as the user, are marked so
    (a name first seen otherwise is rewritten once it speaks as the user)."""
    new = {n for n in names if not is_placeholder(n)}
    as_user = {n for n in users if n in new}
    seen = _seen.setdefault(services.store, {})
    known, known_users = seen.setdefault(space, (set(), set()))
    if new <= known and as_user <= known_users:
        return
    if not known:
        people, marked = space_people(services, space)
        known |= people
        known_users |= marked
    for name in sorted((new - known) | (as_user - known_users)):
        services.store.put_record(Person(scope=space, key=name, user=name in as_user))
    known |= new
    known_users |= as_user

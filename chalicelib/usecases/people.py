"""The people of a space: every speaker seen at ingest, kept in job state so recall can tell
a name in a query ("What did Caroline research?") without scanning messages."""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable

from chalicelib.wiring import Services

JOB = "people"
GENERIC = {"user", "assistant", "system"}


def known_people(services: Services, space: str) -> set[str]:
    state = services.store.get_job_state(JOB, space) or {}
    return set(state.get("names", []))


# Names this process has already seen stored, per (store, space): the common case — a batch
# from people we know — then costs no read. The set only grows, so a stale cache can only
# cause an extra read, never a lost name (a write always unions with what is stored).
_seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store → {space: names}


def remember_people(services: Services, space: str, names: Iterable[str]) -> None:
    new = {n for n in names if n and n not in GENERIC}
    seen = _seen.setdefault(services.store, {})
    if not new or new <= seen.get(space, set()):
        return
    known = known_people(services, space)
    if not new <= known:
        known = known | new
        services.store.put_job_state(JOB, space, {"names": sorted(known)})
    seen[space] = known


def _name_patterns(person: str) -> list[str]:
    first = person.split()[0]
    return [re.escape(n) for n in dict.fromkeys([person, first]) if len(n) >= 2]


def named_people(query: str, people: Iterable[str]) -> set[str]:
    """People whose full or first name the query contains as a word (case-insensitive)."""
    return {p for p in people
            if any(re.search(rf"(?<![^\W\d_]){n}(?![^\W\d_])", query, re.IGNORECASE)
                   for n in _name_patterns(p))}


def strip_names(query: str, people: Iterable[str]) -> str:
    """The query without the names (and their possessive 's), for matching content only."""
    for person in sorted(people, key=len, reverse=True):
        for n in _name_patterns(person):
            query = re.sub(rf"(?<![^\W\d_]){n}(?:['’]s)?(?![^\W\d_])", " ", query,
                           flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", query).strip()

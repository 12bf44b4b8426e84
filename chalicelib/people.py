"""The people of a space: every speaker seen at ingest, kept in job state so recall can tell
a name in a query ("What did Caroline research?") without scanning messages."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .services import Services

JOB = "people"
GENERIC = {"user", "assistant", "system"}


def known_people(services: Services, space: str) -> set[str]:
    state = services.store.get_job_state(JOB, space) or {}
    return set(state.get("names", []))


def remember_people(services: Services, space: str, names: Iterable[str]) -> None:
    new = {n for n in names if n and n not in GENERIC}
    if not new:
        return
    known = known_people(services, space)
    if not new <= known:
        services.store.put_job_state(JOB, space, {"names": sorted(known | new)})


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

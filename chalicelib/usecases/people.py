"""The people of a space: every speaker seen at ingest, one `Person` record each, so recall can
tell a name in a query ("What did Caroline research?") without scanning messages.

Role words and placeholders ("user", "assistant", "{{char}}", "AI", "用户", …:
chalicelib.domain.names.is_placeholder) are speakers but never people: they get no record,
and records a space kept from before are not read back as people. A user speaking as a
placeholder who tells their own name ("我叫阿梅", "my name is Amy": domain.names.own_name)
is that person from then on: their Person keeps the placeholder as an alias (`name_user`),
extraction and the facts read their turns under the name (`with_names`), and the chat
gateway stores their next turns with it (`speaker_for`). The stored messages keep the
speaker they came with: they are the evidence."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from datetime import datetime

from chalicelib.domain.models import Message
from chalicelib.domain.names import is_placeholder, own_name
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


def name_user(services: Services, space: str, placeholder: str, name: str,
              at: datetime) -> None:
    """The user who spoke as `placeholder` told `name` as theirs: the space's user Person
    takes it, the placeholder kept as its alias."""
    current = services.store.get_record(Person, space, name)
    aliases = list(dict.fromkeys([*(current.aliases if current else []), placeholder]))
    named_at = max(at, current.named_at) if current and current.named_at else at
    if current and current.user and (current.aliases, current.named_at) == (aliases, named_at):
        return
    services.store.put_record(Person(scope=space, key=name, user=True, aliases=aliases,
                                     named_at=named_at))
    known, known_users = _seen.setdefault(services.store, {}).get(space, (set(), set()))
    if known:  # a cache already read: remember_people must not write this one again
        known.add(name)
        known_users.add(name)


def learn_user_names(services: Services, space: str, messages: Sequence[Message]) -> None:
    """The name a placeholder user tells in `messages` (the latest told), recorded."""
    told = [(m, name) for m in messages
            if m.role == "user" and is_placeholder(m.speaker) and (name := own_name(m.content))]
    if told:
        msg, name = max(told, key=lambda pair: (pair[0].at, pair[0].seq))
        name_user(services, space, msg.speaker, name, msg.at)


def named_users(services: Services, space: str) -> dict[str, str]:
    """Each placeholder a user spoke as (case-folded) → the name they told, the latest told
    winning; "user" (whom facts.person_of calls any unnamed user) → the latest of all."""
    people = sorted((p for p in services.store.list_records(Person, space)
                     if p.user and p.aliases and p.named_at),
                    key=lambda p: p.named_at or datetime.min)
    out = {alias.casefold(): p.key for p in people for alias in p.aliases}
    if people:
        out["user"] = people[-1].key
    return out


def called(names: dict[str, str], placeholder: str) -> str | None:
    """The name a user speaking as `placeholder` told: as that very placeholder, else the
    latest told (a space is one user's memory, as facts.person_of reads it)."""
    return names.get(placeholder.casefold()) or names.get("user")


def with_names(messages: Sequence[Message], names: dict[str, str]) -> list[Message]:
    """The user turns spoken as a placeholder, under the name that user told (`named_users`;
    copies: the stored messages keep their speaker)."""
    out = []
    for msg in messages:
        name = called(names, msg.speaker) if msg.role == "user" and names \
            and is_placeholder(msg.speaker) else None
        out.append(msg.model_copy(update={"speaker": name}) if name else msg)
    return out


def speaker_for(services: Services, space: str, speaker: str, text: str, at: datetime) -> str:
    """Who a user turn is by: `speaker`, unless it is a role placeholder — then the name the
    turn tells (recorded, `name_user`), else the name told before as that placeholder."""
    if not is_placeholder(speaker):
        return speaker
    name = own_name(text)
    if name:
        name_user(services, space, speaker, name, at)
        return name
    return called(named_users(services, space), speaker) or speaker

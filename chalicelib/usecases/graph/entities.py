"""Entities of a space (docs/graph.md): found in each new event's title, summary and evidence
(chalicelib.domain.entities), merged with the ones already known by name or a safe alias,
one `Entity` record each. Reading them for the routes."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from chalicelib.domain.entities import (
    Mention,
    capitalised_mid_sentence,
    entity_id,
    find_mentions,
    normalise,
    same_entity,
    verbatim,
)
from chalicelib.domain.errors import NotFound
from chalicelib.domain.models import Event
from chalicelib.domain.records import Entity
from chalicelib.ports import Services
from chalicelib.usecases.events import evidence
from chalicelib.usecases.graph.models import EntityDetail, EntityList, EntitySummary
from chalicelib.usecases.people import known_people


def event_texts(services: Services, event: Event) -> tuple[list[str], list[str]]:
    """(what to search, what a name must occur in verbatim): the title, the summary and the
    evidence — searched as the extractor read it (services.clean), checked as stored."""
    raw = [m.content for m in evidence(services, event)]
    searched = [event.title, event.summary, *(services.clean(t) for t in raw)]
    return searched, [event.title, event.summary, *raw]


def event_mentions(services: Services, event: Event, people: Sequence[str],
                   known: Sequence[Mention] = (), seen: Collection[str] = ()) -> list[Mention]:
    """Every entity the event names, each once, each verbatim in its text or evidence.
    A word capitalised mid-sentence in any of its texts (or in `seen`: the batch's other
    events) makes the same word a name where it opens a sentence (domain.entities)."""
    searched, stored = event_texts(services, event)
    places = [event.location] if event.location else []
    capitals = {*seen, *(w for text in searched for w in capitalised_mid_sentence(text))}
    found: dict[str, Mention] = {}
    for text in searched:
        for m in find_mentions(text, people=[*event.participants, *people], places=places,
                               known=known, seen=capitals):
            if any(m.name in s for s in stored):
                key = normalise(m.name)
                if key not in found or (found[key].kind == "thing" and m.kind != "thing"):
                    found[key] = m  # a surer kind, from another text, wins over "thing"
    return list(found.values())


class Resolver:
    """The space's entities in memory while a batch of events is linked: a mention becomes
    an existing entity (same name or alias, or a safe alias: domain.entities.same_entity) or
    a new one. `changed` names the records to write."""

    def __init__(self, entities: Sequence[Entity]):
        self.entities: dict[str, Entity] = {e.key: e for e in entities}
        self.changed: set[str] = set()

    def resolve(self, mention: Mention, space: str, now: datetime) -> Entity:
        key = normalise(mention.name)
        for entity in self.entities.values():
            if key in {normalise(n) for n in (entity.name, *entity.aliases)}:
                return self._alias(entity, mention)
        alike = [e for e in self.entities.values()
                 if any(same_entity(mention.name, mention.kind, n, e.kind)
                        for n in (e.name, *e.aliases))]
        if len(alike) == 1:  # one candidate only: two would make the alias a guess
            return self._alias(alike[0], mention)
        entity = Entity(scope=space, key=entity_id(mention.name), name=mention.name,
                        kind=mention.kind, updated_at=now)
        self.entities[entity.key] = entity
        self.changed.add(entity.key)
        return entity

    def known(self) -> list[Mention]:
        """Every name and alias of the entities, to be found again in later events: a
        person the rules found once ("Tom and I …") is Tom wherever Tom is written."""
        return [Mention(n, e.kind) for e in self.entities.values()
                for n in (e.name, *e.aliases)]

    def _alias(self, entity: Entity, mention: Mention) -> Entity:
        changes: dict = {}
        if mention.name != entity.name and mention.name not in entity.aliases:
            changes["aliases"] = [*entity.aliases, mention.name]
        if entity.kind == "thing" and mention.kind != "thing":
            changes["kind"] = mention.kind  # a later, surer kind wins over "thing"
        if changes:
            entity = entity.model_copy(update=changes)
            self.entities[entity.key] = entity
            self.changed.add(entity.key)
        return entity

    def link(self, entity: Entity, event_id: str, now: datetime) -> None:
        entity = self.entities[entity.key]
        if event_id not in entity.events:
            self.entities[entity.key] = entity.model_copy(
                update={"events": [*entity.events, event_id], "updated_at": now})
            self.changed.add(entity.key)


def link_entities(services: Services, space: str, events: Sequence[Event],
                  now: datetime,
                  hints: Mapping[str, Sequence[tuple[str, str]]] | None = None
                  ) -> dict[str, Entity]:
    """Find and record the entities of `events`; returns every entity of the space by id.
    `hints`: names an LLM extractor gave per event id, (name, kind) — kept only where verbatim
    in the event's text or evidence, like the rules' own. Idempotent: an event already
    linked, a name already known, change nothing."""
    resolver = Resolver(services.store.list_records(Entity, space))
    people = sorted(known_people(services, space))
    seen = {w for event in events for text in event_texts(services, event)[0]
            for w in capitalised_mid_sentence(text)}
    for event in events:
        found = event_mentions(services, event, people, resolver.known(), seen)
        found += hinted_mentions(services, event, (hints or {}).get(event.id, ()), found)
        for mention in found:
            resolver.link(resolver.resolve(mention, space, now), event.id, now)
    for key in sorted(resolver.changed):
        services.store.put_record(resolver.entities[key])
    return resolver.entities


def hinted_mentions(services: Services, event: Event, hints: Sequence[tuple[str, str]],
                    found: Sequence[Mention]) -> list[Mention]:
    """The LLM's names for an event that the rules did not find, each verbatim in the stored
    title, summary or evidence (a name the model made up, or rephrased, is dropped)."""
    if not hints:
        return []
    _, stored = event_texts(services, event)
    seen = {normalise(m.name) for m in found}
    out: list[Mention] = []
    for name, kind in hints:
        if normalise(name) not in seen and verbatim(name, stored):
            seen.add(normalise(name))
            out.append(Mention(name, kind))  # type: ignore[arg-type]  # kinds checked by llm.py
    return out


def entities_by_event(entities: dict[str, Entity]) -> dict[str, list[Entity]]:
    out: dict[str, list[Entity]] = {}
    for entity in entities.values():
        for event_id in entity.events:
            out.setdefault(event_id, []).append(entity)
    return out


# ------------------------------------------------------------------ reading


def list_entities(services: Services, space: str, kind: str | None = None) -> EntityList:
    entities = services.store.list_records(Entity, space)
    chosen = [e for e in entities if kind is None or e.kind == kind]
    chosen.sort(key=lambda e: (-len(e.events), e.name.casefold(), e.key))
    return EntityList(entities=[EntitySummary.of(e) for e in chosen])


def get_entity(services: Services, space: str, entity_id_: str) -> EntityDetail:
    entity = services.store.get_record(Entity, space, entity_id_)
    if entity is None:
        raise NotFound(f"no entity {entity_id_!r} in space {space!r}")
    events = services.store.load_events(space, entity.events)
    events.sort(key=lambda e: (e.when.start, e.created_at, e.id))
    return EntityDetail(**EntitySummary.of(entity).model_dump(), events=events)

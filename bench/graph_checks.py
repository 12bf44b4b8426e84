"""Checks of the memory graph a bench run built (not scores): every stored entity name and
alias occurs verbatim in the text or evidence of an event it links to (issue 13: "every stored
entity name is found verbatim in its sources"), and what the graph holds."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.records import Entity, Relation, Thread
from chalicelib.usecases.graph.entities import event_texts


def entity_check(services: Any, space: str) -> dict[str, Any]:
    """Counts of entities, names checked and names not found verbatim (with examples)."""
    store = services.store
    entities = store.list_records(Entity, space)
    texts: dict[str, list[str]] = {}
    names = 0
    missing: list[dict[str, str]] = []
    for entity in entities:
        sources: list[str] = []
        for event_id in entity.events:
            if event_id not in texts:
                event = store.get_event(space, event_id)
                texts[event_id] = event_texts(services, event)[1] if event else []
            sources.extend(texts[event_id])
        for name in (entity.name, *entity.aliases):
            names += 1
            if not any(name in text for text in sources):
                missing.append({"entity": entity.key, "name": name})
    threads = store.list_records(Thread, space)
    relations = store.list_records(Relation, space)
    return {"entities": len(entities), "names": names, "not_verbatim": len(missing),
            "examples": missing[:5], "threads": len(threads),
            "threaded_events": sum(len(t.events) for t in threads),
            "relations": len(relations)}

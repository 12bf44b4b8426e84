"""The whole graph of a space as one JSON document (GET / POST …/graph): events of every
status with the entities, threads and relations between them. An import writes them into a
space (records re-scoped to it; events that exist are left as they are), indexes the
events through the normal index port, so keywords and vectors are rebuilt there, and records
the space (usecases.spaces), which may have no sessions.

`write_graph` writes; who indexes, in the request or as a job, is
chalicelib.usecases.graph_import's."""

from __future__ import annotations

from chalicelib.domain.deadline import check_deadline
from chalicelib.domain.models import Event
from chalicelib.domain.records import Entity, Relation, SummaryFold, Thread
from chalicelib.ports import ConflictError, Services, iter_events
from chalicelib.usecases.graph.models import GraphDocument, GraphImport
from chalicelib.usecases.spaces import remember_space

ALL_STATUSES = ("active", "archived", "superseded")


def export_graph(services: Services, space: str) -> GraphDocument:
    store = services.store
    return GraphDocument(
        space=space, events=list(iter_events(store, space, ALL_STATUSES)),
        entities=store.list_records(Entity, space), threads=store.list_records(Thread, space),
        relations=store.list_records(Relation, space),
        folds=store.list_records(SummaryFold, space))


def write_graph(services: Services, space: str,
                doc: GraphDocument) -> tuple[GraphImport, list[Event]]:
    """Write `doc` into `space` (not indexed yet); the counts and the events it created.
    Idempotent: importing the same document twice creates nothing the second time (existing
    events are kept, records are rewritten as given)."""
    store = services.store
    created: list[Event] = []
    existing = 0
    for event in doc.events:
        check_deadline()  # before any write of this event: an import cut here is retried whole
        event = event.model_copy(update={"space": space})
        try:
            created.append(store.create_event(event))
        except ConflictError:
            existing += 1
    for group in (doc.entities, doc.threads, doc.relations, doc.folds):
        for record in group:
            store.put_record(record.model_copy(update={"scope": space}))
    remember_space(services, space)  # listed (GET /v1/spaces) and merged, with no sessions
    return GraphImport(space=space, events_created=len(created), events_existing=existing,
                       entities=len(doc.entities), threads=len(doc.threads),
                       relations=len(doc.relations), folds=len(doc.folds)), created

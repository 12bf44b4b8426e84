"""POST …/graph: a graph document written into a space, then indexed (chalicelib.usecases.
graph.transfer writes it).

The writes are the bounded part (a body is at most 2 MB) and happen in the request; the
indexing — embedding every event, up to 2 windows of the model each (≈ 1.2 s for a
4,000-character summary here) — is not: past IMPORT_INLINE_EVENTS events or
IMPORT_INLINE_CHARS characters it becomes a background job ("import-index", IMPORT_STEP
events a step; GET …/jobs/{id}), and the answer is 202 with it. Until the job has indexed an
event, recall does not find it. The job indexes every event of the document, created or
existing, so an import retried after a failure (its first answer lost) leaves none unindexed.
"""

from __future__ import annotations

from typing import Any

from chalicelib.domain.models import Event
from chalicelib.domain.records import Job
from chalicelib.ports import Services
from chalicelib.usecases import background
from chalicelib.usecases.graph.models import GraphDocument, GraphImport
from chalicelib.usecases.graph.transfer import write_graph
from chalicelib.usecases.indexing import event_text

IMPORT_INLINE_EVENTS = 8  # at most this many events are indexed in the request…
IMPORT_INLINE_CHARS = 8_000  # …and at most this much of their text (≈ 2 s of embedding)
IMPORT_STEP = 8  # events a step of the import-index job indexes
IMPORT_INDEX = "import-index"


def import_graph(services: Services, space: str, doc: GraphDocument, *,
                 later: bool = True) -> GraphImport:
    """Write `doc` into `space` and index its events: in the call when the document is small
    or `later` is False (the CLI, which runs in the user's own process), else by a job."""
    result, created = write_graph(services, space, doc)
    if not later or index_inline(doc.events):
        services.index.index_events(created)
        return result
    job = background.submit(services, space, IMPORT_INDEX,
                            {"events": list(dict.fromkeys(e.id for e in doc.events))})
    return result.model_copy(update={"job": background.JobView.of(job)})


def index_inline(events: list[Event]) -> bool:
    return (len(events) <= IMPORT_INLINE_EVENTS
            and sum(len(event_text(e)) for e in events) <= IMPORT_INLINE_CHARS)


def _estimate(services: Services, space: str, params: dict[str, Any]) -> int:
    return len(params.get("events") or [])


def _plan(services: Services, job: Job) -> None:
    job.state = {"done": 0}
    job.progress.total = len(job.params.get("events") or [])
    job.result = {"indexed": 0}


def _run(work: background.JobRun) -> bool:
    """IMPORT_STEP events a step, as they are stored now (one deleted since is skipped). No
    traffic gate around a step: it is embedding, which runs outside the GIL at the worker's
    lower priority, and a writer's slot held for it would keep PUTs waiting."""
    job = work.job
    ids = list(job.params.get("events") or [])
    while job.state["done"] < len(ids):
        if work.should_stop():
            return False
        part = ids[job.state["done"]:job.state["done"] + IMPORT_STEP]
        events = work.services.store.load_events(job.space, part)
        work.services.index.index_events(events)
        job.state["done"] += len(part)
        job.progress.done = job.state["done"]
        job.result = {"indexed": int((job.result or {}).get("indexed", 0)) + len(events)}
        work.step_done()
    return True


IMPORT_INDEX_JOB = background.register(background.JobKind(
    name=IMPORT_INDEX, unit="events", plan=_plan, run=_run, estimate=_estimate))

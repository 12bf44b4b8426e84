"""`annals serve`: the Chalice app behind waitress (a production WSGI server: a bounded thread
pool, buffered slow clients, request size limits), the background indexing lanes, the
background-job worker (chalicelib.local.worker) and the in-process scheduler (unless
ANNALS_SCHEDULE=off).

SIGTERM and SIGINT stop it gracefully: no new connections, requests in flight finish, the
scheduler stops, a background job finishes the step under way (the rest waits, queued, for
the next start), the keyword lane indexes what is queued (the vector queue stays on disk for
the next start), and the database is closed.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import time

from chalicelib.api.auth import resolve_api_key
from chalicelib.api.http import MAX_BODY_BYTES
from chalicelib.config import Settings, parse_origins
from chalicelib.local.cors import CORS
from chalicelib.local.indexer import BackgroundIndexer
from chalicelib.local.scheduler import Scheduler
from chalicelib.local.worker import JobWorker
from chalicelib.local.wsgi import ChaliceWSGI
from chalicelib.usecases.indexing import OutboxIndexWriter
from chalicelib.usecases.limits import Limits, RequestLimiter
from chalicelib.wiring import build_services, set_services

log = logging.getLogger("annals.serve")

THREADS = 8  # waitress worker threads; the traffic gate keeps writes to a few of them
RESERVED_THREADS = 2  # never held by limited requests (health, public paths: see above)
READ_THREADS = 2  # of the limited ones, never held by writes (a recall always finds one)
SWITCH_INTERVAL = 0.001  # seconds a thread may hold the GIL while another waits (default 5 ms)


def json_errors() -> None:
    """waitress answers some requests itself, before the app sees them (a malformed request
    line, headers over its limit: 400, 431, 501 …), in plain text. Every Annals response body
    is {"error": {"code", "message"}} JSON, so its error pages are rendered that way too
    (waitress has no hook for this; `Error.to_response` is the one place they are made)."""
    import json

    from waitress.utilities import Error

    def to_response(self, ident=None):
        code = self.reason.lower().replace(" ", "_")
        body = json.dumps({"error": {"code": code, "message": f"{self.reason}: {self.body}"}})
        return (f"{self.code} {self.reason}",
                [("Content-Type", "application/json; charset=utf-8")], body.encode())

    Error.to_response = to_response


def request_limiter(settings: Settings) -> RequestLimiter:
    """The limits per key and per space of this server (chalicelib.usecases.limits); two of
    its threads are never given to limited requests: /v1/health and the next small request
    always find one; of the others, writes may hold all but READ_THREADS."""
    in_flight = THREADS - RESERVED_THREADS
    return RequestLimiter(Limits(
        key_concurrent=settings.limit_key_concurrent,
        key_concurrent_writes=settings.limit_key_concurrent_writes,
        space_concurrent=settings.limit_space_concurrent,
        space_concurrent_writes=settings.limit_space_concurrent_writes,
        key_rate=settings.limit_key_rate, key_burst=settings.limit_key_burst,
        key_read_reserve=settings.limit_key_read_reserve,
        key_write_floor=settings.limit_key_write_floor,
        in_flight=in_flight, in_flight_writes=in_flight - READ_THREADS))


def tune_for_latency() -> None:
    """A recall waiting for the interpreter gets it within 1 ms instead of 5 ms: latency is
    what this server is for (measured with `annals bench load --mixed`)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


def serve(host: str = "127.0.0.1", port: int = 8000, settings: Settings | None = None) -> None:
    from waitress import create_server

    settings = settings or Settings()
    services = build_services(settings)
    services.limits = request_limiter(settings)
    set_services(services)
    resolve_api_key(settings)  # prints a newly generated key once, before the first request
    tune_for_latency()
    # Load the embedding model in the background so the first request does not pay for it,
    # and the dictionary the gate reads a memory in the other language through (about 1 s).
    threading.Thread(target=services.embedder.embed_query, args=("warm up",), daemon=True).start()
    if services.glossary is not None:
        threading.Thread(target=services.glossary.in_chinese, args=("warm",), daemon=True).start()

    from app import app  # the same Chalice object that Lambda runs

    json_errors()
    wsgi = ChaliceWSGI(app, MAX_BODY_BYTES)
    if origins := parse_origins(settings.cors_origins):  # checked at start, not per request
        wsgi = CORS(wsgi, origins)
    server = create_server(wsgi, host=host, port=port, threads=THREADS,
                           # our own limit answers in JSON; waitress's only stops absurd ones
                           max_request_body_size=16 * MAX_BODY_BYTES, channel_timeout=60,
                           ident="annals")
    lanes = None
    if isinstance(services.index, OutboxIndexWriter):
        services.index.backlog_limit = settings.limit_space_backlog
        lanes = BackgroundIndexer(services.index, services.traffic)
        lanes.start()
    worker = JobWorker(services, services.traffic)  # jobs run with the scheduler off too
    worker.start()
    scheduler = None
    if settings.schedule == "on":
        scheduler = Scheduler(services, settings.sweep_seconds)
        scheduler.start()

    def stop(signum, _frame) -> None:
        log.info("signal %s: shutting down", signum)
        stop_gracefully(server, settings.drain_seconds)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    print(f"Annals {settings.backend} API on http://{host}:{server.effective_port} · data in "
          f"{settings.data_dir} · scheduler {settings.schedule}", flush=True)
    try:
        server.run()
    except (KeyboardInterrupt, OSError):
        pass
    finally:
        shutdown(services, scheduler, lanes, worker)


def stop_gracefully(server, drain_seconds: float) -> None:
    """Stop accepting, let the requests in flight finish and their answers go out, then end
    the loop. Waitress's own close() shuts the wake-up pipe at once, so a worker finishing a
    request afterwards died writing to it (EBADF) and its answer was lost; here the listening
    socket closes first and everything else once the workers are idle (bounded by
    drain_seconds, ANNALS_DRAIN_SECONDS)."""
    from waitress import wasyncore

    # The listening socket only (no new connections), closed in the loop's own thread: closed
    # here, in the signal handler, the select call it interrupted would resume on a dead fd.
    server.trigger.pull_trigger(lambda: wasyncore.dispatcher.close(server))

    def drain() -> None:
        dispatcher = server.task_dispatcher
        deadline = time.monotonic() + drain_seconds
        while time.monotonic() < deadline and (dispatcher.active_count or dispatcher.queue
                                               or _writing(server)):
            time.sleep(0.02)
        # In the loop's own thread: close every channel and the trigger; an empty map ends
        # the loop, and run() returns. If the loop has ended already (a second signal), the
        # trigger is closed and there is nothing left to end.
        with contextlib.suppress(OSError):
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))

    threading.Thread(target=drain, name="annals-drain", daemon=True).start()


def _writing(server) -> bool:
    """Whether an answer is still being sent on some connection."""
    return any(getattr(ch, "total_outbufs_len", 0) for ch in list(server._map.values()))


def shutdown(services, scheduler: Scheduler | None, lanes: BackgroundIndexer | None,
             worker: JobWorker | None = None) -> None:
    if scheduler:
        scheduler.stop()
    if worker is not None:
        worker.stop()
    if lanes is not None:
        lanes.stop()
        services.index.drain_all("keyword")  # cheap; vectors wait on disk for the next start
    print("Annals stopped", flush=True)

"""`annals serve`: the Chalice app on Chalice's own local HTTP server (threaded), plus the
in-process scheduler unless ANNALS_SCHEDULE=off."""

from __future__ import annotations

import logging
import threading

from chalice.config import Config
from chalice.local import create_local_server

from chalicelib.api.auth import resolve_api_key
from chalicelib.config import Settings
from chalicelib.local.indexer import BackgroundIndexer
from chalicelib.local.scheduler import Scheduler
from chalicelib.usecases.indexing import OutboxIndexWriter
from chalicelib.wiring import build_services, set_services

log = logging.getLogger("annals.serve")


def serve(host: str = "127.0.0.1", port: int = 8000, settings: Settings | None = None) -> None:
    settings = settings or Settings()
    services = build_services(settings)
    set_services(services)
    resolve_api_key(settings)  # prints a newly generated key once, before the first request
    # Load the embedding model in the background so the first request does not pay for it.
    threading.Thread(target=services.embedder.embed_query, args=("warm up",), daemon=True).start()

    from app import app  # the same Chalice object that Lambda runs

    server = create_local_server(app, Config(chalice_stage="local"), host, port)
    indexer = None
    if isinstance(services.index, OutboxIndexWriter):
        indexer = BackgroundIndexer(services.index)
        indexer.start()
    scheduler = None
    if settings.schedule == "on":
        scheduler = Scheduler(services, settings.sweep_seconds)
        scheduler.start()
    print(f"Annals {settings.backend} API on http://{host}:{port} · data in {settings.data_dir}"
          f" · scheduler {settings.schedule}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if scheduler:
            scheduler.stop()
        if indexer is not None:
            indexer.stop()
        server.server.server_close()

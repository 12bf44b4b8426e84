"""In-process scheduler for `annals serve`: runs the same job functions that the
`@app.schedule` Lambda handlers run in AWS (chalicelib.usecases.jobs.JOBS), on a timer thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from chalicelib.ports import Services
from chalicelib.usecases.jobs import JOBS, run_job

log = logging.getLogger("annals.scheduler")


class Scheduler:
    def __init__(self, services: Services, interval_seconds: float,
                 jobs: list[str] | None = None,
                 on_result: Callable[[dict], None] | None = None):
        self.services = services
        self.interval = interval_seconds
        self.jobs = jobs if jobs is not None else list(JOBS)
        self.on_result = on_result
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="annals-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def tick(self) -> list[dict]:
        """Run every job once. A failing job is logged and does not stop the others."""
        results = []
        for name in self.jobs:
            try:
                result = run_job(name, self.services).as_dict()
            except Exception:
                log.exception("scheduled job %s failed", name)
                continue
            results.append(result)
            if self.on_result:
                self.on_result(result)
        return results

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.tick()

"""The fault sweep shared by tests/faults/test_sqlite.py and test_aws.py: run the scenario
once per fault on a fresh backend and compare the final state with the fault-free run's.
(Two test files so that `pytest -n 2 --dist loadfile` runs the two sweeps side by side.)"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tests.faults import scenario
from tests.faults.backends import run_once
from tests.faults.injector import FaultPlan

KEEP_GOING = bool(os.environ.get("ANNALS_FAULTS_KEEP_GOING"))  # list every difference


@dataclass
class Fault:
    """One run's fault: a label, where, and how to arm it (on the plan, or the backend)."""

    kind: str
    where: str
    arm: Callable[[FaultPlan, object], None]


@dataclass
class Tally:
    backend: str
    runs: int = 0
    write_calls: int = 0
    injected: Counter = field(default_factory=Counter)
    retried: int = 0
    unavailable: int = 0
    redelivered: int = 0

    def line(self) -> str:
        return (f"[faults] {self.backend}: {self.write_calls} write calls in the scenario, "
                f"{self.runs} runs; faults injected {dict(sorted(self.injected.items()))} "
                f"(total {sum(self.injected.values())}); {self.unavailable} answers 503, "
                f"{self.retried} requests retried; {self.redelivered} stream deliveries "
                f"retried")


def sweep(backend_cls, root, faults: Sequence[Fault], expected: dict, tally: Tally,
          count: Callable[[FaultPlan, object], Counter]) -> None:
    """Run the scenario once per fault on a fresh backend and compare the final state."""
    for fault in faults:
        tally.runs += 1
        plan = FaultPlan()
        got, stats, backend = run_once(backend_cls, root, tally.runs, plan,
                                       arm=lambda b, f=fault, p=plan: f.arm(p, b))
        injected = count(plan, backend)
        assert sum(injected.values()), f"{fault.kind} at {fault.where}: nothing was injected"
        if KEEP_GOING:
            try:
                scenario.check_equal(expected, got, f"{fault.kind} at {fault.where}")
            except AssertionError as exc:
                print(exc)
        else:
            scenario.check_equal(expected, got, f"{fault.kind} at {fault.where}")
        tally.injected.update(injected)
        tally.retried += stats.retried
        tally.unavailable += stats.unavailable
        tally.redelivered += getattr(backend, "redelivered", 0)


def report(tally: Tally, record_property) -> None:
    print("\n" + tally.line())
    record_property("faults", tally.line())


def plan_counts(plan: FaultPlan, backend) -> Counter:
    return plan.counts()


def fail_call(kind: str, target: str, method: str, nth: int, error, phase="before") -> Fault:
    def arm(plan: FaultPlan, backend) -> None:
        plan.fail(target, method, nth=nth, error=error, phase=phase)
    return Fault(kind, f"{target}.{method} #{nth}", arm)

"""Fault injection for tests: a proxy around any adapter (Store, KeywordIndex, VectorIndex,
WorkQueue, IndexOutbox, MessageIngest — or a raw boto3 client) that makes chosen calls fail.

    plan = FaultPlan()
    store = plan.wrap(SQLiteStore(db), "store")
    plan.fail("store", "create_event", nth=2, error=sqlite_locked)      # the 2nd call only
    plan.fail_until("store", "put_record", failures=3, error=throttled)  # every call until 3 failed
    plan.fail("dynamodb", "transact_write_items", nth=1, error=read_timeout, phase="after")
    plan.race("store", "update_event", nth=1, racer=lambda m, a, kw: other.update_event(*a, **kw))

Every proxy of one plan counts its calls per (target, method), so a fault-free run tells how
many write calls a scenario makes (`plan.write_calls()`), and a second run on a fresh store
can fail each of them in turn. An error is raised before the call runs (`phase="before"`:
nothing happened, e.g. throttling or a locked database) or after it (`phase="after"`: the
write happened but its answer was lost, e.g. a read timeout).

A race runs another writer's call in the middle of the wrapped one: the wrapped store call
reads, then — just before its first conditional write on the wrapped client (`race_client`) —
the racer writes the same item, so the real conditional check fails (DynamoDB on moto).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Phase = Literal["before", "after"]
ErrorFactory = Callable[[str], BaseException]  # method name → the exception to raise
Racer = Callable[[str, tuple, dict], Any]  # (method, args, kwargs) → runs the competing write

# Methods that write, per port (and per raw client), for enumerating fault points.
STORE_WRITES = frozenset({
    "upsert_messages", "delete_message", "mark_extracted", "create_event", "update_event",
    "add_deliveries", "bump_recall_count", "purge_deliveries", "put_record", "delete_records"})
INDEX_WRITES = frozenset({"upsert", "delete"})
OUTBOX_WRITES = frozenset({"done"})
INGEST_WRITES = frozenset({"put"})
QUEUE_WRITES = frozenset({"send"})
DYNAMODB_WRITES = frozenset({"put_item", "update_item", "delete_item", "transact_write_items",
                             "batch_write_item"})
WRITES = {"store": STORE_WRITES, "keywords": INDEX_WRITES, "vectors": INDEX_WRITES,
          "index": INDEX_WRITES, "outbox": OUTBOX_WRITES, "ingest": INGEST_WRITES,
          "queue": QUEUE_WRITES,
          "dynamodb": DYNAMODB_WRITES}


# ------------------------------------------------------------------ the errors


def sqlite_locked(method: str = "") -> BaseException:
    return sqlite3.OperationalError("database is locked")


def sqlite_busy(method: str = "") -> BaseException:
    return sqlite3.OperationalError("database is busy")


def dynamodb_throttled(method: str = "") -> BaseException:
    from botocore.exceptions import ClientError

    return ClientError({"Error": {"Code": "ProvisionedThroughputExceededException",
                                  "Message": "The level of configured provisioned throughput "
                                             "for the table was exceeded (injected)"},
                        "ResponseMetadata": {"HTTPStatusCode": 400}}, _operation(method))


def dynamodb_timeout(method: str = "") -> BaseException:
    from botocore.exceptions import ReadTimeoutError

    return ReadTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com/")


def sqs_throttled(method: str = "") -> BaseException:
    from botocore.exceptions import ClientError

    return ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"},
                        "ResponseMetadata": {"HTTPStatusCode": 400}}, "SendMessage")


def opensearch_status(status: int) -> ErrorFactory:
    """opensearch-py's error for an HTTP status (what the client raises after its retries)."""
    def make(method: str = "") -> BaseException:
        from opensearchpy import TransportError

        kind = {429: "too_many_requests_exception", 503: "unavailable_shards_exception"}.get(
            status, "injected_failure_exception")
        return TransportError(status, kind, {"error": {"type": kind}, "status": status})
    return make


def opensearch_timeout(method: str = "") -> BaseException:
    from opensearchpy import ConnectionTimeout

    return ConnectionTimeout("TIMEOUT", "Read timed out. (read timeout=10)", TimeoutError())


def socket_timeout(method: str = "") -> BaseException:
    return TimeoutError("timed out")


def _operation(method: str) -> str:
    return "".join(part.title() for part in method.split("_")) or "Call"


# ------------------------------------------------------------------ the plan


@dataclass
class Rule:
    target: str
    method: str
    first: int  # the first call (1-based, per target and method) the rule applies to
    times: int  # how many calls from `first` on it applies to
    error: ErrorFactory | None = None
    phase: Phase = "before"
    racer: Racer | None = None
    fired: int = 0

    def applies(self, target: str, method: str, n: int) -> bool:
        return (target == self.target and method == self.method
                and self.first <= n < self.first + self.times)


@dataclass(frozen=True)
class Injected:
    target: str
    method: str
    n: int
    kind: str  # the exception type, or "race"


@dataclass
class FaultPlan:
    """The rules of one run and what happened: calls per (target, method), faults injected."""

    rules: list[Rule] = field(default_factory=list)
    calls: Counter = field(default_factory=Counter)
    sequence: list[tuple[str, str, int]] = field(default_factory=list)  # every call in order
    injected: list[Injected] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _armed: threading.local = field(default_factory=threading.local)

    # ------------------------------------------------------------ rules
    def fail(self, target: str, method: str, *, error: ErrorFactory, nth: int = 1,
             times: int = 1, phase: Phase = "before") -> Rule:
        """The `nth` call of `target.method` (and the `times - 1` calls after it) fails."""
        rule = Rule(target, method, nth, times, error=error, phase=phase)
        self.rules.append(rule)
        return rule

    def fail_until(self, target: str, method: str, *, failures: int,
                   error: ErrorFactory, phase: Phase = "before") -> Rule:
        """Every call of `target.method` fails, until `failures` calls have failed."""
        return self.fail(target, method, error=error, nth=self.calls[(target, method)] + 1,
                         times=failures, phase=phase)

    def race(self, target: str, method: str, *, nth: int, racer: Racer,
             client_target: str = "dynamodb") -> Rule:
        """During the `nth` call of `target.method`, just before its first write through the
        `client_target` proxy, `racer(method, args, kwargs)` writes the same item."""
        rule = Rule(target, method, nth, 1, racer=racer)
        rule.client_target = client_target  # type: ignore[attr-defined]
        self.rules.append(rule)
        return rule

    def wrap(self, obj: Any, target: str) -> FaultProxy:
        return FaultProxy(obj, target, self)

    # ------------------------------------------------------------ bookkeeping
    def write_calls(self, targets: Sequence[str] | None = None) -> list[tuple[str, str, int]]:
        """(target, method, n) of every write call made so far, in order."""
        return [(t, m, n) for t, m, n in self.sequence
                if (targets is None or t in targets) and m in WRITES.get(t, frozenset())]

    def counts(self) -> Counter:
        return Counter(i.kind for i in self.injected)

    def _call(self, target: str, method: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        with self._lock:
            self.calls[(target, method)] += 1
            n = self.calls[(target, method)]
            self.sequence.append((target, method, n))
            rule = next((r for r in self.rules if r.applies(target, method, n)), None)
        if rule is not None and rule.racer is not None:
            return self._with_race(rule, target, method, n, fn, args, kwargs)
        self._maybe_race(target, method)
        if rule is not None and rule.phase == "before":
            raise self._fire(rule, target, method, n)
        result = fn(*args, **kwargs)
        if rule is not None:
            raise self._fire(rule, target, method, n)
        return result

    def _fire(self, rule: Rule, target: str, method: str, n: int) -> BaseException:
        assert rule.error is not None
        exc = rule.error(method)
        with self._lock:
            rule.fired += 1
            self.injected.append(Injected(target, method, n, type(exc).__name__))
        return exc

    def _with_race(self, rule: Rule, target: str, method: str, n: int, fn: Callable,
                   args: tuple, kwargs: dict) -> Any:
        armed = {"rule": rule, "client": rule.client_target,  # type: ignore[attr-defined]
                 "run": lambda: rule.racer(method, args, kwargs), "where": (target, method, n)}
        self._armed.pending = armed
        try:
            return fn(*args, **kwargs)
        finally:
            self._armed.pending = None

    def _maybe_race(self, target: str, method: str) -> None:
        """A write on an armed client: the racer goes first (once)."""
        armed = getattr(self._armed, "pending", None)
        if not armed or armed["client"] != target or method not in WRITES.get(target, ()):
            return
        self._armed.pending = None
        armed["run"]()
        with self._lock:
            armed["rule"].fired += 1
            self.injected.append(Injected(*armed["where"], "race"))


class FaultProxy:
    """Stands in for `obj`: attribute reads pass through, every public method call is counted
    by the plan and may fail as its rules say. Protocol checks (isinstance(proxy, Store)) see
    the wrapped object's methods."""

    def __init__(self, obj: Any, target: str, plan: FaultPlan):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_plan", plan)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._obj, name)
        if name.startswith("_") or not callable(attr):
            return attr
        plan, target = self._plan, self._target

        def call(*args: Any, **kwargs: Any) -> Any:
            return plan._call(target, name, attr, args, kwargs)

        call.__name__ = name
        return call

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._obj, name, value)

    def __repr__(self) -> str:
        return f"FaultProxy({self._target}: {self._obj!r})"

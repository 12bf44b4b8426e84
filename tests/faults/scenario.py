"""The scripted scenario of the fault suite, spoken through the HTTP routes
(chalice.test.Client), and what its final state is.

PUT messages in two sessions → extract → an edit of an extracted message → re-extract (the
old facts superseded, unchanged ones revived) → consolidate (the offline merger joins a fact
told in both sessions) → deliveries → an event PATCH → a recall. A request that answers 503
(it must carry Retry-After and the "unavailable" error shape) is sent again until it succeeds;
any other 5xx fails the test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from chalicelib.domain.records import JournalBatch, LLMUsageRecord, MemoryUse, MergeState, Person
from chalicelib.ports import Services
from tests.conftest import AUTH

SPACE = "fz"
WINDOW = "w1"
T0 = datetime(2026, 6, 15, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=2)  # the services' fixed clock
MAX_ATTEMPTS = 6  # one injected fault may surface more than once (a transport's own retries)
SP = f"/v1/spaces/{SPACE}"


def _chat(session_turns: list[tuple[str, str, str]], start: datetime) -> list[dict]:
    return [{"seq": i, "role": role, "speaker": who, "content": text,
             "at": (start + timedelta(minutes=i)).isoformat()}
            for i, (role, who, text) in enumerate(session_turns)]


S1 = _chat([
    ("user", "Mel", "I adopted a ginger cat named Biscuit from the shelter today"),
    ("assistant", "Aria", "Lovely!"),
    ("user", "Mel", "We are planning a hiking trip to the Alps with my brother Sam"),
    ("user", "Mel", "I also bought new hiking boots for the trip"),
], T0)
S2 = _chat([
    ("user", "Mel", "I adopted a ginger cat named Biscuit from the shelter today"),
    ("user", "Mel", "My sister Jo is getting married in Lisbon this summer"),
], T0 + timedelta(minutes=30))
EDIT = dict(S1[2], content="We are planning a hiking trip to the Dolomites with my brother Sam")


@dataclass
class Stats:
    requests: int = 0
    retried: int = 0  # requests sent again after a 503
    unavailable: int = 0  # 503 answers seen


@dataclass
class Run:
    """One pass of the scenario: the final state and the requests' outcomes."""

    state: dict = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)


def send(client, stats: Stats, method: str, path: str, body: Any = None) -> Any:
    """One request, sent again while it answers 503; returns the decoded JSON answer."""
    payload = None if body is None else json.dumps(body)
    for attempt in range(MAX_ATTEMPTS):
        stats.requests += 1
        if attempt:
            stats.retried += 1
        resp = getattr(client.http, method)(SP + path, headers=AUTH, body=payload)
        if resp.status_code == 503:
            stats.unavailable += 1
            headers = {k.lower(): v for k, v in resp.headers.items()}
            assert headers.get("retry-after", "").isdigit(), (path, resp.headers)
            error = json.loads(resp.body)["error"]
            assert error["code"] == "unavailable" and error["message"], error
            continue
        assert resp.status_code < 500, (method, path, resp.status_code, resp.body)
        assert resp.status_code < 400, (method, path, resp.status_code, resp.body)
        return json.loads(resp.body)
    raise AssertionError(f"{method} {path} still answered 503 after {MAX_ATTEMPTS} attempts")


def play(client, stats: Stats, after_each=None) -> None:
    """The scenario. `after_each()` runs after every request (the AWS table stream)."""
    def step(method: str, path: str, body: Any = None) -> Any:
        out = send(client, stats, method, path, body)
        if after_each is not None:
            after_each()
        return out

    step("put", "/sessions/s1/messages", {"messages": S1})
    step("put", "/sessions/s2/messages", {"messages": S2})
    step("post", "/extract", {})
    step("put", "/sessions/s1/messages", {"messages": [EDIT]})
    step("post", "/extract", {"session": "s1"})
    step("post", "/consolidate", {})
    listed = [e for e in step("get", "/events?limit=100")["events"]
              if e["kind"] == "event"]  # the events, not the session summaries
    by_text = {e["summary"]: e for e in listed}
    refs = sorted(f"event:{e['id']}" for e in listed if "Biscuit" in e["summary"]
                  or "boots" in e["summary"])
    step("post", "/deliveries", {"window": WINDOW, "ids": refs, "at": NOW.isoformat()})
    lisbon = next(e for text, e in by_text.items() if "Lisbon" in text)
    current = step("get", f"/events/{lisbon['id']}")
    step("patch", f"/events/{lisbon['id']}", {"version": current["version"], "importance": 9,
                                               "tags": ["family", "wedding"]})
    step("post", "/recall", {"query": "hiking boots Dolomites", "now": NOW.isoformat()})


# ------------------------------------------------------------------ the final state


def store_state(store, sessions=("s1", "s2")) -> dict:
    """Everything the store holds for the space, in a comparable form."""
    events = store.list_events(SPACE, statuses=("active", "archived", "superseded"),
                               limit=500).events
    dump = _dump
    return {
        "sessions": [dump(s) for s in store.list_sessions(SPACE)],
        "messages": {s: [dump(m) for m in store.get_messages(SPACE, s)] for s in sessions},
        "events": sorted((dump(e) for e in events), key=lambda e: e["id"]),
        "history": {e.id: [dump(v) for v in store.event_history(SPACE, e.id)]
                    for e in sorted(events, key=lambda e: e.id)},
        "deliveries": [dump(d) for d in store.recent_deliveries(
            SPACE, WINDOW, datetime(2000, 1, 1, tzinfo=UTC))],
        "records": {
            "people": [dump(r) for r in store.list_records(Person, SPACE)],
            "uses": [dump(r) for r in store.list_records(MemoryUse, SPACE)],
            "merge": dump(store.get_record(MergeState, SPACE)),
            "llm": [dump(r) for r in store.list_records(LLMUsageRecord, SPACE)],
            "journal": {s: [dump(b) for b in store.list_records(JournalBatch, f"{SPACE}/{s}")]
                        for s in sessions},
        },
    }


def _dump(model) -> Any:
    return None if model is None else model.model_dump(mode="json")


def summary_of(state: dict) -> str:
    ev = state["events"]
    return (f"{sum(len(v) for v in state['messages'].values())} messages, {len(ev)} events "
            f"({sum(e['status'] == 'active' for e in ev)} active), "
            f"{sum(len(v) for v in state['history'].values())} versions, "
            f"{len(state['deliveries'])} deliveries, "
            f"{sum(len(v) for v in state['records']['journal'].values())} journal batches")


def check_equal(expected: dict, got: dict, where: str) -> None:
    """Assert the two final states are equal, listing where they differ."""
    problems = list(differences(expected, got, ""))
    if problems:
        raise AssertionError(f"{where}: the final state differs from the fault-free run:\n"
                             + "\n".join(problems[:20]))


def differences(a: Any, b: Any, path: str):
    if isinstance(a, dict) and isinstance(b, dict):
        for key in dict.fromkeys([*a, *b]):
            if key not in b:
                yield f"{path}/{key}: missing (expected {_short(a[key])})"
            elif key not in a:
                yield f"{path}/{key}: unexpected {_short(b[key])}"
            else:
                yield from differences(a[key], b[key], f"{path}/{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from differences(x, y, f"{path}[{i}]")
    elif isinstance(a, list) and isinstance(b, list):
        missing = [x for x in a if x not in b]
        extra = [y for y in b if y not in a]
        yield (f"{path}: {len(a)} expected, {len(b)} got; missing {_short(missing)}; "
               f"unexpected {_short(extra)}")
    elif a != b:
        yield f"{path}: expected {_short(a)}, got {_short(b)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 600 else text[:600] + "…"


def services_clock(services: Services) -> None:
    services.clock = lambda: NOW

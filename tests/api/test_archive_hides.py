"""What the user archived stays out of recall (issue 36): the turns an archived event cites
come back as no message card, and a fact told only in them leaves the core layer; a PATCH
back to active brings both back."""

from __future__ import annotations

from tests.conftest import call

SP = "/v1/spaces/sam"
QUESTION = "Is Sam still learning the cello?"


def told(client) -> dict:
    turns = [("user", "I'm learning the cello these days, lessons every Tuesday."),
             ("assistant", "The cello is a lovely instrument!"),
             ("user", "My sister visited Rome last weekend and loved it."),
             ("assistant", "Rome in spring is great.")]
    messages = [{"seq": i, "role": role, "speaker": "Sam" if role == "user" else "Aria",
                 "content": text, "at": f"2026-03-01T20:0{i}:00+08:00"}
                for i, (role, text) in enumerate(turns)]
    call(client, "put", f"{SP}/sessions/s1/messages", {"messages": messages})
    call(client, "post", f"{SP}/extract", {})
    events = call(client, "get", f"{SP}/events")["events"]
    return next(e for e in events if "cello" in e["summary"])


def recalled(client) -> tuple[set[str], str]:
    cards = call(client, "post", f"{SP}/recall", {"query": QUESTION, "max_cards": 8,
                                                  "min_relevance": 0})["cards"]
    return {c["ref"] for c in cards}, " ".join(c["text"] for c in cards)


def core(client, window: str) -> str:
    return call(client, "post", f"{SP}/hook/recall",
                {"query": QUESTION, "window": window})["core_context"] or ""


def test_an_archived_event_takes_its_turns_and_facts_out_of_recall(client):
    cello = told(client)
    cited = {f"message:s1:{seq}" for s in cello["sources"]
             for seq in range(s["seq_start"], s["seq_end"] + 1)}
    refs, _ = recalled(client)
    assert refs & ({f"event:{cello['id']}"} | cited)  # found before it is archived
    assert "cello" in core(client, "w1")

    call(client, "delete", f"{SP}/events/{cello['id']}")
    refs, texts = recalled(client)
    assert not refs & ({f"event:{cello['id']}"} | cited)
    assert "lessons every Tuesday" not in texts
    assert "Rome" in texts  # the rest of the chat is still there
    assert "cello" not in core(client, "w2")
    hook = call(client, "post", f"{SP}/hook/recall", {"query": QUESTION, "window": "w3"})
    assert "lessons every Tuesday" not in hook["additional_context"]

    archived = call(client, "get", f"{SP}/events/{cello['id']}")
    call(client, "patch", f"{SP}/events/{cello['id']}",
         {"version": archived["version"], "status": "active"})
    refs, _ = recalled(client)
    assert refs & ({f"event:{cello['id']}"} | cited)
    assert "cello" in core(client, "w4")


def test_an_archived_summary_hides_no_turns(client):
    """A summary retells a whole session: archiving it is no wish to forget the chat."""
    from chalicelib.domain.records import ArchivedTurns
    from chalicelib.wiring import get_services

    cello = told(client)
    services = get_services()
    summary = services.store.get_event("sam", cello["id"]).model_copy(
        update={"id": "ev_summary0000000000", "kind": "summary"})
    services.store.create_event(summary)
    call(client, "delete", f"{SP}/events/{summary.id}")
    assert services.store.list_records(ArchivedTurns, "sam") == []
    assert "cello" in core(client, "w1")

"""A long imported conversation made up in the test (no LoCoMo file): two speakers, one session
a week, each session a run of "I did X" turns and replies — the shape of a LoCoMo
conversation, for the tests of long extraction (background jobs)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

ACTS = ["went hiking at {p}", "started a pottery class at {p}", "adopted a puppy named {n}",
        "finished reading a novel about {t}", "visited my grandmother in {p}",
        "signed up for a marathon in {p}", "painted a mural of {t}", "lost my keys at {p}",
        "met {n} for coffee at {p}", "cooked a big dinner for {n}", "got a new job at {p}",
        "booked a trip to {p} with {n}", "joined a support group about {t}",
        "planted tomatoes with {n}", "fixed the old bike I got from {n}"]
PLACES = ["the lake", "Lisbon", "the community center", "Boston", "the park", "Kyoto",
          "the library", "the beach", "Denver", "the farmers market"]
NAMES = ["Max", "Luna", "Oscar", "Bella", "Milo", "Daisy", "Charlie", "Rosie"]
TOPICS = ["friendship", "the ocean", "climate change", "family history", "jazz",
          "mental health", "sunflowers", "space travel"]
WHEN = ["yesterday", "last weekend", "last Tuesday", "two days ago", "this morning",
        "last month", "a few weeks ago", ""]
REPLIES = ["That sounds amazing, Caroline! How did it feel?", "Wow, I love that. Tell me more!",
           "Oh no, that must have been hard.", "Good for you! Did {n} come along?",
           "I remember you mentioned {t} before.", "Haha, classic you. What's next?"]
SMALL_TALK = ["Hi!", "Thanks!", "Haha", "ok", "Good morning!", "Yeah.", "Sure!", "lol",
              "Nice.", "Bye!"]
START = datetime(2023, 5, 1, 13, 0, tzinfo=UTC)


def conversation(sessions: int = 28, per_session: int = 25, seed: int = 7, *,
                 facts_every: int = 1) -> list[tuple[str, list[dict]]]:
    """[(session name, [message dicts for PUT …/messages])]: `sessions` × `per_session`
    messages (28 × 25 = 700 by default), sessions "1", "2", … a week apart. `facts_every`
    n > 1: only every n-th turn tells something, the others are small talk."""
    rnd = random.Random(seed)
    out = []
    for s in range(1, sessions + 1):
        at = START + timedelta(days=7 * s)
        messages = []
        for i in range(1, per_session + 1):
            if i % facts_every:
                text = rnd.choice(SMALL_TALK)
                role, who = ("user", "Caroline") if i % 2 else ("assistant", "Melanie")
            elif i % 2:
                act = rnd.choice(ACTS).format(p=rnd.choice(PLACES), n=rnd.choice(NAMES),
                                              t=rnd.choice(TOPICS))
                text = f"I {act} {rnd.choice(WHEN)}".rstrip() + "."
                if rnd.random() < 0.4:
                    text += f" It reminded me of {rnd.choice(TOPICS)}."
                role, who = "user", "Caroline"
            else:
                text = rnd.choice(REPLIES).format(n=rnd.choice(NAMES), t=rnd.choice(TOPICS))
                role, who = "assistant", "Melanie"
            messages.append({"seq": i, "role": role, "speaker": who, "content": text,
                             "at": (at + timedelta(seconds=30 * i)).isoformat()})
        out.append((str(s), messages))
    return out


def put_all(services, space: str, chat: list[tuple[str, list[dict]]]) -> None:
    """Store the conversation through the ingest use-case (as an import does)."""
    from chalicelib.domain.models import PutMessagesRequest
    from chalicelib.usecases.ingest import put_messages

    for session, messages in chat:
        put_messages(services, space, session, PutMessagesRequest.model_validate(
            {"messages": messages}))


def fingerprint(events) -> list[tuple[str, str, str, str]]:
    """What must be the same between two runs: ids and text (dicts or Event models)."""
    rows = []
    for e in events:
        e = e if isinstance(e, dict) else e.model_dump(mode="json")
        rows.append((e["id"], e["kind"], e["title"], e["summary"]))
    return rows

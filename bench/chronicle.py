"""Chronicle figures: how the events Annals wrote compare with the facts LoCoMo's annotators
wrote for each session (`session_N_observation`: facts, each with the turn it comes from).

Four figures, per conversation and pooled (DESIGN.md, "Chronicle figures"):
- events per message: active extracted events (kind "event"; no summaries, no notes) over
  the conversation's messages. The annotators wrote about 0.44 facts per message.
- filler share: events with fewer than three content words once the names of the people in
  it are taken out (`chalicelib.domain.salience.content_words`, the measure the extractor's
  own thin-turn rule uses) ("Wow", "Good to see you!", "哇，好可怜").
- coverage: annotated facts whose turn a non-filler event cites (a range cites every turn in
  it).
- noise: events citing no turn that any annotated fact comes from.

Everything here is a pure function over plain data, so the scorer can be read in one sitting
and tested without a store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from chalicelib.domain.salience import content_words

MIN_CONTENT_WORDS = 3


@dataclass(frozen=True)
class Fact:
    text: str
    turns: tuple[str, ...]  # dia_ids, "D3:7"


@dataclass(frozen=True)
class Entry:
    """An event as the scorer sees it: its text, who is in it, the turns it cites."""

    text: str
    names: tuple[str, ...]
    turns: tuple[str, ...]


def annotated_facts(conversation: Mapping) -> list[Fact]:
    """Every `session_N_observation` fact of a LoCoMo conversation file (the raw JSON)."""
    facts: list[Fact] = []
    for key, value in conversation.items():
        if not re.fullmatch(r"session_\d+_observation", key) or not isinstance(value, dict):
            continue
        for items in value.values():
            for item in items:
                text, ids = item[0], item[1] if len(item) > 1 else ""
                raw = ids if isinstance(ids, list) else [ids]
                turns = tuple(f"D{int(m[1])}:{int(m[2])}"
                              for r in raw for m in re.finditer(r"D\s*(\d+)\s*:\s*(\d+)", str(r)))
                if turns:
                    facts.append(Fact(text=str(text), turns=turns))
    return facts


def entry(summary: str, participants: Iterable[str],
          sources: Iterable[tuple[str, int, int]]) -> Entry:
    """An event's scorer view: sources as (session, seq_start, seq_end inclusive)."""
    turns = tuple(f"D{session}:{seq}" for session, start, end in sources
                  for seq in range(start, end + 1))
    return Entry(text=summary, names=tuple(participants), turns=turns)


def is_filler(item: Entry) -> bool:
    return content_words(item.text, item.names) < MIN_CONTENT_WORDS


@dataclass
class Figures:
    messages: int
    events: int
    filler: int
    facts: int
    covered: int
    noise: int

    @property
    def per_message(self) -> float:
        return self.events / self.messages if self.messages else 0.0

    @property
    def filler_share(self) -> float:
        return self.filler / self.events if self.events else 0.0

    @property
    def coverage(self) -> float:
        return self.covered / self.facts if self.facts else 0.0

    @property
    def noise_share(self) -> float:
        return self.noise / self.events if self.events else 0.0

    def as_dict(self) -> dict:
        return {"messages": self.messages, "events": self.events, "filler": self.filler,
                "facts": self.facts, "covered": self.covered, "noise": self.noise,
                "events_per_message": self.per_message, "filler_share": self.filler_share,
                "coverage": self.coverage, "noise_share": self.noise_share}


def score(entries: Sequence[Entry], facts: Sequence[Fact], messages: int) -> Figures:
    annotated = {t for f in facts for t in f.turns}
    kept = [e for e in entries if not is_filler(e)]
    cited = {t for e in kept for t in e.turns}
    return Figures(
        messages=messages, events=len(entries), filler=len(entries) - len(kept),
        facts=len(facts), covered=sum(any(t in cited for t in f.turns) for f in facts),
        noise=sum(not any(t in annotated for t in e.turns) for e in entries),
    )


def pooled(figures: Iterable[Figures]) -> Figures:
    items = list(figures)
    return Figures(*(sum(getattr(f, name) for f in items) for name in
                     ("messages", "events", "filler", "facts", "covered", "noise")))


def format_rows(rows: Sequence[tuple[str, Figures]]) -> list[str]:
    lines = ["| conversation | messages | events | per message | filler | coverage | noise |",
             "|---|---|---|---|---|---|---|"]
    for name, f in rows:
        lines.append(f"| {name} | {f.messages} | {f.events} | {f.per_message:.2f} | "
                     f"{f.filler_share:.3f} | {f.coverage:.3f} | {f.noise_share:.3f} |")
    return lines

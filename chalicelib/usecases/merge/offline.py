"""The offline merger: near-duplicates joined without a model. Two active events merge when
they share participants (or neither names any), overlap in time (or fall on the same day), and
the cosine of their summaries' passage vectors is at least `similarity`; the richer event
(longer summary, then higher importance) is kept with every source. A plan and an event are
never joined (a plan and what came of it are two entries of a chronicle)."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.domain.merge import EventChanges, MergeInstruction
from chalicelib.domain.models import Event
from chalicelib.ports import Embedder


class OfflineMerger:
    """Near-duplicates, no model: see the module docstring. A plan and an event are never
    joined (a plan and what came of it are two entries of a chronicle)."""

    name = "offline"

    def __init__(self, embedder: Embedder, similarity: float = 0.95):
        self.embedder = embedder
        self.similarity = similarity

    def instructions(self, window: Sequence[Event],
                     new_ids: set[str] | frozenset[str] = frozenset()) -> list[MergeInstruction]:
        events = [e for e in window if e.status == "active" and e.kind != "summary"]
        if len(events) < 2:
            return []
        vectors = self.embedder.embed_passages([e.summary for e in events])
        sims = vectors @ vectors.T
        parent = list(range(len(events)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i in range(len(events)):
            for j in range(i + 1, len(events)):
                if new_ids and events[i].id not in new_ids and events[j].id not in new_ids:
                    continue
                if self.near_duplicates(events[i], events[j], float(sims[i, j])):
                    parent[root(j)] = root(i)
        clusters: dict[int, list[Event]] = {}
        for i, event in enumerate(events):
            clusters.setdefault(root(i), []).append(event)
        out: list[MergeInstruction] = []
        for members in clusters.values():
            if len(members) > 1:
                out.extend(self.join(members))
        return out + self.replacements(events, new_ids, {i.id for i in out})

    @staticmethod
    def replacements(events: Sequence[Event], new_ids: set[str] | frozenset[str],
                     taken: set[str | None]) -> list[MergeInstruction]:
        """A new event that says a fact changed ("we changed the hotel", 把酒店换成了…)
        replaces the earlier event it names (domain.links.replacement): it takes that
        event's sources and the earlier one is superseded (an `updates` relation)."""
        # loaded with the first merge, not with the merger: wiring builds one in every
        # process, and the links' rules (domain.entities) are not a recall's to pay for
        from chalicelib.domain.links import replacement

        out: list[MergeInstruction] = []
        for i, event in enumerate(events):
            if (new_ids and event.id not in new_ids) or event.id in taken:
                continue
            found = replacement(event, [e for e in events[:i] if e.id not in taken])
            if found is None:
                continue
            taken |= {event.id, found.old.id}
            out += [MergeInstruction(action="update", id=event.id, merge_from=[found.old.id],
                                     reason=found.note),
                    MergeInstruction(action="delete", id=found.old.id,
                                     reason=f"replaced by {event.id}")]
        return out

    def near_duplicates(self, a: Event, b: Event, similarity: float) -> bool:
        if a.plan != b.plan or similarity < self.similarity:
            return False
        if (a.participants or b.participants) and not set(a.participants) & set(b.participants):
            return False
        same_day = a.when.start.date() == b.when.start.date()
        return same_day or a.when.overlaps(b.when.start, b.when.end)

    @staticmethod
    def join(members: Sequence[Event]) -> list[MergeInstruction]:
        keeper = max(members, key=lambda e: (len(e.summary), e.importance,
                                             -e.created_at.timestamp()))
        others = [e for e in members if e.id != keeper.id]
        fields = EventChanges(
            importance=max(e.importance for e in members),
            participants=list(dict.fromkeys(p for e in [keeper, *others] for p in e.participants)),
            tags=list(dict.fromkeys(t for e in [keeper, *others] for t in e.tags)),
        )
        reason = "near-duplicate of " + ", ".join(e.id for e in others)
        return [MergeInstruction(action="update", id=keeper.id, fields=fields,
                                 merge_from=[e.id for e in others], reason=reason),
                *(MergeInstruction(action="delete", id=e.id, reason=f"merged into {keeper.id}")
                  for e in others)]



"""Updates supersede in recall: when a later event updates an earlier one (an `updates`
relation, usecases.graph.updates: "we now stay at the Ryokan Kiku instead of the Hotel
Sakura"), a recall shows the new fact, and the old one only when the query asks about the past
("which hotel did we book first?": query.asks_about_past).

- Not about the past: a card of the old event is left out, and so is a message card of a turn
  that tells only the old fact (the relation's note lists those turns: a message that also
  tells something else stays). In its place comes the event that updated it, unless that is
  a card already — the query matched the old fact, the new one answers it. The old event
  leaves the thread materials of the cards too. An old event that says more than the old
  fact ("We booked the Hotel Sakura. Tom bought a camera.") is not left out but shown right
  after the event that updated it, tagged "updated".
- About the past: the old event stays, and when only the event that updated it made the
  cards, the old one is put right before it.

Only events with an explicit `updates` relation whose both ends are active are touched: the
merge pass's updates supersede the old event themselves (it is out of recall already), and an
event the updater of which was rolled back is a plain memory again. The cards brought in by a
relation skip the admission gate: the relation ties them to a card that passed it. A recall
by a named time keeps old facts — it asks what was told then — and shows the event that
updated each right after it (`with_updaters`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chalicelib.domain.changes import old_turns, says_only_the_old_fact
from chalicelib.domain.models import Card
from chalicelib.domain.records import Relation
from chalicelib.domain.refs import event_ref
from chalicelib.ports import Services
from chalicelib.usecases.recall.cards import load_cards
from chalicelib.usecases.recall.fusion import Candidate

MAX_CHAIN = 8  # A updated by B updated by C …: the newest is what recall shows


@dataclass(frozen=True)
class Update:
    old: str  # the ref of the earlier event
    new: str  # the ref of the event that updates it
    words: str  # what said so (the relation's note up to its evidence)
    whole: bool = True  # the old event says nothing but the old fact


@dataclass(frozen=True)
class LeftOut:
    """A card recall left out (or, asked about the past, brought in) for an update."""

    ref: str
    update: Update
    past: bool  # brought in before its updater, for a query about the past
    after: bool = False  # kept, after its updater (it says more than the old fact)
    followed: bool = False  # kept, its updater shown after it (a recall by a named time)


@dataclass
class Updates:
    """One recall's view of the space's `updates` relations, read on first use."""

    services: Services
    space: str
    # the space's Relation records, when the recall has read them already (Links)
    relations: Callable[[], list[Relation]] | None = None
    _loaded: bool = False
    by_old: dict[str, Update] = field(default_factory=dict)  # old event ref → newest update
    by_turn: dict[str, Update] = field(default_factory=dict)  # message ref → its update
    by_new: dict[str, list[Update]] = field(default_factory=dict)  # new ref → what it updates
    log: list[LeftOut] = field(default_factory=list)

    def load(self) -> Updates:
        if self._loaded:
            return self
        self._loaded = True
        records = (self.relations() if self.relations is not None
                   else self.services.store.list_records(Relation, self.space))
        rels = [r for r in records if r.kind == "updates"]
        if not rels:
            return self
        active = {e.id for e in self.services.store.load_events(
            self.space, sorted({i for r in rels for i in (r.src, r.dst)})) if e.status == "active"}
        for rel in sorted(rels, key=lambda r: (r.created_at, r.key)):  # the newest wins
            if rel.src in active and rel.dst in active:
                self._add(rel)
        return self

    def _add(self, rel: Relation) -> None:
        update = Update(old=event_ref(rel.dst), new=event_ref(rel.src),
                        words=rel.note.split(" · ")[0], whole=says_only_the_old_fact(rel.note))
        self.by_old[update.old] = update
        self.by_new.setdefault(update.new, []).append(update)
        for ref in old_turns(rel.note):
            self.by_turn[ref] = update

    def newest(self, update: Update) -> str:
        """The ref of the event that holds the fact now, down the chain of updates."""
        ref, seen = update.new, {update.old}
        while ref in self.by_old and ref not in seen and len(seen) < MAX_CHAIN:
            seen.add(ref)
            ref = self.by_old[ref].new
        return ref

    def apply(self, cards: Sequence[Card], past: bool) -> list[Card]:
        """The cards of one intent with the updates applied (module docstring)."""
        if not cards or not self.load().by_old:
            return list(cards)
        return self._with_old(cards) if past else self._without_old(cards)

    def _without_old(self, cards: Sequence[Card]) -> list[Card]:
        later = {c.ref for c in cards}  # refs still to come in the list
        out: list[Card] = []
        waiting: dict[str, list[Card]] = {}  # a new event's ref → old cards shown after it
        for card in cards:
            later.discard(card.ref)
            update = self.by_old.get(card.ref) or self.by_turn.get(card.ref)
            if update is None:
                out += [card, *waiting.pop(card.ref, [])]
                continue
            newest = self.newest(update)
            kept = not update.whole and card.ref == update.old  # says more: after the new
            self.log.append(LeftOut(card.ref, update, past=False, after=kept))
            if kept:
                card = card.model_copy(update={"tags": [*card.tags, "updated"]})
            if newest in later:  # the new fact comes further down: the old one after it
                waiting.setdefault(newest, []).extend([card] if kept else [])
                continue
            if newest not in {c.ref for c in out}:
                out += self._cards([newest], card)
            out += [card] if kept else []
        return out + [c for rest in waiting.values() for c in rest]

    def _with_old(self, cards: Sequence[Card]) -> list[Card]:
        shown = {c.ref for c in cards}
        out: list[Card] = []
        for card in cards:
            missing = [u for u in self.by_new.get(card.ref, []) if u.old not in shown]
            for update in missing:
                self.log.append(LeftOut(update.old, update, past=True))
            shown |= {u.old for u in missing}
            out += [*self._cards([u.old for u in missing], card), card]
        return out

    def with_updaters(self, cards: Sequence[Card]) -> list[Card]:
        """A recall by a named time keeps the old facts it finds — it asks what was told then
        — and shows after each the event that updated it, unless that is a card already
        ("国庆回乐山 我最后定的是哪天走": the plan told first, then its correction)."""
        if not cards or not self.load().by_old:
            return list(cards)
        shown = {c.ref for c in cards}
        out: list[Card] = []
        for card in cards:
            out.append(card)
            update = self.by_old.get(card.ref)
            if update is None or (newest := self.newest(update)) in shown:
                continue
            shown.add(newest)
            self.log.append(LeftOut(card.ref, update, past=False, followed=True))
            out += self._cards([newest], card)
        return out

    def _cards(self, refs: Sequence[str], beside: Card) -> list[Card]:
        """Cards for the events a relation brings in, scored as the card they stand beside."""
        cands = [Candidate(ref, beside.score, {"via_update": 1.0}) for ref in refs]
        return [card for card, _ in load_cards(self.services.store, self.space, cands,
                                               self.services.clean)]

    def strip_materials(self, cards: Sequence[Card], past: bool) -> list[Card]:
        """The cards without old events among their thread materials (not about the past)."""
        if past or not self.by_old:
            return list(cards)
        out = []
        for card in cards:
            if card.thread and any(m.ref in self.by_old for m in card.thread.materials):
                kept = [m for m in card.thread.materials if m.ref not in self.by_old]
                card = card.model_copy(update={"thread": card.thread.model_copy(
                    update={"materials": kept})})
            out.append(card)
        return out

    def trace(self, chosen: Sequence[Card]) -> list[tuple[str, str]]:
        """(zh, en) lines: each card left out as updated and by what, each old one brought
        in for a question about the past (only those that reached the chosen cards)."""
        refs = {c.ref for c in chosen}
        lines = []
        for item in dict.fromkeys(self.log):
            u = item.update
            if item.past and item.ref in refs:
                lines.append((f"[记忆检索] 问的是从前：带上已被 {u.new} 更新的 {u.old}（{u.words}）",
                              f"[recall] asks about the past: {u.old}, updated by {u.new} "
                              f"({u.words}), brought in"))
            elif item.followed and item.ref in refs:
                lines.append((f"[时间回忆] {item.ref} 后来被 {u.new} 更新（{u.words}），一并给出",
                              f"[time recall] {item.ref} was updated later by {u.new} "
                              f"({u.words}): shown after it"))
            elif item.after and item.ref in refs:
                lines.append((f"[记忆检索] {item.ref} 已被 {u.new} 更新（{u.words}），排在其后",
                              f"[recall] {item.ref} is updated by {u.new} ({u.words}): "
                              "shown after it"))
            elif not item.past and not item.after and not item.followed:
                lines.append((f"[记忆检索] 略去已被更新的 {item.ref}：被 {u.new} 取代（{u.words}）",
                              f"[recall] left out {item.ref} as superseded by {u.new} "
                              f"({u.words})"))
        return lines

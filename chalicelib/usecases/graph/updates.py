"""`updates` relations at link time: a newer event that says a fact changed ("we now stay at
the Ryokan Kiku instead of the Hotel Sakura", 把酒店换成了菊屋旅馆) updates the earlier event
it replaces. Unlike the merge pass (which supersedes the old event), the old event stays
active: it is still the history ("which hotel did we book first?"), and recall leaves it out
unless the query asks about the past (usecases.recall.updates).

Which earlier event, in order (domain.changes finds the words):
1. the change names the old thing ("instead of the Hotel Sakura", 不住樱花酒店了, "cancelled
   X", "no longer … X"): the latest `MAX_UPDATED` earlier events naming that thing;
2. else the new event names a thing one has one of at a time (a hotel, a home, an employer:
   domain.changes.category) and an earlier event names another of that kind: the latest one;
3. else the latest earlier event that shares a named thing with it and whose summary is at
   least `SIMILAR` alike (passage cosine): the same fact, said again as changed;
4. else a plan moved (`rescheduled`): the teller's event told just before, when the new one
   opens with a repair (哦不对，是1月2号出发); the teller's latest event naming the topic the
   repair follows (对了国庆那个 哦不对 …: domain.changes.repair_lead), on its day or another;
   or their latest plan sharing a word with it.
People never count as shared things: the speakers are in every event.

The old fact is what names the old thing (rules 1 and 2; rule 3: the whole event). The note
says whether the old event says nothing else (`whole`: recall then leaves it out; else it is
shown after the event that updated it) and lists the old event's turns that tell only the old
fact — cited by no other event, every sentence naming the old thing — which recall leaves out
with it ("We booked the Hotel Sakura. Tom bought a camera." stays findable for the camera).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from chalicelib.domain.changes import (
    Change,
    category,
    change_of,
    names_in,
    opens_with_repair,
    repair_lead,
    update_note,
)
from chalicelib.domain.models import Event
from chalicelib.domain.records import Entity, Relation
from chalicelib.domain.refs import event_label, message_ref
from chalicelib.domain.textproc import query_terms
from chalicelib.domain.textrules import is_small_talk, split_sentences
from chalicelib.domain.timeparse import parse_time
from chalicelib.ports import Correction, Services
from chalicelib.usecases.graph.relations import relation, session_order

MAX_UPDATED = 3  # earlier events one change may update when it names the old thing
LOOKBACK = 60  # earlier events searched, the latest first: a change is told near its fact
# Rule 3: a summary this alike (passage cosine) is the same fact, changed. High on purpose:
# with e5-small two different statements about one person reach 0.91 ("Mel switched to
# painting landscapes" / "Mel painted a sunset"), a fact and its change 0.93-0.96.
SIMILAR = 0.93
SIMILAR_LOOKBACK = 8  # rule 3 embeds at most this many earlier events per change
TIME_AFTER_MARKER = 24  # rule 4: characters after the change's marker where its new time is

# An earlier event a change replaces, with the names of the old thing in it (empty: rule 3,
# the whole event is the old fact).
Replaced = tuple[Event, tuple[str, ...]]


def update_relations(services: Services, space: str, session: str, batch: Sequence[Event],
                     earlier: Sequence[Event], entities: dict[str, Entity],
                     keys: dict[str, set[str]]) -> list[Relation]:
    """The `updates` relations of the batch's events that say a fact changed. `earlier`:
    the space's other active events, oldest first (those created after an event are not
    before it: a rebuild links old sessions while later ones exist); `entities`: every
    entity of the space; `keys`: event id → its non-person entities (relations.named_ids)."""
    told = sorted(batch, key=lambda e: (session_order(e, session), e.id))
    out: list[Relation] = []
    for i, event in enumerate(told):
        change = change_of(event.summary)
        if change is None:
            continue
        before = [e for e in earlier if e.created_at < event.created_at] + told[:i]
        before = [e for e in before[-LOOKBACK:] if e.kind != "summary" and e.id != event.id]
        for old, names in replaced(services, event, change, before, keys, entities):
            note = update_note(change.words, turns(event),
                               own_turns(services, old, names, [*earlier, *batch]),
                               whole=all_about(old.summary, names))
            out.append(relation(space, event.id, "updates", old.id, note, event.created_at))
    return out


def replaced(services: Services, new: Event, change: Change, before: Sequence[Event],
             keys: dict[str, set[str]], entities: dict[str, Entity]) -> list[Replaced]:
    """The earlier events `new` replaces (module docstring, rules 1-3), the latest first."""
    latest = list(reversed(before))
    old = old_things(change, entities)
    named = [(e, _names(keys.get(e.id, set()) & old, entities)) for e in latest
             if keys.get(e.id, set()) & old]
    if named:
        return named[:MAX_UPDATED]
    mine = keys.get(new.id, set())
    kinds = {category(entities[k].name) for k in mine} - {None}
    for event in latest:
        other = {k for k in keys.get(event.id, set()) - mine
                 if category(entities[k].name) in kinds}
        if other:
            return [(event, _names(other, entities))]
    alike = _alike(services, new, [e for e in latest if keys.get(e.id, set()) & mine])
    return [(e, ()) for e in alike] or rescheduled(new, change, latest)


def rescheduled(new: Event, change: Change, latest: Sequence[Event]) -> list[Replaced]:
    """Rule 4, a plan moved: the teller's latest earlier event at another time that is what
    the change corrects — the one told just before it when the event opens with a repair
    ("哦不对，是1月2号出发" after "计划元旦去京都"), else the latest plan sharing a content word
    with it ("搬家提前了，改成31号" → "定在11月1号…搬家公司都约好了"; "后来改到14号了 … 入职" →
    "12号入职"). Times and numbers are no shared words: every plan names one."""
    teller = new.participants[:1]
    mine = [e for e in latest if e.participants[:1] == teller and e.kind != "summary"]
    if not teller or not mine:
        return []
    if opens_with_repair(new.summary):
        last = mine[0]
        return [(last, ())] if last.when.start != new.when.start else []
    if lead := repair_lead(new.summary):
        # the plan the lead names, told before (times count here: 国庆 is what it names),
        # whether or not the correction moved its day
        named = {t for t in query_terms(lead) if t.casefold() not in people_of(new)}
        return next(([(e, ())] for e in mine if named & set(query_terms(e.summary))), [])
    if change.old or not moves_to_a_time(new.summary, change.words, new.when.start):
        # a change naming what it replaced is rule 1's (取消了…, "instead of …"), and one
        # followed by no time moved no plan ("dropped off the cakes", "changed the game")
        return []
    people = people_of(new)
    words = _words(new.summary, people)
    for event in mine:
        if "plan" in event.tags and event.when.start != new.when.start \
                and words & _words(event.summary, people):
            return [(event, ())]
    return []


def people_of(event: Event) -> set[str]:
    return {p.casefold() for p in event.participants}


def moves_to_a_time(text: str, marker: str, at: datetime) -> bool:
    """The change names the time the thing moved to, right after its marker (改到14号,
    提前了，改成31号周六, "moved it to Friday")."""
    where = text.casefold().find(marker.casefold())
    if where < 0:
        return False
    after = text[where + len(marker):where + len(marker) + TIME_AFTER_MARKER]
    return parse_time(after, at) is not None


def _words(text: str, people: set[str]) -> set[str]:
    """Content words, less numbers and the people's names (in every event of theirs)."""
    return {t for t in query_terms(text) if not any(ch.isdigit() for ch in t)
            and t.casefold() not in people}


def old_things(change: Change, entities: dict[str, Entity]) -> set[str]:
    """The keys of the non-person entities the change's old clauses name (rule 1), the
    longest name only: "the Hotel Okura Kyoto" names the hotel, not Kyoto."""
    found = {(key, name) for key, e in entities.items() if e.kind != "person"
             for name in (e.name, *e.aliases) if any(names_in(c, name) for c in change.old)}
    return {key for key, name in found
            if not any(name != other and names_in(other, name) for _, other in found)}


def _names(keys: set[str], entities: dict[str, Entity]) -> tuple[str, ...]:
    return tuple(n for k in sorted(keys) for n in (entities[k].name, *entities[k].aliases))


def _alike(services: Services, new: Event, sharing: Sequence[Event]) -> list[Event]:
    """Rule 3: the latest of the events sharing a named thing whose summary is SIMILAR."""
    sharing = list(sharing[:SIMILAR_LOOKBACK])
    if not sharing:
        return []
    vectors = np.asarray(services.embedder.embed_passages(
        [new.summary, *(e.summary for e in sharing)]), np.float32)
    for old, vec in zip(sharing, vectors[1:], strict=True):
        if float(np.dot(vectors[0], vec)) >= SIMILAR:
            return [old]
    return []


def corrected(space: str, session: str, batch: Sequence[Event], earlier: Sequence[Event],
              corrections: Sequence[Correction]) -> list[Relation]:
    """The `updates` relations a reader's corrections say (chalicelib.ports.Correction): the
    batch's event that cites the correcting turn updates the earlier event the reader named.
    `earlier`: the space's other active events (after_extraction's, summaries aside). A
    correction whose turn made no event, or whose event is not among them (gone, or of this
    very batch), links nothing."""
    if not corrections:
        return []
    by_label = {event_label(e.id): e for e in earlier}
    out = []
    for fix in corrections:
        old = by_label.get(fix.event)
        ref = message_ref(session, fix.seq)
        new = next((e for e in batch if e.kind != "summary" and ref in turns(e)), None)
        if old is None or new is None:
            continue
        note = update_note(fix.words or "corrected", [ref], [],
                           whole=all_about(old.summary, ()))
        out.append(relation(space, new.id, "updates", old.id, note, new.created_at))
    return out


def turns(event: Event) -> list[str]:
    """The message refs of the event's evidence."""
    return [message_ref(s.session, q) for s in event.sources
            for q in range(s.seq_start, s.seq_end + 1)]


def all_about(text: str, names: Sequence[str]) -> bool:
    """Whether every sentence of the text names the old thing, small talk aside ("Hi! We
    booked the Hotel Sakura."); with no names (rule 3) all of it is the old fact."""
    return not names or all(any(names_in(s, n) for n in names)
                            for s in split_sentences(text) if not is_small_talk(s))


def own_turns(services: Services, old: Event, names: Sequence[str],
              events: Sequence[Event]) -> list[str]:
    """The old event's messages that tell only the old fact: no other event cites them and
    every sentence of theirs names the old thing. Recall leaves them out with it."""
    others = {ref for e in events if e.id != old.id and e.kind != "summary"
              for ref in turns(e)}
    keys = [(s.session, q) for s in old.sources for q in range(s.seq_start, s.seq_end + 1)
            if message_ref(s.session, q) not in others]
    return [m.ref for m in services.store.load_messages(old.space, keys)
            if all_about(m.content, names)]


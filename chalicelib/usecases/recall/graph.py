"""Recall through the links: the best candidates pull in the events they are linked to.

A question about many things at once ("What activities does Mel do?", "Where has Mel
camped?") has its evidence spread over sessions, and each piece alone may be too weak to rank.
Its strongest pieces are linked to the others: the same entity (a pet, a place, a book), the
same thread (a trip, a months-long plan), a relation ("updates", "follows"). One step of
spreading activation brings them in:

    seeds       the first `graph_seeds` event candidates of the fused list, each with the
                activation a = its fused score / the best fused score
    spread      a seed passes a × link weight / (members − 1) to every other member of each
                link it belongs to (an entity's or thread's events, a relation's two ends):
                a random walk's share, so a link many events share says little about each;
                links with more than `graph_max_degree` members (a speaker) are skipped
    result      the `graph_max_added` events with the most activation, as a ranked list
                ("graph") fused with the keyword and vector lists by the recipe's fusion
                (`graph_fusion` "list"), or added to the fused score (`graph_fusion` "add")

    turns       the conversation around the first `graph_seeds` candidates (events or
                messages): the messages up to `graph_turns` turns before and after each, with
                a × `graph_turn_decay` ** distance — an answer is often the reply to (or the
                turn before) what matches the question best. These need no records; they are
                merged with the links' list (each scaled to its best) before the cut.

An event reached from several seeds sums their shares: central to what the question found.
The usual rerank and admission gate follow, so an expansion that is about something else
is still refused by the gate (it has no cosine of its own above the vector list's
lowest, and shares no terms with the query).

The links are read once per recall (`Links`, lazily): the space's Entity, Thread and Relation
records. A space without them (written before the graph existed, or by an extractor that
writes none) can fall back on `graph_fallback = "terms"`: the seeds' own distinctive words
(title, summary, tags, location; the query's words and the people's names left out) searched
by keyword among events — what the seeds share with events the query did not reach.

Threads also give cards their materials: `thread_materials(…)` gives each event card whose
event belongs to a thread the thread's title and up to `thread_materials` of its other events
and summaries (title, date, ref), which the blocks format shows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from chalicelib.domain.models import Card, CardThread, Event, ThreadMaterial
from chalicelib.domain.records import Entity, Relation, Thread
from chalicelib.domain.refs import EventRef, event_ref, message_ref, parse_ref
from chalicelib.domain.textproc import query_terms
from chalicelib.ports import Hit, SearchFilter, Services
from chalicelib.usecases.recall.cards import cleaned_event
from chalicelib.usecases.recall.fusion import Candidate
from chalicelib.usecases.recall.recipes import RecallRecipe

FALLBACK_TERMS = 24  # distinctive words of the seeds searched by the "terms" fallback


@dataclass
class Links:
    """One recall's view of the space's links, read from the store on first use."""

    services: Services
    space: str
    recipe: RecallRecipe
    _loaded: bool = False
    groups: dict[str, tuple[float, tuple[str, ...]]] = field(default_factory=dict)
    of_event: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    threads: dict[str, Thread] = field(default_factory=dict)  # event id → its thread
    records: int = 0
    _relations: list[Relation] | None = None

    def relation_records(self) -> list[Relation]:
        """The space's Relation records, read once per recall: the links and the updates
        (recall/updates.py) both read them."""
        if self._relations is None:
            self._relations = self.services.store.list_records(Relation, self.space)
        return self._relations

    def load(self) -> Links:
        if self._loaded:
            return self
        self._loaded = True
        store, space, r = self.services.store, self.space, self.recipe
        following = r.graph_seeds > 0  # else only threads are read, for their materials
        entities = store.list_records(Entity, space) if following else []
        threads = store.list_records(Thread, space)
        relations = self.relation_records() if following and r.graph_relation_weight else []
        self.records = len(entities) + len(threads) + len(relations)
        for ent in entities:
            self._group(f"entity:{ent.key}", r.graph_entity_weight, ent.events)
        for th in threads:
            self._group(f"thread:{th.key}", r.graph_thread_weight, th.events)
            for eid in [*th.events, *th.summaries]:
                # an event in two threads shows the most recently updated one
                if eid not in self.threads or th.updated_at > self.threads[eid].updated_at:
                    self.threads[eid] = th
        for rel in relations:
            self._group(f"relation:{rel.key}", r.graph_relation_weight, (rel.src, rel.dst))
        return self

    def _group(self, key: str, weight: float, members: Sequence[str]) -> None:
        members = tuple(dict.fromkeys(members))
        if weight <= 0 or len(members) < 2 or len(members) > self.recipe.graph_max_degree + 1:
            return
        self.groups[key] = (weight, members)
        for eid in members:
            self.of_event[eid].append(key)

    @property
    def empty(self) -> bool:
        return not self.load().groups


def turn_neighbours(services: Services, space: str, candidates: Sequence[Candidate],
                    recipe: RecallRecipe) -> Counter[str]:
    """The conversation around the best candidates: the messages up to `graph_turns` turns
    before and after each of the first `graph_seeds` candidates' own (an answer is often the
    reply to, or the turn before, what matches the question best), each with the seed's
    activation × `graph_turn_decay` ** distance. Refs only: no store read but the seed
    events' sources; a message that does not exist is dropped when cards are loaded."""
    top = max((c.score for c in candidates), default=0.0) or 1.0
    first = list(candidates[: recipe.graph_seeds])
    refs = {c.ref: parse_ref(c.ref) for c in first}
    events = {e.id: e for e in services.store.load_events(
        space, [r.id for r in refs.values() if isinstance(r, EventRef)])}
    activation: Counter[str] = Counter()
    own: set[tuple[str, int]] = set()
    for cand in first:
        ref = refs[cand.ref]
        if isinstance(ref, EventRef):
            event = events.get(ref.id)
            spans = [(s.session, s.seq_start, s.seq_end) for s in event.sources] if event else []
        else:
            spans = [(ref.session, ref.seq, ref.seq)]
        a = cand.score / top
        for session, lo, hi in spans:
            own.update((session, q) for q in range(lo, hi + 1))
            for d in range(1, recipe.graph_turns + 1):
                for seq in (lo - d, hi + d):
                    if seq >= 0:
                        activation[message_ref(session, seq)] += a * recipe.graph_turn_decay ** d
    for session, seq in own:
        activation.pop(message_ref(session, seq), None)
    return activation


def seeds(candidates: Sequence[Candidate], recipe: RecallRecipe) -> list[tuple[str, float]]:
    """(event id, activation) of the first `graph_seeds` event candidates."""
    top = max((c.score for c in candidates), default=0.0) or 1.0
    out = []
    for cand in candidates[: recipe.rerank_depth]:
        ref = parse_ref(cand.ref)
        if isinstance(ref, EventRef):
            out.append((ref.id, cand.score / top))
            if len(out) >= recipe.graph_seeds:
                break
    return out


def spread(links: Links, seeded: Sequence[tuple[str, float]],
           recipe: RecallRecipe) -> list[Hit]:
    """One step of spreading activation from the seeds; the best `graph_max_added` events
    (a seed too, when other seeds reach it), best first."""
    activation: Counter[str] = Counter()
    for eid, a in seeded:
        for key in links.of_event.get(eid, ()):
            weight, members = links.groups[key]
            share = a * weight / (len(members) - 1)
            for other in members:
                if other != eid:
                    activation[other] += share
    best = sorted(activation.items(), key=lambda kv: (-kv[1], kv[0]))[: recipe.graph_max_added]
    return [Hit(event_ref(eid), round(score, 6)) for eid, score in best if score > 0]


def by_terms(services: Services, space: str, seeded: Sequence[tuple[str, float]], query: str,
             named: set[str], recipe: RecallRecipe) -> list[Hit]:
    """The fallback without link records: the seeds' distinctive words, searched among events
    by keyword (BM25 weighs a rare shared word above a common one)."""
    events = services.store.load_events(space, [eid for eid, _ in seeded])
    asked = set(query_terms(query))
    people = {t for name in named for t in query_terms(name)}
    counts: Counter[str] = Counter()
    for event in events:
        text = " ".join([event.title, event.summary, *event.tags, event.location or ""])
        for term in dict.fromkeys(query_terms(text)):
            if term not in asked and term not in people:
                counts[term] += 1
    for event in events:  # the speakers of the seeds are everywhere: not distinctive
        for person in event.participants:
            for t in query_terms(person):
                counts.pop(t, None)
    terms = [t for t, _ in counts.most_common(FALLBACK_TERMS)]
    if not terms:
        return []
    seed_ids = {event_ref(eid) for eid, _ in seeded}
    hits = services.keywords.keyword_search(
        space, " ".join(terms), recipe.graph_max_added + len(seed_ids),
        SearchFilter(kinds=("event",)))
    return [h for h in hits if h.id not in seed_ids][: recipe.graph_max_added]


def expand(services: Services, links: Links, candidates: Sequence[Candidate], query: str,
           named: set[str], recipe: RecallRecipe) -> tuple[list[Hit], str]:
    """The graph list for a fused candidate list, and where it came from ("links", "terms",
    or "" when there was nothing to expand)."""
    seeded = seeds(candidates, recipe)
    if recipe.graph_seeds <= 0 or not candidates:
        return [], ""
    hits: list[Hit] = []
    source = ""
    if seeded and not links.empty:
        hits, source = spread(links, seeded, recipe), "links"
    elif seeded and recipe.graph_fallback == "terms":
        hits, source = by_terms(services, links.space, seeded, query, named, recipe), "terms"
    if recipe.graph_turns > 0:
        around = turn_neighbours(services, links.space, candidates, recipe)
        if around:
            top = max((h.score for h in hits), default=0.0) or 1.0
            merged: Counter[str] = Counter({h.id: h.score / top for h in hits})
            merged.update(around)
            best = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))
            hits = [Hit(ref, round(score, 6)) for ref, score in best[: recipe.graph_max_added]]
            source = f"{source}+turns" if source else "turns"
    return hits, source


def add_scores(candidates: Sequence[Candidate], hits: Sequence[Hit],
               weight: float) -> list[Candidate]:
    """`graph_fusion = "add"`: each hit adds weight × (its activation / the best one) to the
    fused score; a hit not among the candidates joins with that alone."""
    top = max((h.score for h in hits), default=0.0) or 1.0
    by_ref = {c.ref: Candidate(c.ref, c.score, dict(c.parts)) for c in candidates}
    for rank, hit in enumerate(hits, start=1):
        cand = by_ref.setdefault(hit.id, Candidate(hit.id))
        cand.score += weight * hit.score / top
        cand.parts["graph"] = hit.score
        cand.parts["graph_rank"] = rank
    return sorted(by_ref.values(), key=lambda c: (-c.score, c.ref))


# ------------------------------------------------------------------ thread materials


def with_threads(services: Services, space: str, cards: list[Card], links: Links,
                 limit: int) -> list[Card]:
    """Each event card whose event belongs to a thread, with the thread's title and up to
    `limit` of its other materials (summaries first, then the newest events) that are not
    cards of this recall already, from one batch read."""
    if limit <= 0 or not cards:
        return cards
    links.load()
    picked: dict[str, tuple[Thread, list[str]]] = {}
    shown = {r.id for r in map(parse_ref, (c.ref for c in cards)) if isinstance(r, EventRef)}
    for card in cards:
        ref = parse_ref(card.ref)
        if card.kind != "event" or not isinstance(ref, EventRef) or ref.id not in links.threads:
            continue
        th = links.threads[ref.id]
        others = [eid for eid in [*reversed(th.summaries), *reversed(th.events)]
                  if eid not in shown]
        picked[card.ref] = (th, list(dict.fromkeys(others)))
    if not picked:
        return cards
    wanted = {eid for _, others in picked.values() for eid in others[: limit * 2]}
    events: dict[str, Event] = {e.id: e for e in services.store.load_events(space,
                                                                             sorted(wanted))
                                if e.status == "active"}
    out = []
    for card in cards:
        if card.ref in picked:
            th, others = picked[card.ref]
            materials = [material(cleaned_event(events[eid], services.clean))
                         for eid in others if eid in events][:limit]
            card = card.model_copy(update={"thread": CardThread(
                id=th.key, title=th.title, materials=materials)})
        out.append(card)
    return out


def material(event: Event) -> ThreadMaterial:
    try:
        date = event.when.label
    except (ValueError, OverflowError):  # stored before times were range-checked
        date = None
    return ThreadMaterial(ref=event.ref, title=event.title, date=date)

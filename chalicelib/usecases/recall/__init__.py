"""Recall use-case: a query → a few cards, the text to inject, and a trace of why.

Pipeline (each step a small function, every knob in a RecallRecipe):
  freshen (a bounded catch-up of the space's keyword index) → candidates (keyword + vector
  over events and messages, inside a time window if one is named; a question asking for a
  list: the named person's own messages, `search_list`; the turn answering a question hit
  lifted with it, answers.py) → fusion → links (the best
  candidates' entities, threads, relations and neighbouring turns: graph.py) → cards loaded
  from the store (the truth) in one batch → rerank → admission gate (gate.py: hook-sized
  recalls at min_relevance, wider ones at the floor min_relevance_wide) → updates (a fact a
  later event changed is left out for the new one, unless the query asks about the past:
  updates.py) → limit → cooldown → context text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

from chalicelib.domain.errors import BadRequest
from chalicelib.domain.fact_questions import asks_the_value, facts_asked
from chalicelib.domain.models import Card, Layer, RecallRequest, RecallResponse
from chalicelib.domain.names import name_like_words, named_people, near_known, speaks_of_self
from chalicelib.domain.records import Entity
from chalicelib.domain.refs import MessageRef, parse_ref
from chalicelib.domain.textproc import is_cjk, query_terms
from chalicelib.ports import Freshness, Hit, SearchFilter, Services
from chalicelib.usecases.people import space_people
from chalicelib.usecases.recall.answers import (
    answers_to,
    inherit,
    load_hits,
    questions_answered,
    with_answers,
)
from chalicelib.usecases.recall.cards import found_sources_first, load_cards
from chalicelib.usecases.recall.context import estimate_tokens, render
from chalicelib.usecases.recall.cooldown import cooled_refs
from chalicelib.usecases.recall.fusion import (
    Candidate,
    Ranked,
    reciprocal_rank_fusion,
    score_fusion,
)
from chalicelib.usecases.recall.gate import Gate, language, small_talk_cosines
from chalicelib.usecases.recall.graph import Links, add_scores, expand, with_threads
from chalicelib.usecases.recall.languages import (
    Across,
    holds_other_language,
    in_other_words,
    merge_across,
)
from chalicelib.usecases.recall.profile import Answer, answer
from chalicelib.usecases.recall.query import Intent, asks_about_past, asks_for_list, intents
from chalicelib.usecases.recall.recipes import RecallRecipe, resolve
from chalicelib.usecases.recall.rerank import in_character, rerank, user_told
from chalicelib.usecases.recall.timewindow import (
    Anchor,
    find_anchor,
    is_hit,
    layer_windows,
    named_terms,
    window_filter,
    window_label,
)
from chalicelib.usecases.recall.updates import Updates


@dataclass
class Trace:
    """Recall steps in the language of the query, or in the request's `trace_lang`."""

    zh: bool  # the query's language: the context's preamble and "forgot" note follow it
    lines: list[str]
    lang: str | None = None  # RecallRequest.trace_lang: "zh" | "en" for the lines, else zh

    def add(self, zh: str, en: str) -> None:
        self.lines.append(zh if (self.lang == "zh" if self.lang else self.zh) else en)


def keyword_query(query: str, recipe: RecallRecipe) -> str:
    """A long query is cut to the longest beginning that has at most `max_query_terms`
    content terms: a pasted page must not turn into thousands of keyword lookups."""
    if len(query_terms(query)) <= recipe.max_query_terms:
        return query
    lo, hi = 0, len(query)
    while lo < hi:  # the longest prefix within the term budget
        mid = (lo + hi + 1) // 2
        if len(query_terms(query[:mid])) <= recipe.max_query_terms:
            lo = mid
        else:
            hi = mid - 1
    return query[:lo]


def search_candidates(services: Services, space: str, query: str, qvec,
                      recipe: RecallRecipe, flt: SearchFilter) -> list[Candidate]:
    return fuse_lists(search_lists(services, space, query, qvec, recipe, flt), recipe)


def search_lists(services: Services, space: str, query: str, qvec, recipe: RecallRecipe,
                 flt: SearchFilter, moved: Across | None = None) -> Ranked:
    """The keyword and vector hit lists, each with its weight; with `moved`, the vector list
    holds the memories in the other language too (languages.merge_across)."""
    ranked: Ranked = {}
    flt = SearchFilter(kinds=recipe.kinds, statuses=flt.statuses, start=flt.start,
                       end=flt.end, exclude_ids=flt.exclude_ids)
    cut = keyword_query(query, recipe)
    if recipe.keyword_k:
        ranked["keyword"] = (
            services.keywords.keyword_search(space, cut, recipe.keyword_k, flt),
            recipe.keyword_weight_cjk if is_cjk(query) else recipe.keyword_weight)
    foreign = True  # memories in the other language near the query (unknown: assumed)
    if recipe.vector_k:
        hits = services.vectors.vector_search(space, qvec, recipe.vector_k, flt)
        if moved is not None:
            moved_hits = services.vectors.vector_search(space, moved.vector, recipe.vector_k,
                                                        flt)
            foreign = holds_other_language(hits, moved_hits, moved, recipe.vector_k)
            hits = merge_across(hits, moved_hits, moved, recipe.vector_k)
        ranked["vector"] = (hits, recipe.vector_weight)
    if recipe.keyword_k and recipe.across_languages and foreign \
            and services.glossary is not None \
            and (words := in_other_words(cut, services.glossary, recipe.max_query_terms)):
        # the memories told in the other language, by the question's words as theirs
        ranked["keyword_across"] = (services.keywords.keyword_search(
            space, words, recipe.keyword_k, flt), recipe.across_keyword_share
            * (recipe.keyword_weight if is_cjk(query) else recipe.keyword_weight_cjk))
    return ranked


def search_list(services: Services, space: str, intent: Intent, recipe: RecallRecipe,
                named: set[str]) -> tuple[Ranked, dict[str, float]]:
    """The hit lists for a question asking for a list (query.asks_for_list), with the floor of
    each list that is shorter than `list_pool` (fusion.score_fusion). Its items are said in
    many turns over many sessions, one item each, so whole turns (messages) are ranked, not
    the sentences retold from them (events), which split a turn's words and spend several
    places of the ranking on one turn; and a question naming one person asks about that
    person's own turns, so only theirs are kept, `list_pool` per index (fetched three times
    deeper, then filtered by speaker).

    Filtered lists are often short, and the last hit of a short list is not the floor: a
    document such a list lacks scored below every hit fetched (keyword: 0, no match, when
    the index ran out of matches)."""
    pool = recipe.list_pool
    fetch = pool * (3 if len(named) == 1 else 1)
    fetched = search_lists(services, space, intent.keywords, intent.vector, replace(
        recipe, kinds=("message",), keyword_k=fetch if recipe.keyword_k else 0,
        vector_k=fetch if recipe.vector_k else 0), SearchFilter(), intent.across)
    found = {h.id for hits, _ in fetched.values() for h in hits}
    keep, answers = found, {}
    if len(named) == 1 or recipe.answers:
        loaded = load_hits(services, space, found)
        by = named if len(named) == 1 else None
        if by:
            keep = {m.ref for m in loaded if m.speaker in by}
        if recipe.answers:  # (the person's) answers to the questions found
            answers = answers_to(services, space, loaded, by)
    lists: Ranked = {}
    floors: dict[str, float] = {}
    for name, (hits, weight) in fetched.items():
        kept = inherit(hits, keep, answers, recipe.answers, recipe.question_keeps)[:pool]
        lists[name] = (kept, weight)
        if len(kept) < pool:
            if len(hits) == fetch:  # the index had more: they scored at most the last fetched
                floors[name] = hits[-1].score
            elif name == "keyword":  # every match fetched: the rest match nothing
                floors[name] = 0.0
    return lists, floors


def fuse_lists(ranked: Ranked, recipe: RecallRecipe,
               floors: dict[str, float] | None = None) -> list[Candidate]:
    if recipe.fusion == "score":
        return score_fusion(ranked, floors)
    return reciprocal_rank_fusion(ranked, k=recipe.rrf_k)


def facts_told(services: Services, space: str, question: str, named: set[str]
               ) -> tuple[list[Hit], Answer]:
    """The turns that told the facts a question asks of `named` (recall.profile), every fact
    it asks ("Where does Nora work now, and what does she do?": her workplace and her job),
    and those of them that tell the value asked, with the values (`asks_the_value`:
    `told_first`). Past or now as the clause asking each says ("Which city does 小满 live in,
    and where is she from originally?" asks where she lives now)."""
    answering: dict[str, Hit] = {}  # by ref: each turn once, at its first place
    told: dict[str, Hit] = {}
    values: list[str] = []
    for attribute, clause in facts_asked(question):
        found = answer(services, space, question, named, asks_about_past(clause), attribute)
        for hit in found.hits:
            answering.setdefault(hit.id, hit)
        if asks_the_value(attribute, clause):
            for hit in found.hits:
                told.setdefault(hit.id, hit)
            if attribute != "lives_in":  # a place is said of much else: trips, others' moves
                values += found.values
    return list(answering.values()), Answer(list(told.values()), values)


def told_first(ranked: Sequence[Card], admitted: list[Card], told: Answer) -> list[Card]:
    """A hook's cards for a question asking a person's lasting fact ("Where does Nora live
    now?", 苏禾现在住在哪儿？): the cards citing the turns that told its value (`told`: the
    `facts` list, recall.profile.answer), then those saying the value told ("和光精密，成本会计，
    明天就去报到" when the rules read 成本会计 from the interview before it), each in the order
    ranked, first, whatever the gate made of them — the store's facts know what answers;
    meaning and keywords rank every turn that says live or 住 alike, and "hello from York!!"
    holds neither ("live", 住). Then the rest the gate admitted."""
    if not told.hits:
        return admitted
    turns = {(ref.session, ref.seq) for hit in told.hits
             if isinstance(ref := parse_ref(hit.id), MessageRef)}
    cited = [c for c in ranked if evidence_keys(c) & turns]
    refs = {c.ref for c in cited}
    # then the cards saying the value (a job, a pet's name; not a home: facts_told)
    answering = cited + [c for c in ranked if c.ref not in refs and holds_value(c, told.values)]
    refs.update(c.ref for c in answering)
    return answering + [c for c in admitted if c.ref not in refs]


def holds_value(card: Card, values: Sequence[str]) -> bool:
    """The card says one of the values (a word of two characters or more: 成本会计, York)."""
    text = f"{card.title} {card.text}".lower()
    return any(len(v) >= 2 and (v.lower() in text if is_cjk(v)
                                else re.search(rf"\b{re.escape(v.lower())}\b", text))
               for v in values)


def evidence_keys(card: Card) -> set[tuple[str, int]]:
    return {(s.session, q) for s in card.sources for q in range(s.seq_start, s.seq_end + 1)}


def to_cards(services: Services, space: str, candidates: list[Candidate], limit: int) -> list[Card]:
    """Load cards best first, skipping any whose evidence a better card already shows."""
    return dedupe_evidence([card for card, _ in load_cards(services.store, space,
                                                            candidates, services.clean)])[:limit]


def resolve_recipe(services: Services, request: RecallRequest) -> RecallRecipe:
    try:
        return resolve(request.recipe or services.settings.recipe, services.settings)
    except KeyError as exc:
        raise BadRequest(str(exc.args[0]), code="unknown_recipe") from None


def recall(services: Services, space: str, request: RecallRequest, *,
           may_write: bool = True) -> RecallResponse:
    """Recall by time when a time is named, otherwise by meaning and keywords. `may_write`:
    may the caller write the space? A reader's recall writes nothing: it sees the window's
    cooldown but is not counted there (cooldown.py). Entry points pass their key's right."""
    # The query read as memories are (chalicelib.domain.cleaning): no <think>, no status panel.
    # The recent turns too: a reasoning model's last reply carries its <think> block.
    recent = [(t, services.clean(t.content)) for t in request.recent]
    request = request.model_copy(update={
        "query": services.clean(request.query) or request.query,
        "recent": [t.model_copy(update={"content": text}) for t, text in recent if text]})
    recipe = resolve_recipe(services, request)
    now = request.now or services.clock()
    trace = Trace(zh=is_cjk(request.query), lines=[], lang=request.trace_lang)
    trace.add(f"[记忆检索] 线索：{request.query}", f"[recall] query: {request.query}")
    fresh = services.index.freshen(space, recipe.freshness_budget_ms / 1000)
    trace_freshness(trace, fresh)
    anchor, understood = None, True
    if recipe.time_layers:
        anchor, understood = find_anchor(request.query, request.time_hint, now,
                                         services.settings.tz)
    if not understood:
        trace.add(f"[记忆检索] 看不懂时间「{request.time_hint}」，请改用 2026-10-20 这类写法再试",
                  f"[recall] could not read the time {request.time_hint!r}; "
                  "retry with a date like 2026-10-20")
        return respond(request, "unparsed", [], [], trace)
    cooled = cooled_refs(services, space, request.window, now, recipe, counted=may_write)
    people = space_people(services, space)  # one read per recall
    named = asked_about(request.query, *people)
    if strangers := strangers_asked_about(services, space, request, recipe, people[0] | named):
        who = ", ".join(strangers)
        trace.add(f"[记忆检索] 问的是「{who}」，记忆里从没有这个名字：不注入任何记忆",
                  f"[recall] asks about {who}, a name the memory has never seen: nothing "
                  "injected")
        return apply_cooldown(request, respond(request, "none", [], [], trace), cooled, trace)
    if anchor is not None and holds_all(services, space, anchor):
        result = recall_in_all_of(services, space, request, recipe, anchor, named, trace)
    elif anchor is None:
        result = recall_plain(services, space, request, recipe, named, trace)
    else:
        result = recall_by_time(services, space, request, recipe, anchor, named, trace)
        if result.verdict == "forgot" and anchor.start >= now and speaks_of_plans(request.query):
            result = recall_plans(services, space, request, recipe, anchor, named, trace)
        result = fill_by_meaning(services, space, request, recipe, named, result, trace)
    result = apply_cooldown(request, without_context(request, result, trace), cooled, trace)
    if request.format == "timeline" and result.cards:  # key events by the space's threshold
        context = render(result.cards, "timeline", services.settings.highlight_threshold,
                         zh=trace.zh)
        result = result.model_copy(update={"context": context,
                                           "context_tokens": estimate_tokens(context)})
    return result


def recall_hook_sized(services: Services, space: str, request: RecallRequest, *,
                      may_write: bool = True) -> RecallResponse:
    """A door's recall — the chat gateway, POST …/hook/recall, MCP's recall_memory: one card
    limit whatever the path, the request's max_cards (or limit), else the recipe's max_cards
    (ANNALS_MAX_CARDS, 2), on the time path too. (A plain POST …/recall without one returns
    up to time_max_results cards from a named time.)"""
    if request.card_limit is None:
        request = request.model_copy(update={"max_cards": resolve_recipe(services,
                                                                         request).max_cards})
    return recall(services, space, request, may_write=may_write)


# A named time of a month or more that holds this share of the space's memories ("今年",
# "this year" in a space told this year) selects nothing: the time path's hit rule (shared
# keywords, a near paraphrase) would rank its whole memory by a few words, so a question with
# words of its own is recalled by meaning and keywords like one naming no time, within the
# time. A shorter time ("昨天" in a space started yesterday) keeps the time path: what it
# says of that day is the answer, and its trace says which day it read.
ALL_OF_IT = 0.9
ALL_OF_IT_MIN = timedelta(days=28)


def holds_all(services: Services, space: str, anchor: Anchor) -> bool:
    """Does the anchor's window (a month or more, with words beside the time) hold nearly
    all of the space's memories?"""
    if anchor.end - anchor.start < ALL_OF_IT_MIN or not anchor.terms:
        return False
    total = services.keywords.count(space, SearchFilter())
    inside = services.keywords.count(space, window_filter(SearchFilter(), anchor.start,
                                                          anchor.end))
    return total > 0 and inside >= ALL_OF_IT * total


def recall_in_all_of(services: Services, space: str, request: RecallRequest,
                     recipe: RecallRecipe, anchor: Anchor, named: set[str],
                     trace: Trace) -> RecallResponse:
    """A recall whose named time holds the whole memory: the plain recall's cards, those of
    that time. Naming a time asks to remember (the time path admits its hits without the
    gate), so the gate's lower floor applies at every size, not the hook's threshold."""
    label = window_label(anchor.start, anchor.end)
    if request.min_relevance is None:
        request = request.model_copy(update={"min_relevance": recipe.min_relevance_wide})
    trace.add(f"[时间回忆] 「{anchor.matched}」（{label}）涵盖几乎全部记忆，不按时间筛选，按内容检索",
              f"[time recall] {anchor.matched!r} ({label}) holds nearly all the memory: "
              "recalled by meaning and keywords within it")
    plain = recall_plain(services, space, request, recipe, named, trace)
    cards = [c for c in plain.cards if c.when is None
             or (c.when.start < anchor.end and c.when.end > anchor.start)]
    return respond(request, "hit" if cards else "none", [], cards, trace)


def speaks_of_plans(query: str) -> bool:
    """The question speaks of what is still to come (打算, will, plans for …): a time after
    now is then a plan's. "What did Maria do on 20 August?" asked before that day is not."""
    from chalicelib.domain.timeparse.span import FUTURE_WORDS  # lazily, as find_anchor

    return FUTURE_WORDS.search(query) is not None


def recall_plans(services: Services, space: str, request: RecallRequest, recipe: RecallRecipe,
                 anchor: Anchor, named: set[str], trace: Trace) -> RecallResponse:
    """A time still to come, asked as one ("感恩节我打算去哪过？" a week before it), holds no
    memory: only what was said of it before, a plan told on its own day ("Thanksgiving at my
    parents' place"). So not "forgot": recalled by meaning and keywords, the time's words
    kept in the query (a plan names its time), through the gate like any plain recall."""
    label = window_label(anchor.start, anchor.end)
    trace.add(f"[时间回忆] 「{anchor.matched}」（{label}）还没到：找之前说过的打算",
              f"[time recall] {anchor.matched!r} ({label}) is still to come: what was said "
              "of it before")
    return recall_plain(services, space, request, recipe, named, trace)


def fill_by_meaning(services: Services, space: str, request: RecallRequest,
                    recipe: RecallRecipe, named: set[str], result: RecallResponse,
                    trace: Trace) -> RecallResponse:
    """A wide recall (more cards than a hook's) whose named time had fewer hits than it asked
    for: the rest by meaning and keywords, after the time's hits (recipe.time_fill). Not
    after "forgot": nothing of that time is remembered, and the note says so."""
    limit = request.card_limit or 0
    if not recipe.time_fill or result.verdict not in ("hit", "expanded") \
            or limit <= recipe.max_cards or len(result.cards) >= limit:
        return result
    plain = recall_plain(services, space, request, recipe, named,
                         Trace(zh=trace.zh, lines=[], lang=trace.lang))
    cards = dedupe_evidence([*result.cards, *plain.cards])[:limit]
    added = len(cards) - len(result.cards)
    trace.add(f"[记忆检索] 时间内命中 {len(result.cards)} 条，按内容补足 {added} 条",
              f"[recall] {len(result.cards)} hits in the named time; {added} more by meaning "
              "and keywords")
    return respond(request, result.verdict, result.layers, cards, trace)


def trace_freshness(trace: Trace, fresh: Freshness) -> None:
    if fresh.keyword_pending:
        trace.add(f"[记忆检索] 还有 {fresh.keyword_pending} 条新消息未建索引，本次找不到",
                  f"[recall] {fresh.keyword_pending} new messages not yet indexed; "
                  "not findable this time")
    if fresh.vector_pending:
        trace.add(f"[记忆检索] {fresh.vector_pending} 条消息尚未向量化，只能按关键词找到",
                  f"[recall] {fresh.vector_pending} messages not yet embedded "
                  "(findable by keyword only)")


def without_context(request: RecallRequest, result: RecallResponse,
                    trace: Trace) -> RecallResponse:
    """No card of the turns the host sends its model anyway (`in_context`; the plain path
    leaves them out before its card limit, so others take their places there)."""
    if request.in_context is None:
        return result
    kept = [c for c in result.cards if not request.in_context.holds(c)]
    if len(kept) == len(result.cards):
        return result
    trace.add(f"[记忆检索] {len(result.cards) - len(kept)} 条就在模型读到的对话里，不重复注入",
              f"[recall] {len(result.cards) - len(kept)} in the turns the model already reads: "
              "not repeated")
    return respond(request, result.verdict if kept else "none", result.layers, kept, trace)


def apply_cooldown(request: RecallRequest, result: RecallResponse, cooled: set[str],
                   trace: Trace) -> RecallResponse:
    """Drop cooling cards after selection, so a weaker card never takes their place."""
    kept = [c for c in result.cards if c.ref not in cooled]
    if len(kept) == len(result.cards):
        return result
    skipped = [c.ref for c in result.cards if c.ref in cooled]
    trace.add(f"[冷却] 窗口 {request.window} 刚用过 {len(skipped)} 条，本轮跳过且不补位：{', '.join(skipped)}",
              f"[cooldown] window {request.window} recently injected {len(skipped)}; skipped, "
              f"not backfilled: {', '.join(skipped)}")
    # Everything found was sent to this window lately: `cooled`, not the `hit` of an empty
    # context (which reads as a failure) nor `none` (which says nothing relevant exists).
    return respond(request, result.verdict if kept else "cooled", result.layers, kept, trace)


def asked_about(query: str, people: set[str], users: set[str]) -> set[str]:
    """The people a query is about: those it names; else, when it speaks of the one asking
    ("what did I buy?", 我上周去哪了) and one person of the space speaks as the user, that
    person — their own turns hold the answer, not the other side's questions about it."""
    named = named_people(query, people)
    if not named and len(users) == 1 and speaks_of_self(query):
        return set(users)
    return named


# Bigrams nearly every stretch of Chinese chat holds: one lookup of them, in the same keyword
# index call as the names, tells whether a space speaks Chinese at all.
HAN_PROBE = frozenset({"我们", "什么", "今天", "一个", "没有", "现在", "时候", "就是", "这个",
                       "觉得", "还是", "知道"})


def strangers_asked_about(services: Services, space: str, request: RecallRequest,
                          recipe: RecallRecipe, people: set[str]) -> list[str]:
    """A hook-sized recall whose question names someone (a capitalised word where a name
    stands) that no memory, speaker or alias of the space holds: what it would inject is
    about other people, so it injects nothing. Wider recalls (search, a tool's read) still
    answer. `people`: the space's people and those the question is about (read already);
    then one keyword index call for the words of the names still unknown
    (`KeywordIndex.held_terms`), and the entities read only for a name still unknown."""
    if not hook_sized(request, recipe) or is_cjk(request.query):
        return []
    names = [name for name in name_like_words(request.query)
             if not any(near_known(word, people) for word in name)]
    tokens = {word: query_terms(word) for name in names for word in name}
    if not tokens:
        return []
    held = services.keywords.held_terms(space, [t for ts in tokens.values() for t in ts]
                                        + list(HAN_PROBE))
    if held.intersection(HAN_PROBE):
        # The space talks in Chinese too: Shenzhen may be stored as 深圳, Kyoto as 京都, a
        # person's Latin name in Han. Words cannot tell a stranger there; the gate judges
        # the meaning (issue 36: "When are we flying to Kyoto?" was vetoed).
        return []
    entities: list[str] | None = None
    out = []
    for name in names:  # a name is known when any of its words is
        if any(held.intersection(tokens[word]) for word in name):
            continue
        if entities is None:
            entities = [n for e in services.store.list_records(Entity, space)
                        for n in (e.name, *e.aliases)]
        if not any(near_known(word, entities) for word in name):
            out.append(" ".join(name))
    return out


def recall_plain(services: Services, space: str, request: RecallRequest, recipe: RecallRecipe,
                 named: set[str], trace: Trace) -> RecallResponse:
    """`named`: the people the query is about (asked_about)."""
    limit = request.card_limit or recipe.max_cards
    threshold = gate_threshold(request, recipe, limit)
    gates: list[Gate] = []
    asked = intents(services, request, recipe, named)
    per_intent, total = [], 0
    links, linked = Links(services, space, recipe), []
    # a fact a later event changed: the new one shown (the relations read once, with links)
    updates = Updates(services, space, links.relation_records)
    listed = []
    left_out = [0, 0]  # cards that passed the gate: the AI's own lines, asides out of character
    for intent in asked:
        listing = bool(recipe.list_pool) and asks_for_list(intent.text)
        told = Answer([], [])  # the turns that told the value asked (asks_the_value), if any
        if listing:  # the person's own turns: no links to other speakers' turns
            listed.append(intent.text)
            lists, floors = search_list(services, space, intent, recipe, named)
        else:
            lists, floors = search_lists(services, space, intent.keywords, intent.vector,
                                         recipe, SearchFilter(), intent.across), {}
            lists = with_answers(services, space, lists, recipe.answers, recipe.question_keeps)
            answering, told = facts_told(services, space, intent.text, named) \
                if recipe.facts_weight and named else ([], Answer([], []))
            if answering:
                lists["facts"] = (answering, recipe.facts_weight)
        candidates = fuse_lists(lists, recipe, floors)
        if recipe.graph_seeds and not listing:
            candidates = through_links(services, links, lists, candidates, intent.keywords,
                                       named, recipe, linked)
        total += len(candidates)
        ranked = rerank(load_cards(services.store, space, candidates[: recipe.rerank_depth],
                                   services.clean), named, recipe, now=intent.now)
        if threshold.value:
            gate = Gate.for_query(services.embedder, intent.judged, intent.vector, named,
                                  [c.parts["vector"] for c in candidates if "vector" in c.parts],
                                  recipe.vector_k, threshold.value, recipe.term_weight,
                                  recipe.cross_coverage,
                                  # the floor refuses the plainly unrelated only
                                  recipe.cross_lift if threshold.scope == "wide" else 1.0,
                                  intent.across, services.glossary)
            if threshold.scope == "hook":
                gate.space_holds(services.keywords, space, recipe.space_weight)
                gate.by_characters(recipe.units_margin)
            gate.asked = questions_answered(services, space, ranked)
            admitted = gate.admit(ranked)
            if threshold.scope == "hook":
                shown = told_first(ranked, admitted, told)
                mine = user_told(shown, named)
                admitted = in_character(mine, named_people(request.query, named))
                left_out[0] += len(shown) - len(mine)
                left_out[1] += len(mine) - len(admitted)
            ranked = admitted
            gates.append(gate)
        per_intent.append(updates.apply(found_sources_first(ranked, candidates), intent.past))
    cards = dedupe_evidence(interleave(per_intent))
    cards = [c for c in cards if not request.in_context or not request.in_context.holds(c)]
    cards = cards[:limit]
    cards = with_threads(services, space, cards, links, recipe.thread_materials)
    cards = updates.strip_materials(cards, any(i.past for i in asked))
    if listed:
        own = f"{next(iter(named))}" if len(named) == 1 else ""
        trace.add(f"[记忆检索] 问的是一串（{'；'.join(listed)}）：按整轮对话检索"
                  + (f"，只看{own}自己说的" if own else ""),
                  f"[recall] asks for a list ({'; '.join(listed)}): whole turns searched"
                  + (f", {own}'s own only" if own else ""))
    for n, source, new in linked:
        trace.add(f"[记忆检索] 经关联（{source}）扩展 {n} 条，其中新增 {new} 条",
                  f"[recall] through links ({source}): {n} linked, {new} new")
    if len(asked) > 1:
        trace.add(f"[记忆检索] 拆成 {len(asked)} 个问题分别检索：" + " | ".join(i.text for i in asked),
                  f"[recall] {len(asked)} intents searched apart: "
                  + " | ".join(i.text for i in asked))
    if request.recent:
        trace.add(f"[记忆检索] 结合前 {len(request.recent)} 轮对话理解问题",
                  f"[recall] read with the {len(request.recent)} turn(s) before it")
    trace.add(f"[记忆检索] 未指定时间 · 候选 {total} 条 · 选出 {len(cards)} 条"
              f"（{recipe.name}）",
              f"[recall] no time named · {total} candidates · {len(cards)} chosen "
              f"({recipe.name})")
    trace_gate(trace, threshold, gates)
    trace_left_out(trace, *left_out)
    for zh, en in updates.trace(cards):
        trace.add(zh, en)
    return respond(request, "hit" if cards else "none", [], cards, trace)


@dataclass(frozen=True)
class GateThreshold:
    """The admission threshold a recall applies (0: the gate is off) and where it comes
    from: the request's `min_relevance`, the recipe's for a hook-sized recall, or the
    recipe's lower floor for a wider one."""

    value: float
    scope: str  # "request" | "hook" | "wide"
    setting: str = "min_relevance"  # the field it comes from (for the trace)

    def label(self, zh: bool) -> str:
        if zh:
            return {"request": "请求指定", "hook": "小份召回", "wide": "大份召回"}[self.scope]
        return {"request": "requested", "hook": "hook-sized recall",
                "wide": "wide recall"}[self.scope]


def gate_threshold(request: RecallRequest, recipe: RecallRecipe, limit: int) -> GateThreshold:
    """The admission threshold for this recall: the request's own if it names one; else the
    recipe's `min_relevance` for a hook-sized recall (at most recipe.max_cards cards; a
    Chinese query's `min_relevance_cjk`, as the space term reads words only) and its
    lower floor `min_relevance_wide` (never above min_relevance) for a wider one. A
    min_relevance of 0 switches the gate off at every size."""
    if request.min_relevance is not None:
        return GateThreshold(request.min_relevance, "request")
    if limit <= recipe.max_cards:
        if recipe.min_relevance and is_cjk(request.query):
            return GateThreshold(recipe.min_relevance_cjk, "hook", "min_relevance_cjk")
        return GateThreshold(recipe.min_relevance, "hook")
    if not recipe.min_relevance:
        return GateThreshold(0.0, "wide")
    return GateThreshold(min(recipe.min_relevance_wide, recipe.min_relevance), "wide",
                         "min_relevance_wide")


def hook_sized(request: RecallRequest, recipe: RecallRecipe) -> bool:
    """Is the gate at the hook's threshold for this request (at most recipe.max_cards cards,
    when it asks for no limit of its own, and no threshold of its own)? What such a recall
    injects is unasked: the strangers rule and the time path's names read it."""
    return gate_threshold(request, recipe, request.card_limit or recipe.max_cards).scope == "hook"


def _num(value: float) -> str:
    return f"{round(value, 3):g}"


def trace_gate(trace: Trace, threshold: GateThreshold, gates: Sequence[Gate]) -> None:
    """One line naming the threshold that applied and the margin: how many of the reranked
    cards it judged passed and the best relevance, or, when none passed, the best against the
    threshold."""
    v = _num(threshold.value)
    zh_scope, en_scope = threshold.label(True), threshold.label(False)
    if not threshold.value:
        trace.add(f"[记忆检索] 准入门槛关闭（{zh_scope}，{threshold.setting} 0）："
                  "按排序填满卡位",
                  f"[recall] gate off ({en_scope}, {threshold.setting} 0): the best-ranked "
                  "candidates fill the slots")
        return
    judged = sum(g.judged for g in gates)
    passed = sum(g.passed for g in gates)
    top = max((g for g in gates if g.best is not None), key=lambda g: g.best or 0.0,
              default=None)
    best = _num(top.best) if top is not None and top.best is not None else None
    # what the best card had to reach: a Chinese card judged by its characters needs more
    # (Gate.by_characters), and "0.093 < 0.09" read as a contradiction
    needed = _num(top.best_needed) if top is not None and top.best_needed is not None else v
    if not judged:
        trace.add(f"[记忆检索] 准入门槛：相关度 ≥ {v}（{zh_scope}）；没有卡可判断",
                  f"[recall] gate: relevance ≥ {v} ({en_scope}); no cards to judge")
    elif not passed:
        by_chars = needed != v
        zh_best = (f"最高相关度 {best} < {needed}" + ("（按字判断的中文卡）" if by_chars else "")
                   if best else "都没有语义证据，按词判断也不够")
        en_best = (f"best {best} < {needed}" + (" (a Chinese card judged by its characters)"
                                                 if by_chars else "")
                   if best else "no meaning evidence, too few words held")
        trace.add(f"[记忆检索] 没有候选通过准入门槛（相关度 ≥ {v}，{zh_scope}；{zh_best}），"
                  "本次不注入记忆",
                  f"[recall] nothing passed the gate (relevance ≥ {v}, {en_scope}; {en_best}); "
                  "nothing to inject")
    else:
        trace.add(f"[记忆检索] 准入门槛：相关度 ≥ {v}（{zh_scope}），{judged} 张卡中 "
                  f"{passed} 张通过" + (f"，最高相关度 {best}" if best else ""),
                  f"[recall] gate: relevance ≥ {v} ({en_scope}): {passed} of {judged} "
                  "cards pass" + (f"; best relevance {best}" if best else ""))


def trace_left_out(trace: Trace, ai_lines: int, asides: int) -> None:
    """One line when cards that passed the gate were left out of a hook's (rerank.user_told,
    rerank.in_character): without it "2 of 23 cards pass" ended in verdict none unexplained."""
    if not ai_lines and not asides:
        return
    zh = [f"{ai_lines} 张角色自己说的话（人的经历由其本人说出）" if ai_lines else "",
          f"{asides} 张戏外闲话（ooc：玩家自己的事，不是所问的角色）" if asides else ""]
    en = [f"{ai_lines} of the character's own lines (a person's life is told by their own "
          "turns)" if ai_lines else "",
          f"{asides} aside{'s' * (asides != 1)} out of character (the player's own week, not "
          "the persona asked about)" if asides else ""]
    trace.add("[记忆检索] 通过门槛的卡中略去 " + "、".join(p for p in zh if p),
              "[recall] left out of the cards that passed the gate: "
              + ", ".join(p for p in en if p))


def through_links(services: Services, links: Links, lists: Ranked,
                  candidates: list[Candidate], query: str, named: set[str],
                  recipe: RecallRecipe, linked: list[tuple[int, str, int]]) -> list[Candidate]:
    """The candidates with the events and turns their best ones are linked to
    (recall/graph.py), fused as the recipe says; `linked` gets a line for the trace."""
    hits, source = expand(services, links, candidates, query, named, recipe)
    if not hits:
        return candidates
    known = {c.ref for c in candidates}
    linked.append((len(hits), source, sum(h.id not in known for h in hits)))
    if recipe.graph_fusion == "add":
        return add_scores(candidates, hits, recipe.graph_weight)
    return fuse_lists({**lists, "graph": (hits, recipe.graph_weight)}, recipe)


def interleave(ranked: list[list[Card]]) -> list[Card]:
    """Each intent's best card, then each one's second, …: a message that asks two things
    gets an answer to both before a second card for either."""
    out, seen = [], set()
    for rank in range(max((len(r) for r in ranked), default=0)):
        for cards in ranked:
            if rank < len(cards) and cards[rank].ref not in seen:
                seen.add(cards[rank].ref)
                out.append(cards[rank])
    return out


def recall_by_time(services: Services, space: str, request: RecallRequest,
                   recipe: RecallRecipe, anchor: Anchor, named: set[str],
                   trace: Trace) -> RecallResponse:
    """Seed 003's layers: the named window, then ×factor around its centre, then forgot."""
    limit = request.card_limit or recipe.time_max_results
    topic = anchor.topic or request.query
    # A hook-sized recall injects unasked: there a person's name says whose day it was, not
    # what happened (it would make any of their memories of the window a hit: LoCoMo's
    # questions put to another space, names swapped, came back with cards 0.12 of the time
    # from here). A wider recall keeps the name as a word: all of theirs in the window.
    terms = list(anchor.terms_without(named) if hook_sized(request, recipe) else anchor.terms)
    qvec = services.embedder.embed_query(topic)
    trace.add(f"[时间回忆] 锚点「{anchor.matched}」→ {window_label(anchor.start, anchor.end)}"
              f"（{anchor.granularity}）· 关键词 {' '.join(terms) or '（无，取整段时间）'}",
              f"[time recall] anchor {anchor.matched!r} → "
              f"{window_label(anchor.start, anchor.end)} ({anchor.granularity}) · "
              f"keywords {' '.join(terms) or '(none: the whole window)'}")
    if terms:
        trace.add(f"[时间回忆] 命中门槛：共享关键词 ≥ {_num(recipe.min_score)} 分，或相似度 ≥ "
                  f"{_num(recipe.time_min_similarity)}（时间回忆不用准入门槛）",
                  f"[time recall] hit threshold: keyword points ≥ {_num(recipe.min_score)} "
                  f"or similarity ≥ {_num(recipe.time_min_similarity)} (the time path's own, "
                  "not the gate)")
    else:
        trace.add("[时间回忆] 命中门槛：没有关键词，时间段内的记忆都算命中",
                  "[time recall] hit threshold: no keywords, every memory in the window is a hit")
    layers: list[Layer] = []
    shift = language_shift(services, topic, qvec, recipe) if terms else None
    others = named_terms(topic, terms) if hook_sized(request, recipe) else frozenset()
    windows = layer_windows(anchor.start, anchor.end, recipe.expand_factor,
                            recipe.max_expansions)
    links = Links(services, space, recipe)  # the relations read once: updates and threads
    updates = Updates(services, space, links.relation_records)
    for index, (start, end) in enumerate(windows):
        flt = window_filter(SearchFilter(), start, end)
        in_window = services.keywords.count(space, flt)
        candidates = search_candidates(services, space, topic, qvec, recipe, flt)
        loaded = load_cards(services.store, space, candidates, services.clean)
        hits = [(card, cand) for card, cand in loaded
                if is_hit(card, cand, terms, recipe, shift, others)]
        cards = dedupe_evidence(rerank(hits, named, recipe) if recipe.time_rerank
                                else [card for card, _ in hits])[:limit]
        cards = updates.with_updaters(cards)[:limit]
        layers.append(Layer(layer=index, start=start, end=end, candidates=in_window,
                            hits=len(cards)))
        similar = [c.parts["vector"] for _, c in loaded if "vector" in c.parts]
        zh_best = f"，最高相似度 {_num(max(similar))}" if similar and terms else ""
        en_best = f", best similarity {_num(max(similar))}" if similar and terms else ""
        trace.add(f"[时间回忆] 第 {index} 层 {window_label(start, end)}：候选 {in_window} 条，"
                  f"命中 {len(cards)} 条{zh_best}",
                  f"[time recall] layer {index} {window_label(start, end)}: "
                  f"{in_window} candidates, {len(cards)} hits{en_best}")
        if cards:
            for zh, en in updates.trace(cards):
                trace.add(zh, en)
            cards = with_threads(services, space, cards, links, recipe.thread_materials)
            verdict = "hit" if index == 0 else "expanded"
            trace.add(f"[时间回忆] 结论：{'命中' if index == 0 else f'扩大 {index} 次后命中'}",
                      f"[time recall] verdict: {verdict}"
                      + (f" after {index} expansion(s)" if index else ""))
            return respond(request, verdict, layers, cards, trace)
    trace.add("[时间回忆] 结论：我忘记了（扩大后仍无记忆，不要编造）",
              "[time recall] verdict: forgot (nothing even after widening; do not invent)")
    first, last = windows[0], windows[-1]
    note = forgot_note(trace.zh, anchor.matched, window_label(*first), window_label(*last))
    return respond(request, "forgot", layers, [], trace, note=note)


def language_shift(services: Services, query: str, qvec,
                   recipe: RecallRecipe) -> dict[str, float]:
    """Per language, how far a card in it may sit below the query's own cosine floor: the
    query's cosine to small talk in it minus to small talk in its own (0 for its own), and,
    since e5 squeezes meaning across languages into a narrower band than within one, the
    lift above small talk a foreign card needs is the own language's × cross_lift."""
    base = small_talk_cosines(services.embedder, qvec)
    lang = language(query)
    own = base[lang]
    squeeze = (1 - recipe.cross_lift) * max(0.0, recipe.time_min_similarity - own)
    return {other: cos - own - (squeeze if other != lang else 0.0) for other, cos in base.items()}


def forgot_note(zh: bool, matched: str, named: str, widest: str) -> str:
    """What to inject when nothing is remembered: an instruction not to invent."""
    if zh:
        return (f"[记忆] 关于「{matched}」（{named}，已查到 {widest}）没有任何记忆。"
                "如被问起，请如实回答“我不记得了”，不要编造。")
    return (f"[memory] Nothing is remembered about {matched!r} ({named}; searched {widest}). "
            "If asked, say you don't remember; do not invent.")


def dedupe_evidence(cards: list[Card]) -> list[Card]:
    """Drop a card whose evidence a better card already shows in full, or whose text a
    better card already says (notes saved alike cite no evidence to compare)."""
    kept: list[Card] = []
    shown: set[tuple[str, int]] = set()
    said: set[str] = set()
    for card in cards:
        keys = evidence_keys(card)
        text = " ".join(card.text.split()).casefold()
        if (keys and keys <= shown) or text in said:
            continue
        kept.append(card)
        shown |= keys
        said.add(text)
    return kept


def respond(request: RecallRequest, verdict: str, layers: list[Layer], cards: list[Card],
            trace: Trace, note: str = "") -> RecallResponse:
    context = note or render(cards, request.format, zh=trace.zh)  # preamble in the query's language
    return RecallResponse(
        verdict=verdict, layers=layers, cards=cards, context=context,
        context_tokens=estimate_tokens(context), recalled_ids=[c.ref for c in cards],
        injected=False, trace=trace.lines,
    )

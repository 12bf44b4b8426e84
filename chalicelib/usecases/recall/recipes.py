"""Recall behaviour as named, declarative recipes (in the spirit of Graphiti's
search_config_recipes): every recall knob is a field here, not a flag in the code.

A recipe is chosen by name (ANNALS_RECIPE or the request's `recipe`); a few fields can be
overridden from the environment (ANNALS_MAX_CARDS, ANNALS_MIN_SCORE, …, see `resolve`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class RecallRecipe:
    name: str
    # ---- candidates
    keyword_k: int = 40  # candidates taken from the keyword (BM25) index; 0 disables it
    vector_k: int = 40  # candidates taken from the vector index; 0 disables it
    kinds: tuple[str, ...] = ("event", "message")
    max_query_terms: int = 64  # keyword terms kept from a long query (its first ones)
    # ---- query context (recall/query.py): the recent turns' embeddings join the query's
    # with these weights (the last reply, then the previous user message); a message with
    # fewer content terms than recent_keyword_min_terms also searches the recent user turn's
    # words; a message asking several things is searched per intent (at most max_intents,
    # each part with min_intent_terms content terms; a message over split_max_chars is a
    # pasted text, not questions: one intent, embedded once)
    recent_weights: tuple[float, ...] = (0.3, 0.15)
    recent_keyword_min_terms: int = 2
    anaphoric_weight: float = 1.0  # a message that names nothing: its recent user turn's
    # embedding joins with this weight (the message's own is 1.0), see recall/query.py
    anaphoric_max_terms: int = 3  # …or a message this short holding a word that points back
    split_intents: bool = True
    max_intents: int = 3
    min_intent_terms: int = 2
    split_max_chars: int = 400
    fusion: str = "rrf"  # "rrf" (reciprocal rank) or "score" (min-max normalised scores)
    rrf_k: int = 60  # reciprocal-rank-fusion constant
    keyword_weight: float = 1.0
    # …for a Chinese (CJK) query: its keywords are character bigrams, half of which straddle
    # a word boundary (我今年一共看了几次牙医 → 共看, 次牙), so BM25 over them is noisier than
    # over English words (Chinese bench R@5: 0.800 at 1.0, 0.816 at 0.5; LoCoMo, English,
    # is not touched by it: at 0.5 R@10 rose on 4 of 6 conversations but multi-hop fell on 4)
    keyword_weight_cjk: float = 0.5
    vector_weight: float = 1.0
    # ---- reranking the fused list: how deep to look, and how much a memory of the person
    # the query names is lifted (score × (1 + name_boost)); LoCoMo: when one speaker is
    # named, 96% of the evidence turns are that speaker's own.
    rerank_depth: int = 60
    name_boost: float = 0.0
    # A turn of the AI (a companion, a role-play character) reacts, comforts and asks: the
    # facts of the user's life come from the user (issue 36). Its message cards keep this
    # share of their score, unless the query names it (1.0: off). Events are unaffected,
    # and so is a chat of two people (LoCoMo: both speak as users).
    character_weight: float = 1.0
    # Search with the named people taken out of the query: their names match every one of
    # their messages and pull the meaning towards "a message by X" rather than the topic.
    strip_names: bool = False
    # A question asking for a list ("What books has Mel read?", "哪些", query.asks_for_list)
    # searches whole turns (messages) instead of events and messages, and when it names one
    # person only that person's own: list_pool hits per index (recall.search_list); 0: off.
    list_pool: int = 0
    # A hit that asks something passes this share of its score (above its list's lowest) to
    # the turn right after it, somebody else's (a list question: the named person's):
    # answers often hold none of the words their question was found by (recall/answers.py).
    # 0: off.
    answers: float = 0.0
    # …and the question itself keeps this share of its height above the list's lowest score
    # (1.0: all of it): a question that names the topic ("都去了哪些地方？") is rarely what
    # the query is after, its answer is.
    question_keeps: float = 1.0
    # A question asking for a lasting fact of a person ("我现在住在哪？"): the turns that told
    # the person's current value (a past one, asked about the past) join the candidates as a
    # list of their own with this weight (recall/profile.py); 0: off.
    facts_weight: float = 0.0
    # A question about now (query.asks_about_now: 现在, "still", "currently"): a card's score ×
    # (1 + now_recency × its place among the candidates' dates, 0 earliest to 1 latest); 0:
    # off. The default's 1.0 chosen among 0.3 / 0.6 / 1.0 / 1.5 on the companion chats and the
    # Chinese bench (bench/README.md, "Now is the latest telling").
    now_recency: float = 0.0
    # Show the event distilled from a message instead of the raw message when both rank.
    prefer_events: bool = False
    # Diversity (MMR over word overlap) and near-duplicate suppression among the cards.
    diversity: float = 0.0
    duplicate_overlap: float = 1.0  # ≥ this Jaccard overlap with a better card: dropped
    # ---- links (recall/graph.py): the first graph_seeds event candidates spread activation
    # through the entities, threads and relations they share (links with more than
    # graph_max_degree events are skipped: a speaker links everything); the graph_max_added
    # events reached most join the candidates as the list "graph", fused with graph_weight
    # (graph_fusion "list": in the recipe's fusion; "add": weight × activation / the best
    # one, added to the fused score). A space without link records falls back on
    # graph_fallback ("terms": the seeds' distinctive words searched among events; "none").
    # 0 seeds: off.
    graph_seeds: int = 0
    graph_max_added: int = 10
    graph_weight: float = 0.3
    graph_fusion: str = "list"
    graph_max_degree: int = 40
    graph_entity_weight: float = 1.0
    graph_thread_weight: float = 1.0
    graph_relation_weight: float = 1.0
    graph_fallback: str = "none"
    # The conversation around the seeds: the messages up to graph_turns turns before and
    # after each of the first graph_seeds candidates, activation × graph_turn_decay ** distance.
    graph_turns: int = 0
    graph_turn_decay: float = 0.5
    # An event card in a thread shows the thread's title and up to this many of its other
    # materials not shown as cards already (blocks format); 0: none.
    thread_materials: int = 3
    # ---- how many cards
    max_cards: int = 2  # cards per recall unless the request says otherwise (a hook's budget)
    # ---- admission gate (gate.py): a card is shown only when relevance = (cosine to the
    # query − the query's cosine to small talk) + term_weight × (share of the query's content
    # terms it holds) reaches the threshold, so a recall gets no card when nothing relevant
    # is stored. A recall of at most max_cards cards (a hook's) needs min_relevance; a wider
    # one (the bench's 20 cards, a lab's 10) needs only min_relevance_wide, a floor that
    # refuses what is plainly unrelated and leaves the ranking of the rest to the caller.
    # min_relevance 0 switches the gate off at every size; a request's `min_relevance`
    # replaces both. Calibrated for multilingual-e5-small on LoCoMo (bench/README.md,
    # "Admission gate").
    min_relevance: float = 0.06
    min_relevance_wide: float = 0.025
    term_weight: float = 0.08
    # A hook-sized recall also weighs the share of the query's content terms the space holds
    # nowhere (gate.Gate.space_holds): relevance − space_weight × (1 − that share). With it
    # the threshold above fell from 0.09 to 0.06 (LoCoMo, six conversations, leave-two-out:
    # bench/README.md, "The gate's space term"); 0: off.
    space_weight: float = 0.1
    # …which reads words only (a Chinese query's bigrams straddle word boundaries): a Chinese
    # query's hook-sized recall keeps the threshold calibrated without it (Chinese bench, each
    # question also asked of another space: at 0.09 own hit@2 0.649, foreign abstention 0.723;
    # at 0.06 0.791 / 0.466).
    min_relevance_cjk: float = 0.09
    # …and reads a Chinese card's coverage by characters, not bigrams (gate.unit_share): the
    # bigrams of "我现在养了几只猫" straddle words and "我养的黑猫" held none of them. A Chinese
    # card judged so needs min_relevance_cjk + units_margin; negative: bigrams, as before.
    # Chinese bench (hook hit@2 0.670 → 0.770; its questions asked of another space: no card
    # 0.702 → 0.681) and the companion chats (39 → 43 of 84, never-said abstention unchanged):
    # bench/README.md, "The gate reads characters".
    units_margin: float = 0.01
    # A card in another language than the query whose script none of the query's terms are
    # in counts this coverage (gate.py): what a matching card in the query's language holds.
    cross_coverage: float = 0.0
    # ---- time: understand a time named in the query (layered time-window recall, seed 003).
    # Off for the plain baselines, which rank everything by text alone.
    time_layers: bool = True
    expand_factor: float = 3.0  # each layer is this many times longer, same centre
    max_expansions: int = 2  # 1 day → 3 → 9, then "forgot"
    time_max_results: int = 3  # cards a time recall returns unless the request says otherwise
    # A wide recall (more cards than max_cards: a lab's, the bench's) whose named time holds
    # fewer hits than it asked for fills the rest by meaning and keywords, after the time's
    # hits: a told memory is dated when it was told ("这次杭州三天…" after the holiday), so
    # the window may miss it. A hook-sized recall never fills: only the time's hits.
    time_fill: bool = True
    # The time's hits reranked as a plain recall's are (recall/rerank.py: the person asked
    # about lifted — the user for "我"/"I" —, events in place of the messages they retell).
    time_rerank: bool = True
    # A candidate in a time layer is a hit when it shares keyword points with the query (a
    # CJK bigram or a word = 2 points) ...
    min_score: float = 2.0
    # ... or its cosine similarity is at least this much. e5-small puts unrelated Chinese chat
    # lines at 0.83-0.85 and a paraphrase at ~0.90, so only a near-paraphrase passes on meaning.
    time_min_similarity: float = 0.88
    # A memory in another language than the query needs this share of the lift above small
    # talk (in its language) that a memory in the query's own needs: e5 squeezes meaning
    # across languages into a narrower band than within one. Read by the time path (the floor
    # above) and by a wide recall's gate (a foreign card's lift counts as lift / cross_lift;
    # a hook-sized recall's gate keeps lifts as they are: its precision across languages is
    # poor already). Cross-lingual bench (bench/README.md): the time path tuned on en→zh
    # (time R@10 0.31 → 0.85) and checked on zh→en (0.62 → 0.77); the wide gate tuned on
    # zh→en (R@10 0.80 → 0.95), en→zh unchanged (0.74).
    cross_lift: float = 0.3
    # Search memories told in the other language with the query's vector moved across too
    # (recall/languages.py; a multilingual embedder only): one more vector search per list.
    across_languages: bool = False
    # ... and by keyword with the question's words as the other language's (the glossary's;
    # recall/languages.in_other_words), that list weighted this share of the keyword list's:
    # Chinese questions about English LoCoMo conversations (46, /tmp translations) hook hit@2
    # 0.435 → 0.522 at 0.5, 0.478 at 1 (a dictionary's synonyms are noisy); 0.565 with the
    # gate reading the same words (bench/README.md, "Recall across languages by the words")
    across_keyword_share: float = 0.5
    # ---- cooldown (seed 004): a card a window injected stays out of that window for this
    # many recalls or minutes, whichever ends first, and is not backfilled.
    cooldown_recalls: int = 3
    cooldown_minutes: float = 30.0
    # ---- freshness: time a recall may spend indexing its space's newest messages by keyword
    # before searching; never more, however long the backlog (the trace reports the rest).
    freshness_budget_ms: float = 50.0


# The default: keyword + dense fused by normalised score, the named person's memories lifted
# and their name kept out of the search, events shown in place of the messages they retell,
# and the best five candidates' links followed (entities, threads, relations, and the two
# turns around each: bench/README.md, "Recall through the links"); a question asking for a
# list answered from whole turns, the named person's own (bench/README.md, "List questions");
# the answer to a question hit lifted with it (bench/README.md, "Answers inherit").
HYBRID = RecallRecipe(name="hybrid", fusion="score", name_boost=1.0, strip_names=True,
                      prefer_events=True, graph_seeds=5, graph_turns=2, list_pool=40,
                      answers=0.3, facts_weight=0.5, across_languages=True,
                      character_weight=0.5, now_recency=1.0)
# The default without following links: the bench measures the graph step against it.
HYBRID_NO_GRAPH = replace(HYBRID, name="hybrid_no_graph", graph_seeds=0)
HYBRID_RRF = RecallRecipe(name="hybrid_rrf")
# The default with each message searched whole, and recent turns unread: the bench measures
# the query-context steps against it.
HYBRID_PLAIN_QUERY = replace(HYBRID, name="hybrid_plain_query", split_intents=False,
                             recent_weights=(), recent_keyword_min_terms=0,
                             anaphoric_weight=0.0, anaphoric_max_terms=-1)
# The plain baselines rank by text alone: no time layers, no admission gate.
BM25_ONLY = RecallRecipe(name="bm25", vector_k=0, time_layers=False, min_relevance=0.0,
                         min_relevance_wide=0.0)
DENSE_ONLY = RecallRecipe(name="dense", keyword_k=0, time_layers=False, min_relevance=0.0,
                          min_relevance_wide=0.0)

RECIPES: dict[str, RecallRecipe] = {
    r.name: r for r in (HYBRID, HYBRID_RRF, HYBRID_PLAIN_QUERY, HYBRID_NO_GRAPH, BM25_ONLY,
                        DENSE_ONLY)}

# Settings fields (ANNALS_<NAME>) that override the recipe field of the same name when set.
OVERRIDABLE = ("max_cards", "min_score", "min_relevance", "min_relevance_cjk",
               "min_relevance_wide", "expand_factor",
               "max_expansions", "time_max_results", "cooldown_recalls", "cooldown_minutes",
               "freshness_budget_ms")


def get_recipe(name: str) -> RecallRecipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise KeyError(f"unknown recipe {name!r}; known: {', '.join(sorted(RECIPES))}") from None


def resolve(name: str, settings: Any) -> RecallRecipe:
    """The named recipe with the overrides the settings give (None = keep the recipe's)."""
    recipe = get_recipe(name)
    known = {f.name for f in fields(RecallRecipe)}
    changes = {k: getattr(settings, k) for k in OVERRIDABLE
               if k in known and getattr(settings, k, None) is not None}
    return replace(recipe, **changes) if changes else recipe

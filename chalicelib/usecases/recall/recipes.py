"""Recall behaviour as named, declarative recipes (in the spirit of Graphiti's
search_config_recipes): every retrieval choice is a field here, not a flag in the code."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecallRecipe:
    name: str
    keyword_k: int = 40  # candidates taken from the keyword (BM25) index; 0 disables it
    vector_k: int = 40  # candidates taken from the vector index; 0 disables it
    kinds: tuple[str, ...] = ("event", "message")
    fusion: str = "rrf"  # "rrf" (reciprocal rank) or "score" (min-max normalised scores)
    rrf_k: int = 60  # reciprocal-rank-fusion constant
    keyword_weight: float = 1.0
    vector_weight: float = 1.0
    # A time layer counts a candidate as a hit when it shares query keywords or its cosine
    # similarity is at least this much. e5-small puts unrelated Chinese chat lines at
    # 0.83-0.85 and a paraphrase at ~0.90, so only a near-paraphrase passes on meaning alone.
    time_min_similarity: float = 0.88
    # Reranking the fused list: how deep to look, and how much a memory of the person the
    # query names is lifted (score × (1 + name_boost)); LoCoMo: when one speaker is named,
    # 96% of the evidence turns are that speaker's own.
    rerank_depth: int = 60
    name_boost: float = 0.0
    # Search with the named people taken out of the query: their names match every one of
    # their messages and pull the meaning towards "a message by X" rather than the topic.
    strip_names: bool = False
    # Show the event distilled from a message instead of the raw message when both rank.
    prefer_events: bool = False
    # Diversity (MMR over word overlap) and near-duplicate suppression among the cards.
    diversity: float = 0.0
    duplicate_overlap: float = 1.0  # ≥ this Jaccard overlap with a better card: dropped
    # Understand times named in the query (layered time-window recall). Off for the plain
    # baselines, which rank everything by text alone.
    time_layers: bool = True


# The default: keyword + dense fused by normalised score, the named person's memories lifted
# and their name kept out of the search, events shown in place of the messages they retell.
HYBRID = RecallRecipe(name="hybrid", fusion="score", name_boost=1.0, strip_names=True,
                      prefer_events=True)
HYBRID_RRF = RecallRecipe(name="hybrid_rrf")
BM25_ONLY = RecallRecipe(name="bm25", vector_k=0, time_layers=False)
DENSE_ONLY = RecallRecipe(name="dense", keyword_k=0, time_layers=False)

RECIPES: dict[str, RecallRecipe] = {
    r.name: r for r in (HYBRID, HYBRID_RRF, BM25_ONLY, DENSE_ONLY)}


def get_recipe(name: str) -> RecallRecipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise KeyError(f"unknown recipe {name!r}; known: {', '.join(sorted(RECIPES))}") from None

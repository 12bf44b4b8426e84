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
    rrf_k: int = 60  # reciprocal-rank-fusion constant
    keyword_weight: float = 1.0
    vector_weight: float = 1.0
    # A time layer counts a candidate as a hit when it shares query keywords or its cosine
    # similarity is at least this much. e5-small puts unrelated Chinese chat lines at
    # 0.83-0.85 and a paraphrase at ~0.90, so only a near-paraphrase passes on meaning alone.
    time_min_similarity: float = 0.88


HYBRID_RRF = RecallRecipe(name="hybrid_rrf")
BM25_ONLY = RecallRecipe(name="bm25", vector_k=0)
DENSE_ONLY = RecallRecipe(name="dense", keyword_k=0)

RECIPES: dict[str, RecallRecipe] = {r.name: r for r in (HYBRID_RRF, BM25_ONLY, DENSE_ONLY)}


def get_recipe(name: str) -> RecallRecipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise KeyError(f"unknown recipe {name!r}; known: {', '.join(sorted(RECIPES))}") from None

"""Recall use-case: a query → a few cards, the text to inject, and a trace of why.

Pipeline (each step a small function, every knob in a RecallRecipe):
  candidates (keyword + vector over events and messages, inside a time window if one is named)
  → reciprocal-rank fusion → cards loaded from the store (the truth) → limit → context text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import BadRequest
from ..models import Card, RecallRequest, RecallResponse
from ..ports import SearchFilter
from ..services import Services
from ..textproc import is_cjk
from .cards import load_card
from .context import estimate_tokens, render
from .fusion import Candidate, reciprocal_rank_fusion
from .recipes import RecallRecipe, get_recipe


@dataclass
class Trace:
    """Recall steps in the language of the query."""

    zh: bool
    lines: list[str]

    def add(self, zh: str, en: str) -> None:
        self.lines.append(zh if self.zh else en)


def search_candidates(services: Services, space: str, query: str, qvec: np.ndarray,
                      recipe: RecallRecipe, flt: SearchFilter) -> list[Candidate]:
    ranked = {}
    flt = SearchFilter(kinds=recipe.kinds, statuses=flt.statuses, start=flt.start,
                       end=flt.end, exclude_ids=flt.exclude_ids)
    if recipe.keyword_k:
        ranked["keyword"] = (services.keywords.keyword_search(space, query, recipe.keyword_k, flt),
                             recipe.keyword_weight)
    if recipe.vector_k:
        ranked["vector"] = (services.vectors.vector_search(space, qvec, recipe.vector_k, flt),
                            recipe.vector_weight)
    return reciprocal_rank_fusion(ranked, k=recipe.rrf_k)


def evidence_keys(card: Card) -> set[tuple[str, int]]:
    return {(s.session, q) for s in card.sources for q in range(s.seq_start, s.seq_end + 1)}


def to_cards(services: Services, space: str, candidates: list[Candidate], limit: int) -> list[Card]:
    """Load cards best first. A card whose evidence is already wholly shown by a better card
    (a message and the event retelling it) adds nothing and is skipped."""
    cards: list[Card] = []
    shown: set[tuple[str, int]] = set()
    for cand in candidates:
        if len(cards) >= limit:
            break
        card = load_card(services.store, space, cand)
        if card is None:
            continue
        keys = evidence_keys(card)
        if keys and keys <= shown:
            continue
        cards.append(card)
        shown |= keys
    return cards


def recall(services: Services, space: str, request: RecallRequest) -> RecallResponse:
    try:
        recipe = get_recipe(request.recipe or services.settings.recipe)
    except KeyError as exc:
        raise BadRequest(str(exc.args[0]), code="unknown_recipe") from None
    limit = request.card_limit or services.settings.max_cards
    trace = Trace(zh=is_cjk(request.query), lines=[])
    trace.add(f"[记忆检索] 线索：{request.query}", f"[recall] query: {request.query}")
    qvec = services.embedder.embed_query(request.query)
    candidates = search_candidates(services, space, request.query, qvec, recipe, SearchFilter())
    cards = to_cards(services, space, candidates, limit)
    trace.add(f"[记忆检索] 候选 {len(candidates)} 条 · 选出 {len(cards)} 条（{recipe.name}）",
              f"[recall] {len(candidates)} candidates · {len(cards)} chosen ({recipe.name})")
    context = render(cards, request.format)
    return RecallResponse(
        verdict="none", layers=[], cards=cards, context=context,
        context_tokens=estimate_tokens(context), recalled_ids=[c.ref for c in cards],
        injected=False, trace=trace.lines,
    )

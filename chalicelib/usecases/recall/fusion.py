"""Rank fusion: several ranked hit lists → one list of candidates with their score parts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from chalicelib.ports import Hit

Ranked = dict[str, tuple[Sequence[Hit], float]]  # list name → (hits best first, weight)
Contribution = Callable[[int, Hit], float]  # (rank, hit) → what the hit adds, before weight


@dataclass
class Candidate:
    ref: str
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)


def fuse(ranked: Ranked, contribution: Callable[[str, Sequence[Hit]], Contribution],
         total: str) -> list[Candidate]:
    """Sum weight × contribution over the lists; each candidate keeps its raw score and rank
    per list and the fused total under `total`."""
    by_ref: dict[str, Candidate] = {}
    for name, (hits, weight) in ranked.items():
        add = contribution(name, hits)
        for rank, hit in enumerate(hits, start=1):
            cand = by_ref.setdefault(hit.id, Candidate(hit.id))
            cand.score += weight * add(rank, hit)
            cand.parts[name] = round(hit.score, 6)
            cand.parts[f"{name}_rank"] = rank
    fused = sorted(by_ref.values(), key=lambda c: (-c.score, c.ref))
    for cand in fused:
        cand.parts[total] = round(cand.score, 6)
    return fused


def reciprocal_rank_fusion(ranked: Ranked, k: int = 60) -> list[Candidate]:
    """score = Σ weight / (k + rank)."""
    return fuse(ranked, lambda name, hits: lambda rank, hit: 1 / (k + rank), "rrf")


def score_fusion(ranked: Ranked, floors: Mapping[str, float] | None = None) -> list[Candidate]:
    """Fuse by normalised scores: each list's scores min-max scaled to [0, 1] and summed with
    its weight. Keeps how *much* better a hit is, which rank fusion throws away.

    A list's floor (what scales to 0) is its lowest hit: a list cut at k hits says the
    documents it lacks score no more than that. `floors` may name a lower one for a list that
    was not cut there — the best score a document it lacks can have (0 for a keyword list that
    ran out of matches) — so its last hit still counts for something."""
    floors = floors or {}

    def min_max(name: str, hits: Sequence[Hit]) -> Contribution:
        top = max((h.score for h in hits), default=0.0)
        low = min((h.score for h in hits), default=0.0)
        low = min(low, floors.get(name, low))
        span = top - low
        # All hits equal (one hit, say) means every one of them is this list's best.
        return lambda rank, hit: (hit.score - low) / span if span else 1.0

    return fuse(ranked, min_max, "fused")

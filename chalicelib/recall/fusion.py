"""Rank fusion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..ports import Hit


@dataclass
class Candidate:
    ref: str
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)


def reciprocal_rank_fusion(ranked: dict[str, tuple[Sequence[Hit], float]],
                           k: int = 60) -> list[Candidate]:
    """Fuse ranked lists: score = Σ weight / (k + rank). `ranked` maps a list's name to its
    hits (best first) and weight; each candidate keeps its raw score and rank per list."""
    by_ref: dict[str, Candidate] = {}
    for name, (hits, weight) in ranked.items():
        for rank, hit in enumerate(hits, start=1):
            cand = by_ref.setdefault(hit.id, Candidate(hit.id))
            cand.score += weight / (k + rank)
            cand.parts[name] = round(hit.score, 6)
            cand.parts[f"{name}_rank"] = rank
    fused = sorted(by_ref.values(), key=lambda c: (-c.score, c.ref))
    for cand in fused:
        cand.parts["rrf"] = round(cand.score, 6)
    return fused


def score_fusion(ranked: dict[str, tuple[Sequence[Hit], float]]) -> list[Candidate]:
    """Fuse by normalised scores: each list's scores min-max scaled to [0, 1] and summed with
    its weight. Keeps how *much* better a hit is, which rank fusion throws away."""
    by_ref: dict[str, Candidate] = {}
    for name, (hits, weight) in ranked.items():
        if not hits:
            continue
        top, low = max(h.score for h in hits), min(h.score for h in hits)
        span = top - low
        for rank, hit in enumerate(hits, start=1):
            cand = by_ref.setdefault(hit.id, Candidate(hit.id))
            # All hits equal (one hit, say) means every one of them is this list's best.
            cand.score += weight * ((hit.score - low) / span if span else 1.0)
            cand.parts[name] = round(hit.score, 6)
            cand.parts[f"{name}_rank"] = rank
    fused = sorted(by_ref.values(), key=lambda c: (-c.score, c.ref))
    for cand in fused:
        cand.parts["fused"] = round(cand.score, 6)
    return fused

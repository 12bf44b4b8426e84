"""Cooldown (seed 004): a card a chat window really injected is not shown to that window
again for a while, and the gap it leaves is not backfilled with a weaker card.

A delivery stays cool while both hold: fewer than `cooldown_recalls` recalls have run in the
window since it, and less than `cooldown_minutes` have passed — whichever ends first frees it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from chalicelib.ports import Services
from chalicelib.usecases.recall.recipes import RecallRecipe


def cooled_refs(services: Services, space: str, window: str | None, now: datetime,
                recipe: RecallRecipe) -> set[str]:
    """Count this recall in the window and return the refs still cooling down there."""
    if not window:
        return set()
    count = services.store.bump_recall_count(space, window)
    since = now - timedelta(minutes=recipe.cooldown_minutes)
    return {
        d.ref
        for d in services.store.recent_deliveries(space, window, since)
        if count - d.recall_count <= recipe.cooldown_recalls and d.delivered_at <= now
    }

"""Cooldown (seed 004): a card a chat window really injected is not shown to that window
again for a while, and the gap it leaves is not backfilled with a weaker card.

A delivery stays cool while both hold: fewer than `cooldown_recalls` recalls have run in the
window since it, and less than `cooldown_minutes` have passed — whichever ends first frees it.

Reads do not write: only a caller that may write the space (the one whose deliveries start
a cooldown) counts its recall in the window. A read-only caller's recall sees the cooldown
as the window's next counted recall would, and counts nothing, so a read key can neither
change stored state nor end another client's cooldown early (docs/keys.md).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from chalicelib.ports import Services
from chalicelib.usecases.recall.recipes import RecallRecipe


def cooled_refs(services: Services, space: str, window: str | None, now: datetime,
                recipe: RecallRecipe, *, counted: bool = True) -> set[str]:
    """The refs still cooling down in the window, this recall included: `counted`, it is
    counted there (one write); else it is looked at as the next counted recall (no write)."""
    if not window:
        return set()
    if counted:
        count = services.store.bump_recall_count(space, window)
    else:
        count = services.store.recall_count(space, window) + 1
    since = now - timedelta(minutes=recipe.cooldown_minutes)
    return {
        d.ref
        for d in services.store.recent_deliveries(space, window, since)
        if count - d.recall_count <= recipe.cooldown_recalls and d.delivered_at <= now
    }

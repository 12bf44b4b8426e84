"""Injection formats: the text a chat host pastes into the next model call."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chalicelib.domain.models import Card

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def one_line(text: str) -> str:
    """Multi-line text folded onto one line, so a ├─ or - line never spills over."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def estimate_tokens(text: str) -> int:
    """Rough BPE estimate: a CJK character is about one token, other text about four chars."""
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


def typed_blocks(cards: Sequence[Card]) -> str:
    """Seed 004's typed memory blocks: type, id, title, date and text, one block per card."""
    blocks = []
    for card in cards:
        lines = [f"[typed_memory ref={card.ref}]", f"title: {card.title}"]
        if card.when is not None:
            lines.append(f"date: {card.when.label}")
        lines.append("text: |")
        lines.extend(f"  {line}" for line in card.text.splitlines() or [""])
        lines.append("[/typed_memory]")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def timeline(cards: Sequence[Card], highlight_threshold: int = 7) -> str:
    """Seed 000's memory timeline: cards in time order, grouped by month, with ├─ lines.
    Key events (importance ≥ threshold) are starred."""
    # Undated cards go last; the timestamp keeps the key comparable across both kinds.
    dated = sorted(cards, key=lambda c: (c.when is None,
                                         c.when.start.timestamp() if c.when else 0.0, c.ref))
    lines: list[str] = []
    month = None
    for card in dated:
        label = card.when.start.strftime("%Y-%m") if card.when else "undated"
        if label != month:
            month = label
            lines.append(label)
        star = "★ " if (card.importance or 0) >= highlight_threshold else ""
        day = f"{card.when.label} " if card.when else ""
        lines.append(f"├─ {star}{day}{one_line(card.text)}")
    return "\n".join(lines)


def compact(cards: Sequence[Card]) -> str:
    return "\n".join(
        f"- [{card.when.label if card.when else '?'}] {one_line(card.text)}" for card in cards
    )


FORMATS = {"blocks": typed_blocks, "timeline": timeline, "compact": compact}


def render(cards: Sequence[Card], fmt: str = "blocks", highlight_threshold: int = 7) -> str:
    if fmt == "timeline":
        return timeline(cards, highlight_threshold)
    return FORMATS[fmt](cards)

"""Cleaning message text before it becomes a memory, an index entry or a query.

Chat hosts and reasoning models put machinery into messages: the model's reasoning
(`<think>…</think>`), role-play status panels and variable updates (SillyTavern's
`<UpdateVariable>` blocks, `<StatusBlock>`, `<choice>` menus), HTML comments. None of it is
something the user said or the story holds, and it would be extracted as facts and matched by
searches. `clean` removes it; the raw message stays stored unchanged as evidence.

The patterns are regular expressions, configurable (ANNALS_CLEAN_PATTERNS, a JSON list, added
to the defaults unless ANNALS_CLEAN_DEFAULTS=off). A block opened and never closed (a reply cut
off while still reasoning) is removed to the end of the text.

>>> clean("<think>the user wants a cat</think>好的，我们领养奶糖吧")
'好的，我们领养奶糖吧'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

# Tags whose whole content is machinery, not conversation.
BLOCK_TAGS = ("think", "thinking", "thought", "analysis", "reasoning", "reflection",
              "scratchpad", "choice", "choices", "options", "status", "statusblock",
              "status_block", "state", "updatevariable", "update_variable", "variables",
              "mvu", "inner_monologue", "system_note")


def _block(tag: str) -> str:
    # <tag …>…</tag>, any case; an unclosed one runs to the end of the text.
    return rf"<{tag}\b[^>]*>[\s\S]*?(?:</{tag}\s*>|\Z)"


DEFAULT_PATTERNS: tuple[str, ...] = (
    *(f"(?i){_block(tag)}" for tag in BLOCK_TAGS),
    r"<!--[\s\S]*?(?:-->|\Z)",  # HTML comments
    r"(?i)^\s*_\.set\(.*\)\s*;?\s*$",  # MVU variable-update lines outside a block
)


# Every default pattern needs one of these in the text to match (a tag or comment opens with
# "<", an MVU line holds "_."): a message without them — most chat — skips their 23 passes.
DEFAULT_NEEDS = ("<", "_.")
_BLANK_RUN = re.compile(r"\n\s*\n\s*\n+")


@lru_cache(maxsize=32)
def cleaner_for(patterns: tuple[str, ...]) -> Callable[[str], str]:
    """clean() for these patterns, compiled once, with whether the default patterns lead them
    (and may be skipped by DEFAULT_NEEDS) decided once, not per message."""
    compiled = tuple(re.compile(p, re.MULTILINE) for p in patterns)
    lead = len(DEFAULT_PATTERNS) if patterns[:len(DEFAULT_PATTERNS)] == DEFAULT_PATTERNS else 0
    rest = compiled[lead:]

    def run(text: str) -> str:
        needed = not lead or any(need in text for need in DEFAULT_NEEDS)
        for pattern in compiled if needed else rest:
            text = pattern.sub("", text)
        if text.count("\n") >= 3:  # the fold needs three line breaks to match at all
            text = _BLANK_RUN.sub("\n\n", text)
        return text.strip()

    return run


def clean(text: str, patterns: Iterable[str] = DEFAULT_PATTERNS) -> str:
    """The text without what the patterns match; blank lines left behind are folded."""
    return cleaner_for(tuple(patterns))(text)


def cleaner(extra: Iterable[str] = (), defaults: bool = True) -> Callable[[str], str]:
    """A clean() with the configured patterns (a bad pattern fails here, at start-up, not on
    a message)."""
    return cleaner_for((*(DEFAULT_PATTERNS if defaults else ()), *extra))

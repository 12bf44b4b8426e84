"""A rule is a regex plus a handler that turns its match into an Atom. The regex is compiled
the first time a text could match it (`Rule.pattern`): the ~90 rules take ~0.07 s to compile,
and most texts — a recall's query, a message that names no time — need a few of them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from chalicelib.domain.timeparse.atoms import Atom
from chalicelib.domain.timeparse.span import Ctx

Handler = Callable[[Ctx, re.Match[str]], Atom | None]
DIGIT = "#"  # token present in a text that has a digit


@dataclass(frozen=True)
class Rule:
    name: str
    source: str  # the regex
    flags: int
    handler: Handler
    # The rule can only match a text holding one of these tokens (Chinese characters,
    # lower-case English words, or DIGIT); None = always try. Skipping rules this way keeps
    # a sentence that names no time well under a millisecond.
    needs: frozenset[str] | None

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use, then kept (a process that never meets a time word never
        compiles the rule)."""
        return re.compile(self.source, self.flags)


class RuleSet:
    """Collects rules in definition order; earlier rules win ties of equal length."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []

    def add(self, pattern: str, flags: int = 0, needs: str | None = None
            ) -> Callable[[Handler], Handler]:
        """needs: space-separated words, or (no spaces) a string of Chinese characters."""
        tokens = None if needs is None else frozenset(
            needs.split() if " " in needs or needs.isascii() else needs)

        def register(handler: Handler) -> Handler:
            self.rules.append(Rule(handler.__name__, pattern, flags, handler, tokens))
            return handler

        return register

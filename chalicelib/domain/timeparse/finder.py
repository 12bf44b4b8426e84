"""Run the rules over a text, keep the best non-overlapping matches, merge neighbours."""

from __future__ import annotations

import re
from dataclasses import replace

from chalicelib.domain.timeparse import en, en_dates, numeric, zh
from chalicelib.domain.timeparse.atoms import Atom
from chalicelib.domain.timeparse.combine import combine
from chalicelib.domain.timeparse.rules import DIGIT, Rule
from chalicelib.domain.timeparse.span import Ctx

ZH_RULES: list[Rule] = zh.RULES.rules
EN_RULES: list[Rule] = en_dates.RULES.rules + en.RULES.rules
NUMERIC_RULES: list[Rule] = numeric.RULES.rules

HAS_CJK = re.compile(r"[\u4e00-\u9fff]")
HAS_DIGIT = re.compile(r"\d")
WORDS = re.compile(r"[a-z]+")


def tokens_of(text: str) -> set[str]:
    """What the rules' `needs` are checked against: characters, English words (also without
    a plural s) and DIGIT."""
    tokens = set(text)
    for word in WORDS.findall(text.lower()):
        tokens.add(word)
        if word.endswith("s"):
            tokens.add(word[:-1])
    if HAS_DIGIT.search(text):
        tokens.add(DIGIT)
    return tokens


def rules_for(text: str) -> list[Rule]:
    """Only the rules that can match: most messages skip most rules."""
    tokens = tokens_of(text)
    rules = NUMERIC_RULES + (ZH_RULES if HAS_CJK.search(text) else []) + EN_RULES
    return [r for r in rules if r.needs is None or not r.needs.isdisjoint(tokens)]


def candidates(ctx: Ctx) -> list[tuple[int, int, Atom]]:
    found: list[tuple[int, int, Atom]] = []
    for order, rule in enumerate(rules_for(ctx.text)):
        for m in rule.pattern.finditer(ctx.text):
            try:
                atom = rule.handler(ctx, m)
            except (OverflowError, ValueError):  # "year 9999 + 3 days": no such date, no time
                atom = None
            if atom is not None:
                found.append((m.end() - m.start(), order, replace(atom, start=m.start(),
                                                                  end=m.end())))
    return found


def select(found: list[tuple[int, int, Atom]]) -> list[Atom]:
    """Longest match first (earlier rule on ties); drop whatever overlaps a kept one."""
    kept: list[Atom] = []
    for _, _, atom in sorted(found, key=lambda c: (-c[0], c[2].start, c[1])):
        if all(atom.end <= k.start or atom.start >= k.end for k in kept):
            kept.append(atom)
    return sorted(kept, key=lambda a: a.start)


def find_atoms(ctx: Ctx) -> list[Atom]:
    try:
        return combine(ctx, select(candidates(ctx)))
    except (OverflowError, ValueError):  # combining out-of-range neighbours: drop them
        return select(candidates(ctx))

"""Whether a role outlived its job, read over all of a person's facts (issue 36, "Now is
now"): the core layer leaves such a role out (usecases.facts.core_block) and recall answers a
question about the past with it (usecases.recall.profile.facts_answering).
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.domain.records import Fact


def outlived(fact: Fact, known: Sequence[Fact]) -> bool:
    """A role told while a workplace held that has since ended ("在皓齿口腔当前台" … "辞职了";
    "the 6am open at the café" … left Fig & Fern), with no workplace known now: it may have
    ended with the job, so the core layer says nothing of it rather than something stale,
    until the role or a new workplace is told. With a new workplace known the role is said
    (a nurse who changes hospitals is still a nurse: the story sets hold six such). The
    profile keeps the role current either way; whether it went on only a later turn, or a
    model, can tell. Recall reads it as the job that was (recall.profile.facts_answering:
    "What was Nora's old job?" is the barista she was at Fig & Fern, whatever she is now)."""
    if fact.attribute != "works_as":
        return False
    if any(w.attribute == "works_as" and w.person == fact.person and w.closed_by in fact.sources
           for w in known):
        return False  # it replaced the role held there ("PAPERCRANE. junior illustrator!" after
        # "a barista there for almost three years"): a new job's, whatever ended after it
    told = fact.valid_from or fact.learned_at
    places = [w for w in known if w.person == fact.person and w.attribute == "works_at"]
    held = [w for w in places if (w.valid_from is None or w.valid_from <= told)
            and (w.valid_to is None or w.valid_to > told)]
    return bool(held) and all(w.valid_to is not None for w in places)

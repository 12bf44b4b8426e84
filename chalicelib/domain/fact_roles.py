"""Whether a role outlived its job, read over all of a person's facts (issue 36, "Now is
now"): the profile shows such a role as unconfirmed, not current (usecases.facts.profiles),
the core layer leaves it out (usecases.facts.core_block) and recall answers a question about
the past with it (usecases.recall.profile.facts_answering).
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.domain.records import Fact


def outlived(fact: Fact, known: Sequence[Fact]) -> bool:
    """A role told while a workplace held that has since ended ("在皓齿口腔当前台" … "辞职了";
    "the 6am open at the café" … left Fig & Fern), with no workplace known now (`ended_job`)."""
    return ended_job(fact, known) is not None


def ended_job(fact: Fact, known: Sequence[Fact]) -> Fact | None:
    """The ended workplace a role was told at, when no workplace is known now: the role may
    have ended with the job, so it is unconfirmed — the profile does not show it as current
    and the core layer says nothing of it rather than something stale — until the role or a
    new workplace is told. With a new workplace known the role holds (a nurse who changes
    hospitals is still a nurse: the story sets hold six such); whether it went on with no new
    workplace read, only a later turn, a model or the user can tell — a hand edit is the
    user's word (`history`). Recall reads it as the job that was (recall.profile.
    facts_answering: "What was Nora's old job?" is the barista she was at Fig & Fern)."""
    if fact.attribute != "works_as" or fact.valid_to is not None or fact.history:
        return None
    if any(w.attribute == "works_as" and w.person == fact.person and w.closed_by in fact.sources
           for w in known):
        return None  # it replaced the role held there ("PAPERCRANE. junior illustrator!" after
        # "a barista there for almost three years"): a new job's, whatever ended after it
    told = fact.valid_from or fact.learned_at
    places = [w for w in known if w.person == fact.person and w.attribute == "works_at"]
    held = [w for w in places if (w.valid_from is None or w.valid_from <= told)
            and (w.valid_to is None or w.valid_to > told)]
    if not held or any(w.valid_to is None for w in places):
        return None
    return max(held, key=lambda w: w.valid_to)

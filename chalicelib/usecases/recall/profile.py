"""A question asking for a lasting fact ("我现在住在哪？", "Where does Maya work now?",
domain.fact_questions) is answered from the person's facts too (usecases.facts): the turns
that told the current value — or, asked about the past, the values that ended — join the
candidates as a hit list of their own ("facts", weight recipe.facts_weight). The store's
facts already know that a later "搬到浦东张江" replaced "合租在徐汇"; meaning and keywords
alone rank every turn that says 住 alike (a hotel on a trip among them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from chalicelib.domain.fact_questions import asks_of_someone_else, attribute_asked, species_asked
from chalicelib.domain.fact_roles import outlived
from chalicelib.domain.pets import species
from chalicelib.domain.records import Fact, Plan
from chalicelib.ports import Hit, Services


@dataclass(frozen=True)
class Answer:
    """What the store knows of a fact a question asks: the turns that told it (the latest
    told first) and the values they told."""

    hits: list[Hit]
    values: list[str]


def facts_answering(services: Services, space: str, question: str, people: Iterable[str],
                    past: bool, attribute: str | None = None) -> list[Hit]:
    """The message refs of the facts the question asks for about `people` (current ones, or
    the closed ones for a question about the past), the latest told first. `attribute`: the
    one it asks for, when the caller has read it (`attribute_asked`)."""
    return answer(services, space, question, people, past, attribute).hits


def answer(services: Services, space: str, question: str, people: Iterable[str],
           past: bool, attribute: str | None = None) -> Answer:
    """`facts_answering`, with the values told."""
    people = set(people)
    if not people:
        return Answer([], [])
    attribute = attribute or attribute_asked(question)
    if attribute is None or asks_of_someone_else(question, attribute):
        return Answer([], [])  # "Nora 的哥哥住在哪里？" asks her brother's home, not hers
    known = services.store.list_records(Fact, space)
    # a role outlived by its job (domain.fact_roles) is the job that was, not one now
    facts = [f for f in known if f.person in people and f.attribute == attribute
             and (f.valid_to is not None or outlived(f, known)) == past]
    if attribute == "pet" and (asked := species_asked(question)):
        # "我的狗叫什么？" asks the dog's name: a cat is no answer, nor a pet of no known kind
        # (the model path's "Pepper" answered "What's my dog's name?" of a cat's owner)
        facts = [f for f in facts if species(f.kind) == asked]
    facts.sort(key=lambda f: f.learned_at, reverse=True)
    refs = dict.fromkeys(ref for f in facts for ref in reversed(f.sources))
    values = [f.value for f in facts]
    if attribute == "lives_in" and not past:
        # a move told ahead and not yet heard to come true (domain.fact_plans) says where
        # they live now or soon: "I'm moving to a studio in Capitol Hill on the 1st", asked
        # after the 1st, is all the memory holds
        plans = sorted((p for p in services.store.list_records(Plan, space) if p.person in people),
                       key=lambda p: p.said_at, reverse=True)
        refs.update(dict.fromkeys(p.source for p in plans))
        values += [p.place for p in plans]
    return Answer([Hit(ref, 1.0) for ref in refs], values)

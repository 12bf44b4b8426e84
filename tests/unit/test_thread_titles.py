"""Thread titles tell threads apart (issue 36: a Chinese chat's import gave three threads all
titled 杭州): where several threads would share a title, each is named by what distinguishes
it — its own named thing, else its first event's title — in the chat's words; a title given by
hand is never changed."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from chalicelib.domain.entities import normalise
from chalicelib.domain.models import Event, Source, When
from chalicelib.domain.records import Thread
from chalicelib.usecases import graph
from chalicelib.usecases.graph.models import CreateThreadRequest
from chalicelib.usecases.graph.threads import create_thread
from tests.unit.conftest import CST

SPACE = "sp"
T0 = datetime(2026, 3, 1, 20, tzinfo=CST)

# 小林's year, three arcs that all happen in 杭州: the offer, the move with the cat, Mika's visit.
HANGZHOU = [
    ("收到杭州的offer", "小林收到了杭州一家公司的offer，薪水更高"),
    ("接受杭州的offer", "小林决定接受offer，杭州那边下个月入职"),
    ("带团子搬家", "小林打算带着猫团子搬家，新家在杭州"),
    ("团子适应新家", "团子很快适应了杭州的新家，搬家很顺利"),
    ("约Mika国庆见面", "Mika说国庆要来杭州，两人约好一起逛西湖"),
    ("Mika来玩", "国庆Mika来了杭州三天，逛了西湖和灵隐寺"),
]
KYOTO = [
    ("Job offer in Kyoto", "Mel got a job offer from a games studio in Kyoto."),
    ("Accepted the offer", "Mel accepted the studio offer and starts in Kyoto in May."),
    ("Moving with the cat", "Mel is moving to Kyoto with her cat named Luna."),
    ("The move went well", "The move to Kyoto went well, the cat loves the new flat."),
    ("Sam plans a visit", "Sam will visit Kyoto in October."),
    ("Sam visited", "Sam came to Kyoto in October and we hiked up to the Fushimi Inari shrine."),
]


def events(story: list[tuple[str, str]], person: str) -> list[Event]:
    out = []
    for i, (title, summary) in enumerate(story):
        at = T0 + timedelta(days=7 * i)
        out.append(Event(id=f"ev{i}", space=SPACE, title=title, summary=summary,
                         when=When(start=at, end=at + timedelta(hours=1), granularity="day"),
                         participants=[person],
                         sources=[Source(session="import", seq_start=i, seq_end=i)],
                         created_at=T0 + timedelta(minutes=i), updated_at=T0))
    return out


def link(services, batch: list[Event]) -> None:
    for event in batch:
        services.store.create_event(event)
    graph.after_extraction(services, SPACE, "import", batch, T0 + timedelta(days=60))


def titles(services) -> dict[tuple[str, ...], str]:
    return {tuple(t.events): t.title for t in services.store.list_records(Thread, SPACE)}


def assert_distinct(found: dict) -> None:
    assert len({normalise(t) for t in found.values()}) == len(found), found


@pytest.mark.parametrize("story,person,expected", [
    (HANGZHOU, "小林", {("ev0", "ev1"): "收到杭州的offer", ("ev2", "ev3"): "带团子搬家",
                      ("ev4", "ev5"): "杭州 · 灵隐寺"}),
    (KYOTO, "Mel", {("ev0", "ev1"): "Job offer in Kyoto", ("ev2", "ev3"): "Kyoto · Luna",
                    ("ev4", "ev5"): "Kyoto · Fushimi Inari"}),
])
def test_threads_that_would_share_a_title_are_told_apart(services, story, person, expected):
    """One import, three arcs about one city: each thread by its own named thing (灵隐寺,
    Luna) or, with none, by its first event's title — never three threads called 杭州."""
    link(services, events(story, person))
    found = titles(services)
    assert found == expected
    assert_distinct(found)


def test_an_older_thread_is_renamed_when_a_new_one_would_take_its_title(services):
    """The offer's thread was 杭州 alone; when the move's thread would be 杭州 too, both are
    named by what tells them apart."""
    story = events(HANGZHOU, "小林")
    link(services, story[:2])
    assert titles(services) == {("ev0", "ev1"): "杭州"}
    link(services, story[2:])
    found = titles(services)
    assert found[("ev0", "ev1")] == "收到杭州的offer"
    assert len(found) == 3
    assert_distinct(found)
    version = {t.title: t.version for t in services.store.list_records(Thread, SPACE)}
    assert version["收到杭州的offer"] > 1  # a rename is an edit: an open PATCH sees 409


def test_a_title_given_by_hand_is_kept_and_not_taken(services):
    story = events(HANGZHOU, "小林")
    for event in story[:2]:
        services.store.create_event(event)
    create_thread(services, SPACE, CreateThreadRequest(title="杭州", events=["ev0", "ev1"]))
    link(services, story[2:])
    found = titles(services)
    assert found[("ev0", "ev1")] == "杭州"  # by hand: never renamed by the linker
    assert "杭州" not in {found[("ev2", "ev3")], found[("ev4", "ev5")]}
    assert_distinct(found)

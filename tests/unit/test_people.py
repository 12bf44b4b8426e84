"""People are people: a message without a speaker is stored with its role as speaker, and role
words and placeholders ("user", "User", "{{char}}", "用户" …) stay speakers of the evidence but
are never a Person record, a participant, a graph entity, or a name recall lifts."""

from __future__ import annotations

from datetime import timedelta

from chalicelib.domain.entities import normalise
from chalicelib.domain.models import RecallRequest
from chalicelib.domain.names import is_placeholder
from chalicelib.domain.records import Entity, Person
from chalicelib.ports import iter_events
from chalicelib.usecases.extract import extract_session
from chalicelib.usecases.people import known_people, remember_people
from chalicelib.usecases.recall import recall
from tests.unit.conftest import SPACE, T0

NAMELESS = [  # what an export without names, or a SillyTavern chat with placeholders, gives
    (0, "user", None, "I adopted a ginger cat named Biscuit from the shelter today."),
    (1, "assistant", None, "Lovely! Did the user tell Mel about Biscuit?"),
    (2, "user", "User", "We are planning a hiking trip to Kyoto with my brother Sam."),
    (3, "assistant", "{{char}}", "Kyoto is lovely; the Assistant hopes you visit the "
                                 "Fushimi Inari Shrine."),
    (4, "user", "用户", "我下个月要和哥哥去爬黄山。"),
    (5, "assistant", "<BOT>", "I read three books about Kyoto last month."),
]


def test_speakers_are_kept_as_given_but_placeholders_are_no_people(services, put):
    put("c1", NAMELESS)
    stored = services.store.get_messages(SPACE, "c1")
    assert [m.speaker for m in stored] == ["user", "assistant", "User", "{{char}}", "用户",
                                           "<BOT>"]  # the evidence stays as it was given
    assert services.store.list_records(Person, SPACE) == []
    assert known_people(services, SPACE) == set()


def test_people_named_beside_placeholders_are_remembered(services, put):
    put("c1", [(0, "user", "Mel", "I adopted a cat."), (1, "assistant", "AI", "Nice!")])
    assert {p.key for p in services.store.list_records(Person, SPACE)} == {"Mel"}


def test_records_kept_from_before_are_not_read_back_as_people(services):
    for name in ("user", "User", "assistant", "用户", "Mel"):
        services.store.put_record(Person(scope=SPACE, key=name))
    assert known_people(services, SPACE) == {"Mel"}
    remember_people(services, SPACE, ["Assistant", "{{user}}", "Sam"])
    assert {p.key for p in services.store.list_records(Person, SPACE)} == {
        "user", "User", "assistant", "用户", "Mel", "Sam"}  # nothing new but Sam


def test_no_placeholder_becomes_a_participant_or_an_entity(services, put):
    put("c1", NAMELESS)
    extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
    events = list(iter_events(services.store, SPACE, kinds=("event",)))
    assert events
    assert all(not is_placeholder(p) for e in events for p in e.participants)
    entities = services.store.list_records(Entity, SPACE)
    names = {normalise(n) for e in entities for n in (e.name, *e.aliases)}
    assert names  # the chat names places and a pet (Kyoto, Biscuit …): the graph ran
    assert not {n for n in names if is_placeholder(n)}
    assert all(e.kind != "person" for e in entities)  # nobody here has a name


def test_recall_does_not_read_user_as_a_person(services, put):
    put("c1", [(seq, role, None, text) for seq, role, _, text in NAMELESS])
    services.store.put_record(Person(scope=SPACE, key="user"))  # as an older version kept it
    extract_session(services, SPACE, "c1", T0 + timedelta(hours=1))
    out = recall(services, SPACE, RecallRequest(query="What books has the user read?",
                                                now=T0 + timedelta(days=1), min_relevance=0))
    listing = [line for line in out.trace if "asks for a list" in line]
    assert listing and "own only" not in listing[0]  # "the user" is no one to filter by

"""Entities found offline (chalicelib.domain.entities) and linked after extraction
(chalicelib.usecases.graph): the rules in English and Chinese, conservative aliases,
deterministic ids, every stored name verbatim in its events, and a hook that can run twice."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from chalicelib.domain.entities import entity_id, find_mentions, normalise, same_entity
from chalicelib.domain.links import replacement, sequence_marker
from chalicelib.domain.models import PutMessagesRequest
from chalicelib.domain.records import Entity, Relation, Thread
from chalicelib.ports import iter_events
from chalicelib.usecases import graph, ingest
from chalicelib.usecases.events import evidence
from chalicelib.usecases.extract import run_extraction
from tests.api.test_story_thread import STORIES
from tests.unit.conftest import CST


def mentions(text: str, **kw) -> set[tuple[str, str]]:
    return {(m.name, m.kind) for m in find_mentions(text, **kw)}


@pytest.mark.parametrize("text,people,expected", [
    ("Mel and Sam flew to Kyoto and stayed at the Park Hyatt Kyoto.", ["Mel", "Sam"],
     {("Mel", "person"), ("Sam", "person"), ("Park Hyatt Kyoto", "place"),
      ("Kyoto", "place")}),
    ("I adopted a cat named Luna and we watched “Spirited Away”.", [],
     {("Luna", "pet"), ("Spirited Away", "work")}),
    ("Caroline joined Project Phoenix at Acme Inc last week.", ["Caroline"],
     {("Caroline", "person"), ("Project Phoenix", "project"), ("Acme Inc", "organisation")}),
    ("小明和小红订了京都的大仓酒店", ["小明"],
     {("小明", "person"), ("大仓酒店", "place"), ("京都", "place")}),
    ("我今天领养了一只橘猫，取名叫奶糖，还读完了《挪威的森林》", [],
     {("奶糖", "pet"), ("挪威的森林", "work")}),
    ("我们打算国庆去杭州旅行，顺便看看西湖公园", [],
     {("杭州", "place"), ("西湖公园", "place")}),
    ("Yesterday We went hiking. Then I slept.", [], set()),  # capitals that are no names
])
def test_mentions(text, people, expected):
    found = mentions(text, people=people)
    assert found == expected
    assert all(name in text for name, _ in found)


@pytest.mark.parametrize("text", [
    "Hey Mel! Glad Caroline liked it.", "Now I'm painting again.", "Whenever Caroline hears it",
    "Caroline've come a long way", "Knowing Caroline, she will go.", "Last Fri was fun.",
    "It's Caroline's turn.", "Reminds Melanie of home.", "Do Melanie's kids like it?",
])
def test_words_that_open_a_chat_sentence_are_not_names(text):
    """Capitalised by grammar, not by being names (LoCoMo gave "Hey Mel", "Glad Caroline",
    "Now I'm" … as entities, and threads titled after them)."""
    found = mentions(text, people=["Caroline", "Melanie", "Mel"])
    assert {name for name, _ in found} <= {"Caroline", "Melanie", "Mel"}, found


@pytest.mark.parametrize("text,expected", [
    ("The User and the Assistant planned a trip to Kyoto; Someone booked it.",
     {("Kyoto", "place")}),
    ("用户和助手聊了去京都旅行的事", {("京都", "place")}),
    ("I met {{char}} and AI in Kyoto", {("Kyoto", "place")}),
    ("The User Guide explains it", {("User Guide", "thing")}),  # a name, not a person
])
def test_role_words_and_placeholders_are_never_entities(text, expected):
    speakers = ["user", "assistant", "User", "{{char}}", "用户", "助手", "AI"]
    assert mentions(text, people=speakers) == expected


def test_a_possessive_is_not_part_of_the_name():
    assert ("Ed Sheeran", "thing") in mentions("I love Ed Sheeran's songs")


@pytest.mark.parametrize("text,expected", [
    # a suffix's name read back into another word: 游戏公司 gave 戏公司
    ("我在上海一家游戏公司上班", {("上海", "place")}),
    ("游戏公司的offer下来了！！国庆后入职", set()),
    # a preposition, and a preposition before a modifier: 离公司, 离新公司
    ("在浦东租了个小单间 离公司两站地铁", set()),
    ("我搬到离新公司近的地方了", set()),
    # a quantity before a one-character suffix: 一点点山, 两座山
    ("周末只爬了一点点山，腿就酸了", set()),
    ("那天我们爬了两座山", set()),
    # a run longer than a name: no span cut out of its middle
    ("我住在北京王府井希尔顿酒店", {("北京", "place")}),
    # names still found, a numeral opening one among them
    ("我们去了九华山，又去了千岛湖", {("九华山", "place"), ("千岛湖", "place")}),
    ("今天去了腾讯公司面试", {("腾讯公司", "organisation")}),
])
def test_a_chinese_name_is_a_whole_word(text, expected):
    """Chinese has no spaces: a name before a suffix must be delimited on its own (two
    characters at least, no quantity in front, no longer run around it), never cut out of
    the middle of a word (issue 36: 戏公司, 离公司, 一点点山 from a real import)."""
    assert mentions(text) == expected


def test_a_known_name_is_found_again_where_no_rule_sees_it():
    known = find_mentions("We are planning a trip to Kyoto.")
    assert ("Kyoto", "place") in mentions("I booked a hotel for our Kyoto trip", known=known)
    assert not mentions("I booked a hotel for our Kyotoish trip", known=known)


@pytest.mark.parametrize("a,ak,b,bk,same", [
    ("Kyoto", "place", "kyoto", "thing", True),  # same name, any case: one entity
    ("Park Hyatt", "place", "Park Hyatt Kyoto", "place", True),  # words start the other's
    ("Mel", "person", "Melanie", "person", True),
    ("Mel", "person", "Melbourne", "place", False),  # kinds disagree
    ("Me", "person", "Melanie", "person", False),  # too short to stand for a name
    ("Kyoto", "place", "Kyoto University", "organisation", False),
    ("京都", "place", "京都大学", "place", False),  # Chinese: never by prefix
    ("Park", "place", "Parker Hotel", "place", False),  # a prefix of a word, not a person
    ("Sam", "thing", "Sam Smith", "thing", False),  # unsure kinds are never merged
])
def test_aliases_are_merged_conservatively(a, ak, b, bk, same):
    assert same_entity(a, ak, b, bk) is same
    assert same_entity(b, bk, a, ak) is same


def test_ids_are_deterministic_by_normalised_name():
    assert entity_id("Park  Hyatt") == entity_id("park hyatt") == entity_id("“Park Hyatt”")
    assert entity_id("京都").startswith("en_") and entity_id("京都") != entity_id("东京")
    assert normalise("  《挪威的森林》 ") == "挪威的森林"


@pytest.mark.parametrize("text,kind", [
    ("We missed the train, so we took a taxi", "causes"),
    ("因为下雨，我们取消了野餐", "causes"),
    ("After the concert we went for noodles", "follows"),
    ("吃完饭之后我们去散步了", "follows"),
    ("That was so much fun", None),
])
def test_sequence_markers(text, kind):
    found = sequence_marker(text)
    assert (found[0] if found else None) == kind


def tell(services, space: str) -> None:
    speaker, _, _, sessions = STORIES[space]
    for session, at, texts in sessions:
        start = datetime.fromisoformat(at).astimezone(CST)
        services.clock = lambda start=start: start + timedelta(hours=1)
        messages = [{"seq": i + 1, "role": "user", "speaker": speaker, "content": t,
                     "at": start + timedelta(minutes=i)} for i, t in enumerate(texts)]
        ingest.put_messages(services, space, session,
                            PutMessagesRequest.model_validate({"messages": messages}))
        run_extraction(services, space, session)


def state(services, space: str) -> dict:
    return {kind.KIND: [r.model_dump(mode="json") for r in services.store.list_records(
        kind, space)] for kind in (Entity, Thread, Relation)}


@pytest.mark.parametrize("space", sorted(STORIES))
def test_every_entity_name_and_alias_is_verbatim_in_its_events(services, space):
    tell(services, space)
    entities = services.store.list_records(Entity, space)
    assert len(entities) >= 3
    for entity in entities:
        events = services.store.load_events(space, entity.events)
        assert len(events) == len(entity.events) >= 1
        texts = [t for e in events for t in
                 (e.title, e.summary, *(m.content for m in evidence(services, e)))]
        for name in (entity.name, *entity.aliases):
            assert any(name in t for t in texts), (entity.key, name)


@pytest.mark.parametrize("space", sorted(STORIES))
def test_the_hook_is_idempotent(services, space):
    tell(services, space)
    before = state(services, space)
    events = [e for e in iter_events(services.store, space) if e.kind != "summary"]
    by_session: dict[str, list] = {}
    for event in events:
        by_session.setdefault(event.sources[0].session, []).append(event)
    for session, group in sorted(by_session.items()):
        graph.after_extraction(services, space, session, group, services.clock())
    assert state(services, space) == before


@pytest.mark.parametrize("space", sorted(STORIES))
def test_rebuild_links_events_stored_before_the_graph_existed(services, space):
    """An upgrade: events are there, their graph records are not. `annals graph rebuild`
    links them as extraction would have, and a second rebuild changes nothing."""
    tell(services, space)
    linked = state(services, space)
    for kind in (Entity, Thread, Relation):
        services.store.delete_records(kind, space, [r.key for r in
                                                    services.store.list_records(kind, space)])
    assert not any(state(services, space).values())
    totals = graph.rebuild(services, space, services.clock())
    assert totals["sessions"] >= 6 and totals["entities"] > 0
    rebuilt = state(services, space)
    assert {e["key"] for e in rebuilt["entity"]} == {e["key"] for e in linked["entity"]}
    assert len(rebuilt["thread"]) == len(linked["thread"]) >= 1
    graph.rebuild(services, space, services.clock())
    assert state(services, space) == rebuilt


def test_a_changed_fact_replaces_the_event_it_names(services):
    tell(services, "trip-en")
    events = sorted((e for e in iter_events(services.store, "trip-en")
                     if e.kind != "summary"), key=lambda e: e.created_at)
    change = next(e for e in events if "changed the hotel" in e.summary)
    found = replacement(change, [e for e in events if e.created_at < change.created_at])
    assert found is not None and "Hotel Okura" in found.old.summary
    assert "changed" not in found.old.summary
    later = next(e for e in events if "flew to Kyoto" in e.summary)
    assert replacement(later, events) is None  # no change words: nothing replaced

"""Names that open sentences (issue 22): in chat a sentence very often opens with a name, and
a word that opens a sentence is capitalised by grammar whether it is a name or not. It is a
name on evidence only — the subject of "and I" or of a verb, a speaker, or a word written
capitalised inside a sentence elsewhere — never an ordinary opener. In Chinese, a person is
the subject of 和我 / a verb, or the one after 我和; time and family words are nobody."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.domain.entities import capitalised_mid_sentence, find_mentions, opening_names
from chalicelib.domain.models import PutMessagesRequest
from chalicelib.domain.records import Entity
from chalicelib.usecases import ingest
from chalicelib.usecases.extract import run_extraction
from tests.unit.conftest import T0


def found(text: str, **kw) -> dict[str, str]:
    return {m.name: m.kind for m in find_mentions(text, **kw)}


@pytest.mark.parametrize("text,name", [
    ("Tom and I decided to plan a trip to Kyoto", "Tom"),
    ("Lisa said the museum was closed on Mondays.", "Lisa"),
    ("We got back late. Kenji booked the table for us.", "Kenji"),
    ("Priya & I went hiking.", "Priya"),
    ("Anyway. Marco finally texted me back!", "Marco"),
])
def test_the_subject_of_and_i_or_a_verb_is_a_person(text, name):
    assert found(text).get(name) == "person"


def test_a_speaker_opening_a_sentence_is_a_person():
    assert found("Ann booked it yesterday.", people=["Ann"]) == {"Ann": "person"}
    assert found("Ann: the trip is on.", people=["Ann Lee"]).get("Ann") == "person"


@pytest.mark.parametrize("text", [
    "Kenji is our guide. We met Kenji at the station.",  # capitalised mid-text after
    "We met Kenji at the station. Kenji is our guide.",  # and before
])
def test_a_word_capitalised_mid_text_is_a_name_where_it_opens_a_sentence(text):
    assert "Kenji" in found(text)
    assert capitalised_mid_sentence("We met Kenji at the station.") == {"Kenji"}


def test_what_other_texts_capitalise_mid_sentence_counts_too():
    """The linker passes the words capitalised in an event's other texts (and in the batch's
    other events): "Kenji is our guide" alone names nobody, beside "we met Kenji" it does."""
    assert not opening_names("Kenji is our guide.")
    assert [m.name for m in opening_names("Kenji is our guide.", seen={"Kenji"})] == ["Kenji"]


@pytest.mark.parametrize("text", [
    "The weather was great.", "Yesterday we walked along the river.", "Thanks for asking!",
    "Dinner was lovely.", "My sister came along.", "Everyone loved it.",
    "Mom said it would rain.", "Coffee made my day, I love coffee.", "Plans changed again.",
    "Summer came early this year.", "So we went home.", "Maybe next time.",
])
def test_ordinary_openers_are_not_names(text):
    assert found(text) == {}, text


def test_the_first_word_of_a_longer_name_is_left_to_the_name():
    assert found("Hotel Sakura said no.") == {"Hotel Sakura": "place"}


@pytest.mark.parametrize("text,name", [
    ("小明和我决定去京都", "小明"),
    ("我和小明一起去", "小明"),
    ("小红说明天下雨。", "小红"),
    ("上周末，王小明订了机票。", "王小明"),
])
def test_a_chinese_subject_is_a_person(text, name):
    assert found(text).get(name) == "person"


@pytest.mark.parametrize("text", [
    "今天和我一起去吃饭", "妈妈说今天下雨", "我和妈妈一起去", "今天说好了", "公司决定明年搬家。",
    "我和同事一起去", "大家说好了",
])
def test_chinese_time_family_and_generic_words_are_nobody(text):
    assert not [n for n, kind in found(text).items() if kind == "person"], text


def test_the_person_opening_the_story_becomes_an_entity(services):
    """Through extraction: the plan's "Tom and I …" makes Tom an entity of the space, and
    the later event that names Tom mid-sentence links to the same entity."""
    texts = ["Tom and I decided to plan a trip to Kyoto in May.",
             "I still remember our Kyoto trip with Tom."]
    for i, text in enumerate(texts):
        at = T0 + timedelta(days=i)
        services.clock = lambda at=at: at + timedelta(hours=1)
        ingest.put_messages(services, "sp", f"s{i}", PutMessagesRequest.model_validate(
            {"messages": [{"seq": 1, "role": "user", "speaker": "Ann", "content": text,
                           "at": at}]}))
        run_extraction(services, "sp", f"s{i}")
    [tom] = [e for e in services.store.list_records(Entity, "sp") if e.name == "Tom"]
    assert tom.kind == "person" and len(tom.events) == 2

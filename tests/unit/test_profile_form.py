"""The model's profile form (chalicelib.usecases.extract.profile_form): what it gives is
kept only where a user turn of the batch says it; endings only of known values the batch
names; with ANNALS_LLM_READS=facts the rules write the events and the form reads the facts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.domain.facts import Statement
from chalicelib.domain.models import Message
from chalicelib.ports import ExtractionContext
from chalicelib.usecases.extract.llm import LLMExtractor
from chalicelib.usecases.extract.profile_form import (
    FormOut,
    advance,
    build_prompt,
    ended_after,
    statements,
)
from tests.llm_double import ChatDouble

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)


def chat(*turns: tuple[str, str, str]) -> list[Message]:
    return [Message(space="s", session="c", seq=i, role=r, speaker=who, content=text,
                    at=T0 + timedelta(minutes=i), content_hash=f"h{i}")
            for i, (r, who, text) in enumerate(turns)]


TURNS = chat(("user", "Tomasz", "I'm the sous chef at Bramble & Oak, I live in Dennistoun"),
             ("assistant", "Dunmore", "Sounds like a dame with a record. Walls by fingertips."),
             ("user", "Tomasz", "moved to Shawlands last week, Dot the greyhound comes with me, "
                                "Ewa stays"))


def test_only_what_a_user_turn_says_is_kept_cited_by_the_latest_teller():
    form = FormOut(lives_in="Shawlands", works_as="sous chef", works_at="Bramble & Oak",
                   partner="Dunmore", pet=["Dot", "null"], allergic_to=["walls by fingertips"],
                   likes=["risotto"])
    told = statements(form, TURNS, {})
    assert set(told) == {0, 2}  # every user turn read, the character's none
    assert told[0] == [Statement("works_at", "Bramble & Oak"), Statement("works_as", "sous chef")]
    assert told[2] == [Statement("lives_in", "Shawlands"), Statement("pet", "Dot")]
    # the character's name, the character's words, an unsaid value, "null": all dropped


def test_a_value_must_be_shaped_like_one_and_its_attribute_spoken_of():
    """Issue 37, held-out 5: the 1.5B model's form held allergic_to "Celine Dion", pet
    "karaoke", learning "he's my boyfriend". A value is a name or a short noun phrase, and an
    allergy, a pet, a child or a lesson is told by turns that speak of one (the teller's, or
    the user's turn just before or after it)."""
    turns = chat(("user", "Maricel", "karaoke night!! I sang Celine Dion and cried"),
                 ("assistant", "Bot", "Iconic. Who came?"),
                 ("user", "Maricel", "Rohan. he's my boyfriend lol. also only Pickle waited up"),
                 ("user", "Maricel", "haha she's a cat. and I'm allergic to shrimp, sadly"))
    form = FormOut(allergic_to=["Celine Dion", "shrimp"], pet=["karaoke", "Pickle"],
                   learning=["he's my boyfriend"], likes=["karaoke night with my friends"])
    kept = [s for said in statements(form, turns, {}).values() for s in said]
    assert set(kept) == {Statement("allergic_to", "shrimp"), Statement("pet", "Pickle")}


def test_a_value_refused_under_one_field_may_stand_under_the_next():
    """Held-out 5 zh: the form put 数学 under allergic_to and dislikes; refused as an allergy
    (nobody spoke of one), it is still the dislike the turn tells. A child named in the turn
    that tells of her and again later is spoken of (闺女 … 小名叫朵朵 … 抱着朵朵)."""
    turns = chat(("user", "小雨", "我这辈子最讨厌数学 没有之一"),
                 ("user", "小雨", "闺女 六月八号生的 小名叫朵朵"),
                 ("assistant", "Bot", "恭喜！"),
                 ("user", "小雨", "今天又加班"),
                 ("user", "小雨", "群里天天有人@我 我就抱着朵朵单手改表格"))
    form = FormOut(allergic_to=["数学"], dislikes=["数学"], child=["朵朵"])
    kept = {s for said in statements(form, turns, {}).values() for s in said}
    assert kept == {Statement("dislikes", "数学"), Statement("child", "朵朵")}


def test_training_is_learning():
    """Companion chat (Ilse Marrow): "I start pilot training on monday" is something learnt."""
    turns = chat(("user", "Jess", "I start pilot training on monday. terrified"))
    told = statements(FormOut(learning=["pilot"]), turns, {})
    assert told[0] == [Statement("learning", "pilot")]


def test_an_ending_needs_a_known_value_the_batch_names_and_the_form_does_not_keep():
    known = {"partner": ["Ewa"], "pet": ["Dot"], "lives_in": ["Dennistoun"]}
    form = FormOut(pet=["Dot"], no_longer=["Ewa", "Dot is staying with me", "Leeds"])
    told = statements(form, TURNS, known)
    endings = [s for said in told.values() for s in said if s.ends]
    assert endings == [Statement("partner", "Ewa", ends=True)]


def test_a_known_value_copied_back_is_no_news_and_a_past_one_does_not_return():
    """The form is the state after the batch: a known value it lists again is not said by
    the turn that names it last (that turn may be its ending, told to the rules), and a value
    known to have ended does not come back because a turn names it."""
    turns = chat(("user", "Ann", "我和阿杰分手了 今天晚上说的"),
                 ("user", "Ann", "要是小黑还在就好了 搬去杭州了"))
    form = FormOut(partner="阿杰", pet=["小黑"], lives_in="杭州")
    told = statements(form, turns, {"partner": ["阿杰"]}, {"pet": ["小黑"]})
    assert told == {0: [], 1: [Statement("lives_in", "杭州")]}
    assert ended_after({"pet": ["小黑"]}, {0: [Statement("partner", "阿杰", ends=True),
                                               Statement("works_at", "*", ends=True)]}) \
        == {"pet": ["小黑"], "partner": ["阿杰"]}


def test_what_is_known_moves_on_with_what_was_told():
    known = {"lives_in": ["Dennistoun"], "partner": ["Ewa"], "pet": ["Pickle"]}
    after = advance(known, {2: [Statement("lives_in", "Shawlands"), Statement("pet", "Dot"),
                                Statement("partner", "Ewa", ends=True)]})
    assert after == {"lives_in": ["Shawlands"], "partner": [], "pet": ["Pickle", "Dot"]}
    assert known["lives_in"] == ["Dennistoun"]  # the caller's dict is left as it was


def test_the_prompt_says_who_is_the_user_and_what_is_known():
    text = build_prompt(TURNS, {"lives_in": ["Dennistoun"]})
    assert text.startswith("Known: lives_in: Dennistoun\nChat:\n")
    assert "Tomasz (USER): I'm the sous chef" in text
    assert "Dunmore (AI character): Sounds like" in text


def test_reads_facts_the_rules_write_events_the_form_reads_facts():
    with ChatDouble() as model:
        model.reply_json({"lives_in": "Dennistoun", "works_as": "sous chef"})
        from chalicelib.adapters.llm.openai_compat import OpenAICompatClient

        client = OpenAICompatClient(base_url=model.url, api_key="k", model="m",
                                    json_schema=True)
        extractor = LLMExtractor(client, reads="facts")
        ctx = ExtractionContext(space="s", session="c")
        reading = extractor.read(TURNS, ctx)
        assert len(model.requests) == 1  # one form call, no extraction call
        assert model.requests[0]["response_format"]["type"] == "json_schema"
        assert reading.events  # the rules' events
        assert set(reading.facts) == {0, 2}
        assert Statement("lives_in", "Dennistoun") in reading.facts[0]


def test_a_failed_form_leaves_the_facts_to_the_rules():
    with ChatDouble() as model:
        model.reply_text("not json")
        model.reply_text("still not json")
        from chalicelib.adapters.llm.openai_compat import OpenAICompatClient

        client = OpenAICompatClient(base_url=model.url, api_key="k", model="m", max_retries=0)
        ctx = ExtractionContext(space="s", session="c")
        reading = LLMExtractor(client, reads="facts").read(TURNS, ctx)
        assert reading.events and reading.facts == {} and client.usage.failures == 1


def test_a_value_names_one_thing():
    form = FormOut(partner="Dot", pet=["Dot"], likes=["sous chef", "Dot"], owns=["Dot"],
                   works_as="sous chef", learning=["Shawlands"], lives_in="Shawlands")
    told = statements(form, TURNS, {"pet": ["Dot"]})
    said = sorted((s.attribute, s.value) for stated in told.values() for s in stated)
    # Dot is known as a pet (and, known, not told again: no other field gets it); sous chef
    # and Shawlands go with their first field
    assert said == [("lives_in", "Shawlands"), ("works_as", "sous chef")]

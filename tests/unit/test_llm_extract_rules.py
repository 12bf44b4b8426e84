"""The LLM extractor follows the chronicle's rules (issue 20): its prompt asks for the kinds of
event the offline extractor makes and skips the same filler; what the model answers goes
through the same small-talk rules (chalicelib.domain.salience) and the same draft checkpoint
(chalicelib.usecases.extract.drafts) — against the local OpenAI-compatible double, over the
real SDK and wire format."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from chalicelib.config import Settings
from chalicelib.domain.models import Event, MessageIn, PutMessagesRequest
from chalicelib.usecases import ingest
from chalicelib.usecases.extract import extract_session_result
from chalicelib.usecases.extract.llm import SYSTEM_PROMPT, cited_seqs
from chalicelib.wiring import set_services
from tests.conftest import AUTH, make_services
from tests.unit.conftest import SPACE, T0

SESSION = "c1"
CHAT = [
    (0, "user", "Sam", "Hi Aki!"),
    (1, "assistant", "Aki", "Hello Sam! How are you?"),
    (2, "user", "Sam", "I adopted a cat named Biscuit yesterday."),
    (3, "assistant", "Aki", "That's so cool! How did the vet visit go?"),
    (4, "user", "Sam", "Biscuit is healthy, just a bit thin."),
    (5, "user", "Sam", "The vet said to feed him more protein."),
    (6, "assistant", "Aki", "Disneyland has plenty to do!\n- Catch a parade\n, or the "
                            "Disneyland Band performances."),
    (7, "user", "Sam", "Thanks so much! Bye!"),
]


@pytest.fixture
def llm_services(tmp_path, double):
    extra = {"salience": "rules"} if "salience" in Settings.model_fields else {}
    services = make_services(tmp_path, store="memory", llm="openai", llm_base_url=double.url,
                             llm_api_key="sk-rules", llm_model="rules-model",
                             llm_timeout_seconds=5, llm_max_retries=0, summary_llm=False,
                             **extra)
    ingest.put_messages(services, SPACE, SESSION, PutMessagesRequest(messages=[
        MessageIn(seq=seq, role=role, speaker=who, content=text,
                  at=T0 + timedelta(minutes=seq)) for seq, role, who, text in CHAT]))
    return services


def ev(summary, sources, title="", date="2026-06-15", **kw):
    return {"title": title, "summary": summary, "date": date, "importance": 5,
            "participants": ["Sam"], "sources": sources, **kw}


ADOPTED = ev("Sam adopted a cat named Biscuit", [2], "Biscuit adopted", date="2026-06-14")


def extract(services):
    return extract_session_result(services, SPACE, SESSION, T0 + timedelta(hours=1))


class TestThePrompt:
    def test_the_rules_are_in_the_prompt(self):
        for words in (
            # the kinds of event
            "a happening", "a plan or a decision", "a change of state", "a new job",
            "a new home", "health", "relationship", "a preference or a habit",
            "a fact about a person, pet, place or thing",
            # one event per happening, citing the turns it was told over
            "One event per happening", "a question and its answer",
            "a story over several messages", "cites all of those turns",
            # how it is written
            "without a date stamp", 'the date goes in "date"', "grammatical third person",
            "quote the speaker's own words",
            # what is not an event
            "greetings, thanks, reactions, agreement, encouragement, compliments",
            "questions that carry no fact", "sign-offs",
        ):
            assert words in SYSTEM_PROMPT, words

    def test_the_model_receives_them(self, llm_services, double):
        double.reply_json({"events": []})
        extract(llm_services)
        (request,) = double.requests
        assert request["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert "[seq 4]" in request["messages"][1]["content"]


class TestWhatTheModelAnswers:
    def test_small_talk_events_are_dropped(self, llm_services, double):
        double.reply_json({"events": [
            ev("Hi Aki!", [0], "Greeting"), ev("Hello Sam! How are you?", [1]),
            ev("That's so cool!", [3], "Reaction"), ev("Thanks so much! Bye!", [7]),
            ev("哈哈哈，太好了！", [3]), ADOPTED]})
        result = extract(llm_services)
        assert [e.summary for e in result.events] == ["Sam adopted a cat named Biscuit"]

    def test_an_event_told_over_several_turns_keeps_its_range(self, llm_services, double):
        double.reply_json({"events": [
            ev("Biscuit is healthy but a bit thin; the vet said to feed him more protein",
               [3, 4, 5], "Biscuit's vet visit")]})
        (event,) = extract(llm_services).events
        assert [(s.seq_start, s.seq_end) for s in event.sources] == [(3, 5)]

    @pytest.mark.parametrize("written", [[3, 4, 5], "3-5", ["3", "4", "5"], [[3, 5]],
                                         [{"seq_start": 3, "seq_end": 5}]])
    def test_a_range_however_it_is_written(self, written):
        assert cited_seqs(written) == [3, 4, 5]

    @pytest.mark.parametrize(("title", "kept"), [
        ("2026-06-14: Biscuit adopted", "Biscuit adopted"),
        ("Biscuit adopted (2026-06-14)", "Biscuit adopted"),
        ("Biscuit adopted on June 14, 2026", "Biscuit adopted"),
        ("领养奶糖（2026年6月14日）", "领养奶糖"),
        ("2026-06-14", "Sam adopted a cat named Biscuit"),
    ])
    def test_a_title_loses_its_date_stamp(self, llm_services, double, title, kept):
        double.reply_json({"events": [{**ADOPTED, "title": title}]})
        result = extract(llm_services)
        (event,) = result.events
        assert event.title == kept
        assert event.when.start.date().isoformat() == "2026-06-14"  # the date is `when`
        assert result.drafts.repaired == 1

    def test_malformed_drafts_are_repaired_or_dropped_never_failing_the_batch(
            self, llm_services, double):
        double.reply_json({"events": [
            ev(", or the Disneyland Band performances.", [6]),
            {"title": None, "summary": "🎉🎉", "sources": [6]},
            {"title": "Plans", "summary": "- **Sam** wants to ride Space Mountain\n- and watch "
                                          "the fireworks", "importance": "high",
             "participants": None, "tags": "trip", "plan": "yes", "sources": "6-7",
             "date": 20260615, "entities": ["Space Mountain"]},
            ev("Sam adopted a cat\u200b named \u202eBiscuit\u202c\x07", [2], "\n"),
            ADOPTED,
        ]})
        result = extract(llm_services)
        assert len(double.requests) == 1  # no retry, and no offline fallback
        by_summary = {e.summary: e for e in result.events}
        assert set(by_summary) == {
            "The Disneyland Band performances.",
            "Sam wants to ride Space Mountain\nWatch the fireworks",
            "Sam adopted a cat named Biscuit"}
        assert by_summary["The Disneyland Band performances."].title == \
            "The Disneyland Band performances"
        plans = by_summary["Sam wants to ride Space Mountain\nWatch the fireworks"]
        assert (plans.importance, plans.participants, plans.tags) == (5, [], ["trip"])
        assert [(s.seq_start, s.seq_end) for s in plans.sources] == [(6, 7)]
        assert result.drafts.repaired >= 2
        for event in result.events:
            Event.model_validate(event.model_dump())

    def test_post_extract_answers_200_with_the_counts(self, llm_services, double):
        from chalice.test import Client

        from app import app

        double.reply_json({"events": [ev(", or the Disneyland Band performances.", [6]),
                                      ADOPTED]})
        set_services(llm_services)
        try:
            with Client(app) as client:
                resp = client.http.post(f"/v1/spaces/{SPACE}/extract", headers=AUTH,
                                        body=json.dumps({"session": SESSION}))
        finally:
            set_services(None)
        assert resp.status_code == 200, resp.body
        body = json.loads(resp.body)
        assert sorted(e["title"] for e in body["events"]) == [
            "Biscuit adopted", "The Disneyland Band performances"]
        assert body["drafts"] == {"repaired": 1, "dropped": 0}

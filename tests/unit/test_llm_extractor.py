"""The LLM extractor: its prompt (resolved time hints, nearby events) and the checks on what
the model answers (sources, dates, importance), and the offline fallback."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from chalicelib.adapters.llm.base import Completion, JsonLLM, LLMTimeout
from chalicelib.config import Settings
from chalicelib.domain.models import Event, Source, When
from chalicelib.ports import ExtractionContext
from chalicelib.usecases.extract.llm import (
    SYSTEM_PROMPT,
    DraftOut,
    ExtractionOut,
    LLMExtractor,
    build_prompt,
    to_drafts,
)
from chalicelib.usecases.extract.offline import OfflineExtractor
from chalicelib.usecases.llm_usage import space_usage
from chalicelib.wiring import make_extractor, make_llm
from tests.unit.conftest import CST, SPACE, T0, message


class ScriptedLLM(JsonLLM):
    """In-process LLM: replies (text or an exception) served in order; prompts recorded."""

    name = "scripted"

    def __init__(self, *replies):
        super().__init__("scripted-model")
        self.replies = list(replies)
        self.prompts: list[tuple[str, list]] = []

    def _complete(self, system, turns, max_tokens, schema=None):
        self.prompts.append((system, turns))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        return Completion(text=text, prompt_tokens=100, completion_tokens=10)


MSGS = [
    message(0, "user", "小明", "你好呀"),
    message(1, "user", "小明", "我家奶糖昨天去体检了，结果一切正常。"),
    message(2, "assistant", "Aki", "太好了！奶糖真乖。"),
    message(3, "user", "小明", "下周五我要带它去打疫苗。"),
    message(4, "user", "小明", "昨天下午我们还去了海边散步。"),
    message(5, "user", "小明", "上周我去北京出差了三天。"),
]
CTX = ExtractionContext(space=SPACE, session="c1")


def day(d: str) -> When:
    start = datetime.fromisoformat(d).replace(tzinfo=CST)
    return When(start=start, end=start + timedelta(days=1), granularity="day")


def draft(**kw) -> DraftOut:
    base = {"title": "体检", "summary": "奶糖做了体检，结果一切正常", "date": "2026-06-14",
            "importance": 5, "participants": ["小明"], "sources": [1]}
    return DraftOut(**{**base, **kw})


def convert(*outs: DraftOut, messages=MSGS):
    return to_drafts(ExtractionOut(events=list(outs)), messages)


class TestPrompt:
    def test_messages_carry_seq_speaker_time_and_resolved_hints(self):
        nearby = Event(id="ev_1", space=SPACE, title="领养奶糖", summary="小明领养了橘猫奶糖",
                       when=day("2026-06-01"), participants=["小明"], created_at=T0,
                       updated_at=T0)
        prompt = build_prompt(MSGS[1:], MSGS[:1], [nearby])
        assert "- [ev_1] 2026-06-01 | 领养奶糖 | 小明领养了橘猫奶糖 | 小明" in prompt  # id tail
        assert "[seq 0] 2026-06-15 10:00 Mon | 小明 (user): 你好呀" in prompt
        assert ("[seq 1] 2026-06-15 10:01 Mon | 小明 (user): 我家奶糖昨天去体检了，结果一切正常。"
                "\n    time: 昨天 → 2026-06-14") in prompt
        assert "time: 下周五 → 2026-06-26" in prompt
        assert "time: 昨天下午 → 2026-06-14 12:00–18:00" in prompt
        assert "time: 上周 → 2026-06-08 .. 2026-06-14" in prompt
        # earlier messages are context only: no hints, listed before the citable ones
        assert prompt.index("Earlier messages") < prompt.index("[seq 0]") < prompt.index(
            "Messages (cite these seqs)")

    def test_system_prompt_states_the_chronicle_rules(self):
        for rule in ("Nothing invented", "language of the chat", "Name people by name",
                     "importance 1-10", "sources", '"plan": true', "JSON"):
            assert rule in SYSTEM_PROMPT


class TestSources:
    def test_unknown_seqs_are_dropped_and_neighbours_become_one_range(self):
        (d,) = convert(draft(sources=[1, 2, 99, 3]))
        assert [(s.seq_start, s.seq_end) for s in d.sources] == [(1, 3)]
        assert d.sources[0].preview == MSGS[1].content
        (d,) = convert(draft(sources=[3, 1]))
        assert [(s.seq_start, s.seq_end) for s in d.sources] == [(1, 1), (3, 3)]

    def test_an_event_citing_nothing_valid_is_repaired_to_the_message_saying_it(self):
        (d,) = convert(draft(sources=[42]))
        assert [(s.seq_start, s.seq_end) for s in d.sources] == [(1, 1)]

    def test_an_event_no_message_supports_is_dropped(self):
        assert convert(draft(summary="小红去了巴黎旅游", title="巴黎", sources=[])) == []
        assert convert(draft(summary="   ")) == []


class TestDates:
    def test_a_good_date_is_kept(self):
        (d,) = convert(draft())
        assert (d.when, d.plan) == (day("2026-06-14"), False)

    def test_after_the_message_and_not_a_plan_is_redated(self):
        (d,) = convert(draft(date="2026-07-30"))
        assert d.when == day("2026-06-14")  # 昨天, resolved against the message

    def test_before_anything_the_messages_name_is_redated(self):
        (d,) = convert(draft(date="2020-01-01"))
        assert d.when == day("2026-06-14")
        (d,) = convert(draft(summary="Aki夸奶糖很乖", sources=[2], date="2026-06-01"))
        assert d.when == day("2026-06-15")  # no time named: the message's own day

    def test_missing_or_unreadable_dates_are_redated(self):
        assert convert(draft(date=None))[0].when == day("2026-06-14")
        assert convert(draft(date="yesterday-ish"))[0].when == day("2026-06-14")

    def test_a_plan_keeps_its_future_date_and_a_future_date_makes_a_plan(self):
        (d,) = convert(draft(summary="小明下周五带奶糖打疫苗", sources=[3], date="2026-06-26",
                             plan=True))
        assert (d.when, d.plan, d.tags) == (day("2026-06-26"), True, ["plan"])
        (d,) = convert(draft(summary="小明下周五带奶糖打疫苗", sources=[3], date="2026-06-30"))
        assert (d.when, d.plan) == (day("2026-06-26"), True)  # re-dated to 下周五
        (d,) = convert(draft(summary="小明带奶糖打疫苗", sources=[3], date="2026-06-16"))
        assert (d.when, d.plan) == (day("2026-06-16"), True)  # ahead of the message

    def test_a_finer_span_gives_its_precision(self):
        (d,) = convert(draft(summary="小明和Aki去海边散步", sources=[4], date="2026-06-14"))
        assert (d.when.granularity, d.when.start.hour, d.when.end.hour) == ("part_of_day", 12, 18)

    def test_no_invented_precision_inside_a_coarse_span(self):
        (d,) = convert(draft(summary="小明去北京出差三天", sources=[5], date="2026-06-10"))
        assert (d.when.granularity, d.when.start.day, d.when.end.day) == ("week", 8, 15)

    def test_month_and_range_forms(self):
        (d,) = convert(draft(summary="小明去北京出差三天", sources=[5], date="2026-06-09",
                             date_end="2026-06-11"))
        assert (d.when.start.day, d.when.end.day, d.when.granularity) == (9, 12, "day")
        msgs = [message(0, "user", "Mel", "I moved to Berlin last month.")]
        (d,) = convert(draft(summary="Mel moved to Berlin", sources=[0], date="2026-05"),
                       messages=msgs)
        assert (d.when.granularity, d.when.start.month, d.when.end.month) == ("month", 5, 6)


class TestFields:
    @pytest.mark.parametrize(("given", "kept"), [(15, 10), (0, 1), (-3, 1), (6.6, 7), (7, 7)])
    def test_importance_is_clamped(self, given, kept):
        assert convert(draft(importance=given))[0].importance == kept

    def test_title_participants_and_tags_are_cleaned(self):
        (d,) = convert(draft(title=" ", participants=["小明", " 小明 ", "", "奶糖"],
                             tags=["猫", "猫", " 健康 "]))
        assert d.title == "奶糖做了体检"
        assert (d.participants, d.tags) == (["小明", "奶糖"], ["猫", "健康"])


class TestExtractor:
    def test_extract_sends_the_prompt_and_returns_checked_drafts(self, services):
        llm = ScriptedLLM({"events": [draft().model_dump()]})
        drafts = LLMExtractor(llm, store=services.store).read(MSGS, CTX).events
        assert [d.summary for d in drafts] == ["奶糖做了体检，结果一切正常"]
        system, turns = llm.prompts[0]
        assert system == SYSTEM_PROMPT and "昨天 → 2026-06-14" in turns[0][1]
        usage = space_usage(services.store, SPACE)
        assert usage["total"]["calls"] == 1 and usage["tasks"]["extract"]["prompt_tokens"] == 100

    def test_failure_falls_back_to_the_offline_extractor_and_counts(self, services):
        llm = ScriptedLLM(LLMTimeout("slow"))
        drafts = LLMExtractor(llm, store=services.store).read(MSGS, CTX).events
        assert drafts == OfflineExtractor().extract(MSGS, CTX)
        assert space_usage(services.store, SPACE)["total"]["failures"] == 1

    def test_invalid_twice_falls_back(self, services):
        llm = ScriptedLLM("not json", {"events": "nope"})
        drafts = LLMExtractor(llm, store=services.store).read(MSGS, CTX).events
        assert drafts == OfflineExtractor().extract(MSGS, CTX)
        assert space_usage(services.store, SPACE)["total"] == {
            "calls": 2, "prompt_tokens": 200, "completion_tokens": 20, "failures": 1,
            "total_tokens": 220}

    def test_an_answer_citing_turns_outside_its_batch_is_refused_whole(self, services):
        """One event cites the batch, another a turn that is not there: nothing of the
        answer is kept (not even the good event), the failure is counted, the rules read."""
        bad = draft(summary="小明去了巴黎", title="巴黎", sources=[99])
        llm = ScriptedLLM({"events": [draft().model_dump(), bad.model_dump()],
                           "facts": [{"seq": 1, "attribute": "pet", "value": "奶糖"}]})
        ctx = ExtractionContext(space=SPACE, session="c1")
        reading = LLMExtractor(llm, store=services.store).read(MSGS, ctx)
        assert reading.events == OfflineExtractor().extract(MSGS, CTX)
        assert not reading.facts  # no fact of the refused answer either
        assert space_usage(services.store, SPACE)["total"]["failures"] == 1

    def test_long_batches_are_split(self):
        llm = ScriptedLLM({"events": []}, {"events": []}, {"events": []})
        LLMExtractor(llm, max_batch_chars=30).read(MSGS, CTX)
        prompts = [turns[0][1] for _, turns in llm.prompts]
        assert len(prompts) == 3
        citable = [p.split("Messages (cite these seqs):")[1] for p in prompts]
        for seq in range(6):  # every message is citable in exactly one prompt
            assert sum(f"[seq {seq}]" in c for c in citable) == 1
        context, cited = prompts[-1].split("Messages (cite these seqs):")
        assert "[seq 4]" in context and "[seq 4]" not in cited  # earlier batch as context

    def test_nearby_events_come_from_the_store_when_not_given(self, services):
        ev = Event(id="ev_near", space=SPACE, title="领养奶糖", summary="小明领养了橘猫奶糖",
                   when=day("2026-06-01"), created_at=T0, updated_at=T0,
                   sources=[Source(session="c0", seq_start=0, seq_end=0)])
        far = ev.model_copy(update={"id": "ev_far", "summary": "很久以前的事",
                                    "when": day("2024-01-01")})
        services.store.create_event(ev)
        services.store.create_event(far)
        llm = ScriptedLLM({"events": []})
        LLMExtractor(llm, store=services.store).read(MSGS, CTX)
        prompt = llm.prompts[0][1][0][1]
        assert "小明领养了橘猫奶糖" in prompt and "很久以前的事" not in prompt

    def test_make_extractor_selection(self, services):
        assert isinstance(make_extractor(make_llm(Settings(_env_file=None))), OfflineExtractor)
        chosen = make_extractor(make_llm(Settings(_env_file=None, llm="openai", llm_model="m")))
        assert isinstance(chosen, LLMExtractor) and chosen.llm.model == "m"
        assert services.llm is None and services.extractor.name == "offline"

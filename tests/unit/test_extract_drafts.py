"""The draft checkpoint (chalicelib.usecases.extract.drafts): what it repairs, what it drops,
and that what it lets through always makes a valid Event citing the batch."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.domain.models import Event, EventDraft, Source, When
from chalicelib.usecases.extract.drafts import (
    check_draft,
    check_drafts,
    clean_summary,
    clean_title,
    plain_lines,
    strip_date_stamps,
    trim_fragment,
)
from tests.unit.conftest import T0, message

MSGS = [message(0, "user", "Sam", "What should I do at Disneyland next week?"),
        message(1, "assistant", "Aki", "Catch a parade, or the Disneyland Band performances."),
        message(2, "user", "Sam", "Great, I will.")]
DAY = When(start=T0.replace(hour=0, minute=0), end=T0.replace(hour=0, minute=0)
           + timedelta(days=1))


def src(start: int, end: int | None = None, session: str = "c1") -> Source:
    return Source(session=session, seq_start=start, seq_end=start if end is None else end,
                  preview="p")


def draft(**kw) -> EventDraft:
    base = {"title": "Disneyland plans", "summary": "Sam plans to visit Disneyland.",
            "when": DAY, "importance": 5, "participants": ["Sam"], "sources": [src(0)]}
    return EventDraft(**{**base, **kw})


def raw(**kw) -> EventDraft:
    """A draft as a careless extractor could build it: nothing validated."""
    base = {"title": "Disneyland plans", "summary": "Sam plans to visit Disneyland.",
            "when": DAY, "importance": 5, "participants": ["Sam"], "location": None,
            "tags": [], "sources": [src(0)], "kind": "event", "plan": False, "mentions": []}
    return EventDraft.model_construct(**{**base, **kw})


def as_event(d: EventDraft) -> Event:
    return Event(id="ev_x", space="sp", created_at=T0, updated_at=T0, **d.model_dump())


class TestTheDisneylandDraft:
    def test_the_fragment_is_trimmed_and_titled(self):
        checked = check_drafts([draft(title="", summary=", or the Disneyland Band performances.",
                                      sources=[src(1)])], MSGS)
        (d,) = checked.drafts
        assert d.summary == "The Disneyland Band performances."
        assert d.title == "The Disneyland Band performances"
        assert (checked.counts.repaired, checked.counts.dropped) == (1, 0)
        as_event(d)


class TestRepairs:
    def test_a_valid_draft_passes_untouched(self):
        d = draft()
        checked = check_drafts([d], MSGS)
        assert checked.drafts == [d] and checked.drafts[0] is d
        assert (checked.counts.kept, checked.counts.repaired) == (1, 0)

    @pytest.mark.parametrize(("given", "expected"), [
        (", or the Disneyland Band performances.", "The Disneyland Band performances."),
        ("... and then we left", "We left"),
        ("而且，我们去了海边。", "我们去了海边。"),
        ("，或者去看烟花。", "去看烟花。"),
        ("\u0301\u0301 combining marks first", "Combining marks first"),
        ("But Sam stayed home.", "But Sam stayed home."),  # a whole sentence stays
        ("另外小明下周六要去上海出差。", "另外小明下周六要去上海出差。"),
        ("Andrew went home", "Andrew went home"),
        ('"Hello," Sam said.', '"Hello," Sam said.'),
        ("#1 fan of the band", "#1 fan of the band"),
    ])
    def test_fragments_start_at_their_first_word(self, given, expected):
        assert trim_fragment(given) == expected

    @pytest.mark.parametrize(("given", "expected"), [
        ("2026-06-14: Vet visit", "Vet visit"),
        ("[2026-06-14] Trip to Lisbon", "Trip to Lisbon"),
        ("体检（6月14日）", "体检"),
        ("小明于2026年6月14日领养了奶糖", "小明领养了奶糖"),
        ("Biscuit adopted on June 14, 2026", "Biscuit adopted"),
        ("Trip 2026-06-10 to 2026-06-12", "Trip"),
        ("奶糖昨天（2026-06-1…", "奶糖昨天"),
        ("Python 3.12 release", "Python 3.12 release"),
        ("Mel turned 30", "Mel turned 30"),
        # the function word the date completed goes with it (issue 36: "last day 是", "定")
        ("last day 是 Dec 18", "last day"),
        ("妹妹的婚礼定在12月3日", "妹妹的婚礼"),
        ("Last shift at Fig & Fern was on Dec 4", "Last shift at Fig & Fern"),
        ("现在 12月3日", "现在"),
    ])
    def test_titles_lose_their_date_stamps(self, given, expected):
        assert strip_date_stamps(given) == expected

    def test_a_title_cut_from_a_dated_summary_is_made_again(self):
        summary = "奶糖昨天（2026-06-14）进行了体检，结果一切正常"
        assert clean_title("奶糖昨天（2026-06-14）进行了…", summary) == "奶糖昨天进行了体检"

    def test_empty_titles_are_made_from_the_summary_without_a_date(self):
        assert clean_title("", "2026-06-14: Sam adopted a cat named Biscuit. It is ginger.") \
            == "Sam adopted a cat named Biscuit"
        assert clean_title(" 🎉 ", "小明领养了一只橘猫，取名叫奶糖") == "小明领养了一只橘猫"
        assert clean_title("2026-06-14", "Sam adopted a cat.") == "Sam adopted a cat"

    def test_markup_becomes_plain_lines(self):
        text = ("# Plan\n```python\nprint('hi')\n```\n| Day | Plan |\n|---|---|\n| Mon | Zoo |\n"
                "> quoted\n1. first [link](http://x.com/a)\n* **bold**, *em* and `code`\n---\n"
                "一、第一\n（2）第二\n• dot")
        assert plain_lines(text).split("\n") == [
            "Plan", "print('hi')", "Day · Plan", "Mon · Zoo", "quoted", "first link",
            "bold, em and code", "第一", "第二", "dot"]

    def test_control_and_invisible_characters_go(self):
        assert clean_summary("Sam\x00 moved\u200b to \u202eBerlin\u202c.\x07") == \
            "Sam moved to Berlin."
        assert clean_title("Sam\nmoved\tto Berlin", "x") == "Sam moved to Berlin"

    def test_over_long_text_is_cut_at_a_boundary(self):
        long = "Sam went to the park. " * 400
        d, outcome = check_draft(draft(summary=long, title="word " * 100), MSGS)
        assert d is not None and outcome.startswith("repaired")
        assert len(d.summary) <= 4000 and d.summary.endswith("park.")
        assert len(d.title) <= 200 and d.title.endswith("…") and " wor…" not in d.title
        (cjk,) = check_drafts([draft(summary="字" * 5000, title="")], MSGS).drafts
        assert len(cjk.summary) == 4000 and cjk.summary.endswith("…") and len(cjk.title) <= 24

    def test_bad_fields_of_an_unvalidated_draft_are_repaired(self):
        bad_when = When.model_construct(start=T0, end=T0 - timedelta(hours=1), granularity="day")
        d, outcome = check_draft(raw(when=bad_when, importance=42, participants=["Sam", 3, None,
                                     "Sam", "a\nb"], tags=None, kind="story", plan="yes",
                                     title=None, summary="Sam moved."), MSGS)
        assert d is not None, outcome
        assert d.when == DAY  # the cited message's day
        assert (d.importance, d.participants, d.tags, d.kind, d.plan) == \
            (10, ["Sam", "a b"], [], "event", False)
        assert d.title == "Sam moved"
        as_event(d)

    def test_sources_are_narrowed_to_the_batch(self):
        d, _ = check_draft(draft(sources=[src(1, 9), src(5, 7), src(2, 0), src(0, 0, "other"),
                                          src(1, 2)]), MSGS)
        assert [(s.session, s.seq_start, s.seq_end) for s in d.sources] == \
            [("c1", 1, 2), ("c1", 0, 2)]


class TestDrops:
    @pytest.mark.parametrize("summary", ["", "   ", "🎉🎉🎉", "...", "—", "```\n```", "**", "| |",
                                         "\u200b\u200d", "- \n- "])
    def test_nothing_worth_keeping(self, summary):
        checked = check_drafts([draft(summary=summary, title="")], MSGS)
        assert checked.drafts == [] and checked.counts.dropped == 1

    def test_the_title_stands_in_for_an_empty_summary(self):
        (d,) = check_drafts([draft(summary="🎉", title="Sam's party")], MSGS).drafts
        assert d.summary == "Sam's party"

    def test_a_draft_citing_nothing_of_the_batch(self):
        for sources in ([], [src(7)], [src(0, 0, "other")]):
            checked = check_drafts([draft(sources=sources)], MSGS)
            assert checked.drafts == [] and checked.counts.dropped == 1

    def test_something_that_is_not_a_draft_is_dropped_not_raised(self):
        checked = check_drafts([None, draft()], MSGS)  # type: ignore[list-item]
        assert len(checked.drafts) == 1 and checked.counts.dropped == 1

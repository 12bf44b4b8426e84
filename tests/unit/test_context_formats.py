"""chalicelib.usecases.recall.context: the text a chat host injects (typed blocks, timeline, compact)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from chalicelib.domain.models import Card, Source, When
from chalicelib.usecases.recall.context import (
    FORMATS,
    PREAMBLE_EN,
    PREAMBLE_ZH,
    compact,
    estimate_tokens,
    render,
    timeline,
    typed_blocks,
)
from tests.unit.conftest import CST


def card(ref, text, day=None, importance=None, title="t", granularity="day", kind="event"):
    when = None
    if day is not None:
        start = datetime(2026, day[0], day[1], tzinfo=CST)
        when = When(start=start, end=start + timedelta(days=1), granularity=granularity)
    return Card(ref=ref, kind=kind, title=title, text=text, when=when, importance=importance,
                sources=[Source(session="c1", seq_start=1, seq_end=1)], score=0.5)


DIAG = card("event:ev_a", "小明家的猫奶糖被确诊了肾病。", (6, 14), 8, title="奶糖确诊肾病")
PUPPY = card("event:ev_b", "Mel adopted a puppy named Luna.", (5, 3), 5, title="Mel adopted a puppy")
COFFEE = card("message:c1:4", "Mel: coffee later?", (6, 2))


class TestTypedBlocks:
    def test_one_block_per_card_with_ref_title_date_text(self):
        assert typed_blocks([DIAG, PUPPY]) == (
            "[typed_memory ref=event:ev_a]\n"
            "title: 奶糖确诊肾病\n"
            "date: 2026-06-14\n"
            "text: |\n"
            "  小明家的猫奶糖被确诊了肾病。\n"
            "[/typed_memory]\n"
            "\n"
            "[typed_memory ref=event:ev_b]\n"
            "title: Mel adopted a puppy\n"
            "date: 2026-05-03\n"
            "text: |\n"
            "  Mel adopted a puppy named Luna.\n"
            "[/typed_memory]"
        )

    def test_multi_line_text_is_indented_and_undated_has_no_date_line(self):
        block = typed_blocks([card("event:ev_n", "line one\nline two")])
        assert block == ("[typed_memory ref=event:ev_n]\ntitle: t\ntext: |\n"
                         "  line one\n  line two\n[/typed_memory]")

    def test_keeps_the_given_order(self):
        assert typed_blocks([PUPPY, DIAG]).index("ev_b") < typed_blocks([PUPPY, DIAG]).index("ev_a")

    def test_range_and_minute_labels(self):
        start = datetime(2026, 6, 8, tzinfo=CST)
        week = card("event:ev_w", "trip", None)
        week = week.model_copy(update={"when": When(start=start, end=start + timedelta(days=7),
                                                    granularity="week")})
        minute = card("message:c1:1", "hi").model_copy(update={"when": When(
            start=datetime(2026, 6, 8, 9, 5, tzinfo=CST),
            end=datetime(2026, 6, 8, 9, 6, tzinfo=CST), granularity="minute")})
        out = typed_blocks([week, minute])
        assert "date: 2026-06-08~2026-06-14" in out
        assert "date: 2026-06-08 09:05" in out

    def test_empty(self):
        assert typed_blocks([]) == ""


class TestTimeline:
    def test_time_ordered_month_groups_and_stars(self):
        assert timeline([DIAG, COFFEE, PUPPY]) == (
            "2026-05\n"
            "├─ [2026-05-03] Mel adopted a puppy named Luna.\n"
            "2026-06\n"
            "├─ [2026-06-02] Mel: coffee later?\n"
            "├─ ★ [2026-06-14] 小明家的猫奶糖被确诊了肾病。"
        )

    def test_threshold(self):
        assert "★" not in timeline([DIAG], highlight_threshold=9)
        assert "★" in timeline([PUPPY], highlight_threshold=5)

    def test_a_single_undated_card(self):
        header, line = timeline([card("event:ev_u", "Something")]).splitlines()
        assert header == "undated"
        assert line.split() == ["├─", "[?]", "Something"]

    def test_undated_and_dated_cards_together(self):
        out = timeline([DIAG, card("event:ev_u", "Something")])
        assert "undated" in out and "├─ [?] Something" in out

    def test_multi_line_text_stays_on_its_tree_line(self):
        out = timeline([card("event:ev_m", "Luna has an ear infection.\nDrops twice a day.",
                             (6, 14))])
        assert all(line.startswith(("├─", "│", "2026-")) for line in out.splitlines())


class TestCompact:
    def test_one_line_per_card_in_the_given_order(self):
        assert compact([DIAG, PUPPY, card("event:ev_u", "Something")]) == (
            "- [2026-06-14] 小明家的猫奶糖被确诊了肾病。\n"
            "- [2026-05-03] Mel adopted a puppy named Luna.\n"
            "- [?] Something"
        )


class TestRender:
    @pytest.mark.parametrize("fmt", sorted(FORMATS))
    def test_dispatches_by_name_after_the_preamble(self, fmt):
        assert render([DIAG, PUPPY], fmt, zh=False) == (
            f"{PREAMBLE_EN}\n\n{FORMATS[fmt]([DIAG, PUPPY])}")

    def test_default_is_blocks(self):
        assert render([DIAG]).endswith("\n\n" + typed_blocks([DIAG]))

    def test_preamble_once_in_the_query_language(self):
        assert render([PUPPY, DIAG], zh=True).startswith(PREAMBLE_ZH + "\n\n")
        assert render([DIAG], zh=False).startswith(PREAMBLE_EN + "\n\n")
        for fmt in FORMATS:
            out = render([DIAG, PUPPY, COFFEE], fmt)
            assert out.count(PREAMBLE_EN) + out.count(PREAMBLE_ZH) == 1

    def test_preamble_follows_the_cards_when_no_language_is_given(self):
        assert render([DIAG]).startswith(PREAMBLE_ZH)
        assert render([PUPPY]).startswith(PREAMBLE_EN)

    def test_no_cards_no_context(self):
        assert all(render([], fmt) == "" for fmt in FORMATS)

    def test_known_formats(self):
        assert set(FORMATS) == {"blocks", "timeline", "compact"}


class TestEstimateTokens:
    @pytest.mark.parametrize(("text", "tokens"), [
        ("", 0),
        ("奶糖体检", 4),  # one per CJK character
        ("abcd", 1),
        ("abcdefgh", 2),
        ("abcde", 2),  # rounds up
        ("奶糖 is ok", 2 + 2),  # 2 CJK + 7 other chars → 2
        ("こんにちは", 5),
    ])
    def test_estimate(self, text, tokens):
        assert estimate_tokens(text) == tokens

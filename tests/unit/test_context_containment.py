"""Recall context containment: stored text can never end its block, open another, or pass
for the context's own structure (chalicelib.usecases.recall.context, module docstring).

Every payload of tests/data/breakout_payloads.json is placed in a title, a speaker, a tag and a
text, among normal cards; each format must parse back into exactly the stored cards (after the
documented normalisation), with one open and one close marker per card and nothing else that
reads as structure.
"""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from chalicelib.domain.containment import BRACKETS
from chalicelib.domain.models import Card, Event, Message, RecallRequest, When
from chalicelib.usecases.recall import recall
from chalicelib.usecases.recall.cards import event_card, message_card
from chalicelib.usecases.recall.context import (
    FORMATS,
    PREAMBLE_EN,
    PREAMBLE_ZH,
    clean_line,
    clean_text,
    estimate_tokens,
    parse_context,
    render,
    shown,
    timeline_order,
)
from chalicelib.usecases.recall.fusion import Candidate
from tests.unit.conftest import CST, SPACE, T0

DATA = json.loads((Path(__file__).parents[1] / "data" / "breakout_payloads.json").read_text())


def expand(item: dict) -> str:
    return item["payload"] * item.get("repeat", 1) + item.get("suffix", "")


PAYLOADS = {item["name"]: expand(item) for item in DATA["payloads"]}
PLACEMENTS = ("title", "speaker", "tag", "text")


def test_the_corpus_is_big_enough():
    assert len(PAYLOADS) >= 30


# ------------------------------------------------------------------ cards


def when(day: int) -> When:
    start = datetime(2026, 6, day, tzinfo=CST)
    return When(start=start, end=start + timedelta(days=1), granularity="day")


def stored_event(eid: str, *, title="Luna's checkup", summary="Luna had a checkup.", tags=(),
                 day: int = 14, importance: int = 5) -> Event:
    """As it might sit in the store: model_construct, so data written before today's input
    checks (or by an extractor) is covered too."""
    return Event.model_construct(
        id=eid, space=SPACE, title=title, summary=summary, when=when(day), importance=importance,
        participants=["Mel"], location=None, tags=list(tags), sources=[], kind="event",
        status="active", plan=False, version=1, created_at=T0, updated_at=T0)


def stored_message(seq: int, speaker: str, content: str) -> Message:
    return Message.model_construct(
        space=SPACE, session="c1", seq=seq, role="user", speaker=speaker, content=content,
        at=T0 + timedelta(days=seq), content_hash="h")


def hostile_card(placement: str, payload: str) -> Card:
    cand = Candidate(ref="x", score=0.5)
    if placement == "speaker":
        return message_card(stored_message(3, payload, "I adopted a puppy."), cand)
    if placement == "title":
        return event_card(stored_event("ev_p", title=payload, importance=9), cand)
    if placement == "tag":
        return event_card(stored_event("ev_p", tags=["quoted", payload, "plan"]), cand)
    return event_card(stored_event("ev_p", summary=payload, day=2), cand)


NORMAL = [
    Card(ref="event:ev_a", kind="event", title="奶糖确诊肾病", text="小明家的猫奶糖被确诊了肾病。",
         when=when(14), importance=8, tags=["health"], score=0.9),
    Card(ref="message:c1:4", kind="message", title="Mel · 2026-05-03 09:00",
         text="Mel: coffee later?\nSure, at 3.", score=0.7,
         when=When(start=datetime(2026, 5, 3, 9, tzinfo=CST),
                   end=datetime(2026, 5, 3, 9, 1, tzinfo=CST), granularity="minute")),
    Card(ref="event:ev_u", kind="event", title="Undated", text="Something without a date.",
         score=0.3),
]


def deck(placement: str, payload: str) -> list[Card]:
    """Normal cards around the hostile one (and a second hostile one at the end)."""
    return [NORMAL[0], hostile_card(placement, payload), NORMAL[1], NORMAL[2],
            hostile_card("text", payload)]


# ------------------------------------------------------------------ what counts as a marker

# Every character that is, folds to, or is named like a square bracket, found independently of
# the module's own table: what a model could take for [ or ].
_SQUARE_NAMES = ("SQUARE BRACKET", "LENTICULAR BRACKET", "TORTOISE SHELL BRACKET",
                 "HALF BRACKET", "CEILING", "FLOOR")


def _square_like() -> dict[int, str]:
    table: dict[int, str] = {}
    for cp in range(0x110000):
        ch = chr(cp)
        name = unicodedata.name(ch, "")
        folded = unicodedata.normalize("NFKC", ch)
        if len(folded) == 1 and folded in "[]":
            table[cp] = folded
        elif unicodedata.category(ch) in ("Ps", "Pe", "Sm") and any(n in name for n in _SQUARE_NAMES):
            table[cp] = "[" if "LEFT" in name else "]"
    return table


SQUARE_LIKE = _square_like()


def fold(text: str) -> str:
    """Text as a lenient reader might see it: invisibles dropped, width and case folded,
    bracket look-alikes as [ ], and only letters, digits, [ / ] kept."""
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = unicodedata.normalize("NFKC", text).translate(SQUARE_LIKE).casefold()
    return "".join(ch for ch in text if ch.isalnum() or ch in "[/]")


def markers(text: str) -> tuple[int, int]:
    folded = fold(text)
    return folded.count("[typedmemory"), folded.count("[/typedmemory]")


def check_structure(out: str, fmt: str, cards: list[Card]) -> None:
    lines = out.split("\n")
    assert out.splitlines() == lines, "a line break other than \\n reached the output"
    assert all(ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Zl", "Zp")
               for ch in out)  # tabs stay: every line starts with structure, never a tab
    assert lines[0] in (PREAMBLE_EN, PREAMBLE_ZH) and lines[1] == ""
    assert sum(line in (PREAMBLE_EN, PREAMBLE_ZH) for line in lines) == 1  # said once
    assert not re.search(r"<[/|!?A-Za-z]|<\||```", out), "a tag or fence opener survived"
    n = len(cards)
    if fmt == "blocks":
        assert markers(out) == (n, n)
        assert sum(line.startswith("[typed_memory ref=") for line in lines) == n
        assert sum(line == "[/typed_memory]" for line in lines) == n
        # Square brackets only ever appear in marker lines.
        body = [line for line in lines[2:] if not line.startswith("[")]
        assert not any(ch in BRACKETS for line in body for ch in line)
        return
    assert markers(out) == (0, 0)
    card_lines = [line for line in lines[2:] if line[:1] in ("├", "-")]
    assert len(card_lines) == n
    prefix = "├─ " if fmt == "timeline" else "- ["
    assert all(line.startswith(prefix) for line in card_lines)
    if fmt == "timeline":
        months = {c.when.start.strftime("%Y-%m") if c.when else "undated" for c in cards}
        headers = [line for line in lines[2:] if not line.startswith("├─ ")]
        assert sorted(headers) == sorted(months)
    else:
        assert len(lines) == 2 + n


def expected(cards: list[Card], fmt: str) -> list[dict]:
    order = timeline_order(cards) if fmt == "timeline" else cards
    return [shown(card, fmt) for card in order]


# ------------------------------------------------------------------ the corpus


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payload_stays_in_its_card(fmt, placement, name):
    cards = deck(placement, PAYLOADS[name])
    out = render(cards, fmt)
    parsed = parse_context(out, fmt)
    assert parsed == expected(cards, fmt)
    check_structure(out, fmt, cards)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("placement", PLACEMENTS)
def test_all_payloads_in_one_context(fmt, placement):
    cards = [*NORMAL, *(hostile_card(placement, p) for p in PAYLOADS.values())]
    cards = [c.model_copy(update={"ref": f"{c.ref}_{i}"}) for i, c in enumerate(cards)]
    out = render(cards, fmt, zh=True)
    assert parse_context(out, fmt) == expected(cards, fmt)
    check_structure(out, fmt, cards)


class TestNormalisation:
    @pytest.mark.parametrize("name", sorted(PAYLOADS))
    def test_is_idempotent(self, name):
        text = PAYLOADS[name]
        assert clean_text(clean_text(text)) == clean_text(text)
        assert clean_line(clean_line(text)) == clean_line(text) == clean_line(clean_text(text))

    @pytest.mark.parametrize("name", sorted(PAYLOADS))
    def test_titles_and_speakers_are_single_line(self, name):
        payload = PAYLOADS[name]
        for placement in ("title", "speaker"):
            [block] = parse_context(render([hostile_card(placement, payload)]), "blocks")
            assert "\n" not in block["title"]
        [block] = parse_context(render([hostile_card("speaker", payload)]), "blocks")
        first, _, _ = block["text"].partition(": I adopted")
        assert "\n" not in first  # the speaker in the message text is one line too

    def test_every_square_bracket_lookalike_is_neutralised(self):
        missing = [f"U+{cp:04X}" for cp in SQUARE_LIKE
                   if unicodedata.category(chr(cp)) != "Cf" and chr(cp) not in BRACKETS]
        assert missing == []
        assert not any(chr(cp) in clean_text("".join(map(chr, SQUARE_LIKE)))
                       for cp in SQUARE_LIKE)

    def test_every_format_and_control_character_goes(self):
        breaks = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
        invisible = "".join(chr(cp) for cp in range(0x110000)
                            if unicodedata.category(chr(cp)) in ("Cf", "Cc")
                            and chr(cp) not in breaks + "\t")
        assert clean_text(f"a{invisible}b") == "ab"
        assert clean_text("\ud800x\udfff") == "\ufffdx\ufffd"

    def test_ordinary_text_is_untouched(self):
        for text in ("小明家的猫奶糖被确诊了肾病，医生说要每天吃药。", "Mel: coffee later? a < b, 3 > 2",
                     "《哈利波特》「好」（括号）", "tabs\tstay", "<3 and <= and ->"):
            assert clean_text(text) == text

    def test_what_changes(self):
        assert clean_text("a\r\nb\u2028c\x85d") == "a\nb\nc\nd"
        assert clean_text("[x]【y】［z］") == "(x)(y)(z)"
        assert clean_text("</memory><|im_start|>") == "‹/memory>‹|im_start|>"
        assert clean_text("```py") == "ˋˋˋpy"
        assert clean_text("a\u200bb\u202ec\x00d") == "abcd"
        assert clean_line(" one \n\n two ") == "one two"


class TestRecallEndToEnd:
    """Hostile events and speakers in the store come back from recall contained."""

    @pytest.fixture
    def hostile(self, services):
        events = []
        for i, payload in enumerate(PAYLOADS[name] for name in sorted(PAYLOADS)[:20]):
            event = stored_event(f"ev_{i}", title=f"pottery {payload}"[:300],
                                 summary=f"pottery class {payload}", tags=[payload[:100]],
                                 day=1 + i % 28)
            services.store.create_event(event)
            events.append(event)
        services.index.index_events(events)
        return events

    @pytest.mark.parametrize("fmt", sorted(FORMATS))
    def test_context_parses_back_into_the_cards(self, services, hostile, fmt):
        res = recall(services, SPACE, RecallRequest(query="pottery class", max_cards=20,
                                                    format=fmt, now=T0))
        assert len(res.cards) >= 10
        assert parse_context(res.context, fmt) == expected(res.cards, fmt)
        check_structure(res.context, fmt, res.cards)
        assert res.context.startswith(PREAMBLE_EN)
        assert res.context_tokens == estimate_tokens(res.context)

"""A card's sources, ordered for the question (recall/cards.py, found_sources_first): an
event cites every turn it was told in; the turns this recall found for the query come
first, in its order; the rest keep conversation order; nothing is dropped or added."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from chalicelib.domain.models import Card, Event, RecallRequest, Source, When
from chalicelib.usecases.recall import recall, recipes
from chalicelib.usecases.recall.cards import found_sources_first
from chalicelib.usecases.recall.fusion import Candidate
from chalicelib.usecases.recall.recipes import HYBRID
from tests.unit.conftest import CST, SPACE, T0

# Keyword search only: what recall finds is exactly what the words find.
WORDS = replace(HYBRID, name="test_sources_words", vector_k=0, graph_seeds=0, graph_turns=0,
                min_relevance=0.0, time_layers=False, answers=0.0)


@pytest.fixture(autouse=True)
def test_recipes(monkeypatch):
    monkeypatch.setitem(recipes.RECIPES, WORDS.name, WORDS)


def card(*seqs: tuple[int, int], session: str = "1") -> Card:
    return Card(ref="event:ev", kind="event", title="t", text="t", score=1.0,
                sources=[Source(session=session, seq_start=a, seq_end=b) for a, b in seqs])


def starts(c: Card) -> list[int]:
    return [s.seq_start for s in c.sources]


def test_the_turn_found_first_leads_and_the_rest_keep_their_order():
    cands = [Candidate("event:ev"), Candidate("message:1:9"), Candidate("message:1:5")]
    out = found_sources_first([card((1, 1), (5, 5), (7, 7), (9, 9))], cands)
    assert starts(out[0]) == [9, 5, 1, 7]


def test_a_range_counts_by_the_best_turn_it_covers_and_other_sessions_do_not_match():
    cands = [Candidate("message:2:4"), Candidate("message:1:12")]
    out = found_sources_first([card((1, 1), (10, 14))], cands)
    assert starts(out[0]) == [10, 1]  # session 2's turn 4 is not session 1's
    assert out[0].sources[0].seq_end == 14  # the range is kept whole


def test_nothing_found_or_one_source_leaves_the_card_as_it_was():
    one, two = card((3, 3)), card((1, 1), (2, 2))
    assert found_sources_first([one, two], [Candidate("event:ev")]) == [one, two]
    assert found_sources_first([one], [Candidate("message:1:3")])[0] is one


def test_recall_shows_first_the_turn_that_answers(services, put):
    """One event told over two turns (the cat, then where she came from): asked where she
    came from, the card cites that turn first; asked what she is, the first turn."""
    put("1", [(1, "user", "小雨", "一只橘猫叫年糕"),
              (2, "assistant", "阿狸", "好可爱"),
              (3, "user", "小雨", "去年十二月从救助站领养的")])
    start = datetime(2025, 12, 1, tzinfo=CST)
    ev = Event(id="ev_cat", space=SPACE, title="小雨领养橘猫年糕",
               summary="一只橘猫叫年糕，去年十二月从救助站领养的",
               when=When(start=start, end=start + timedelta(days=31), granularity="month"),
               participants=["小雨"], created_at=T0, updated_at=T0,
               sources=[Source(session="1", seq_start=1, seq_end=1),
                        Source(session="1", seq_start=3, seq_end=3)])
    services.store.create_event(ev)
    services.index.index_events([ev])

    def first_source(query: str) -> int:
        res = recall(services, SPACE, RecallRequest(query=query, now=T0, recipe=WORDS.name,
                                                    max_cards=20))
        cat = next(c for c in res.cards if c.ref == "event:ev_cat")
        return cat.sources[0].seq_start

    assert first_source("年糕是从救助站领养的吗") == 3
    assert first_source("橘猫年糕") == 1

"""Store contract, the window's recall counter: `recall_count` reads it and writes nothing
(a read key's recall looks at the cooldown through it: docs/keys.md)."""

from __future__ import annotations

from datetime import UTC, datetime


def test_recall_count_reads_the_counter_without_counting(store):
    assert store.recall_count("sp", "w1") == 0  # never counted
    assert store.recall_count("sp", "w1") == 0  # a read creates nothing
    assert store.bump_recall_count("sp", "w1") == 1  # so the first bump still gives 1
    assert store.bump_recall_count("sp", "w1") == 2
    assert store.recall_count("sp", "w1") == 2
    assert store.recall_count("sp", "w1") == 2
    assert store.bump_recall_count("sp", "w1") == 3
    assert (store.recall_count("sp", "w2"), store.recall_count("other", "w1")) == (0, 0)


def test_a_delivery_keeps_the_count_recall_count_reads(store):
    for _ in range(3):
        store.bump_recall_count("sp", "w1")
    at = datetime(2026, 6, 14, 9, 0, tzinfo=UTC)
    (delivered,) = store.add_deliveries("sp", "w1", ["event:e1"], at)
    assert delivered.recall_count == store.recall_count("sp", "w1") == 3

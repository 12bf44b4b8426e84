"""Keyword and vector index contracts: every adapter returns the same hits for the same docs."""

from __future__ import annotations

import numpy as np

from chalicelib.domain.models import IndexDoc
from chalicelib.ports import KeywordIndex, SearchFilter, VectorIndex

from .conftest import DIM

DAY = 86400.0


def doc(doc_id: str, text: str, day: int = 0, kind: str = "event", space: str = "sp",
        status: str = "active", vec: list[float] | None = None) -> IndexDoc:
    return IndexDoc(id=doc_id, space=space, kind=kind, text=text, start=day * DAY,
                    end=(day + 1) * DAY, status=status, vector=vec)


def unit(i: int, j: int | None = None) -> list[float]:
    v = np.zeros(DIM, np.float32)
    v[i] = 1.0
    if j is not None:
        v[j] = 0.5
    return (v / np.linalg.norm(v)).tolist()


# ------------------------------------------------------------------ keyword


def test_is_a_keyword_index(keyword_index):
    assert isinstance(keyword_index, KeywordIndex)


def test_keyword_ranks_matching_docs_and_ignores_others(keyword_index):
    keyword_index.upsert([
        doc("event:1", "奶糖昨天进行了体检，结果正常"),
        doc("event:2", "用户开始饲养一只橘猫，取名为奶糖"),
        doc("event:3", "Melanie painted a lake sunrise last year"),
    ])
    hits = keyword_index.keyword_search("sp", "奶糖体检", 10)
    assert [h.id for h in hits][:2] == ["event:1", "event:2"]
    assert hits[0].score > hits[1].score
    assert [h.id for h in keyword_index.keyword_search("sp", "paintings of sunrises", 10)] == [
        "event:3"]
    assert keyword_index.keyword_search("sp", "the a of", 10) == []


def test_held_terms_says_which_terms_the_space_holds_in_one_call(keyword_index):
    from chalicelib.domain.textproc import query_terms

    keyword_index.upsert([
        doc("event:1", "We went hiking in the mountains"),
        doc("event:2", "奶糖昨天进行了体检"),
        doc("event:3", "the support group met downtown", space="other"),
        doc("event:4", "a lovely lake at sunrise", status="superseded"),
    ])
    terms = query_terms("hiking support lake 奶糖 LGBTQ")
    assert keyword_index.held_terms("sp", terms) == set(query_terms("hiking 奶糖"))
    assert keyword_index.held_terms("other", terms) == set(query_terms("support"))
    assert keyword_index.held_terms("sp", []) == set()
    # a token is looked up as it is: "decision" is decis, which tokenized again is deci
    keyword_index.upsert([doc("event:5", "a hard decision to make")])
    assert keyword_index.held_terms("sp", query_terms("decision")) == set(query_terms("decision"))
    assert keyword_index.held_terms("nobody", terms) == set()


def test_keyword_upsert_replaces_and_delete_removes(keyword_index):
    keyword_index.upsert([doc("event:1", "hiking in the mountains")])
    keyword_index.upsert([doc("event:1", "swimming at the beach")])
    assert keyword_index.keyword_search("sp", "hiking", 5) == []
    assert [h.id for h in keyword_index.keyword_search("sp", "beach", 5)] == ["event:1"]
    keyword_index.delete("sp", ["event:1", "event:unknown"])
    assert keyword_index.keyword_search("sp", "beach", 5) == []


def test_keyword_filters_space_kind_status_time_and_excludes(keyword_index):
    keyword_index.upsert([
        doc("event:a", "海边 日出", day=0),
        doc("event:b", "海边 日出", day=5),
        doc("message:s:1", "海边 日出", day=5, kind="message"),
        doc("event:c", "海边 日出", day=5, status="archived"),
        doc("event:d", "海边 日出", day=5, space="other"),
    ])
    ids = lambda flt: sorted(h.id for h in keyword_index.keyword_search("sp", "海边", 10, flt))  # noqa: E731
    assert ids(SearchFilter()) == ["event:a", "event:b", "message:s:1"]
    assert ids(SearchFilter(kinds=("event",))) == ["event:a", "event:b"]
    assert ids(SearchFilter(start=4.5 * DAY, end=5.5 * DAY)) == ["event:b", "message:s:1"]
    assert ids(SearchFilter(statuses=("archived",))) == ["event:c"]
    assert ids(SearchFilter(exclude_ids=frozenset({"event:a"}))) == ["event:b", "message:s:1"]
    assert keyword_index.count("sp") == 3
    assert keyword_index.count("sp", SearchFilter(start=4.5 * DAY, end=5.5 * DAY)) == 2


def test_keyword_k_limits_results(keyword_index):
    keyword_index.upsert([doc(f"event:{i}", f"cat number {i}") for i in range(10)])
    assert len(keyword_index.keyword_search("sp", "cat", 3)) == 3


# ------------------------------------------------------------------ vector


def test_is_a_vector_index(vector_index):
    assert isinstance(vector_index, VectorIndex)


def test_vector_search_is_exact_cosine_order(vector_index):
    vector_index.upsert([
        doc("event:x", "x", vec=unit(0)),
        doc("event:xy", "xy", vec=unit(0, 1)),
        doc("event:y", "y", vec=unit(1)),
    ])
    hits = vector_index.vector_search("sp", np.array(unit(0), np.float32), 3)
    assert [h.id for h in hits] == ["event:x", "event:xy", "event:y"]
    assert abs(hits[0].score - 1.0) < 1e-5
    assert abs(hits[1].score - 2 / np.sqrt(5)) < 1e-4


def test_vector_filters_and_updates(vector_index):
    vector_index.upsert([
        doc("event:a", "a", day=0, vec=unit(0)),
        doc("event:b", "b", day=3, vec=unit(0, 2)),
        doc("message:s:1", "m", day=3, kind="message", vec=unit(0, 3)),
        doc("event:z", "z", day=3, space="other", vec=unit(0)),
    ])
    q = np.array(unit(0), np.float32)
    ids = lambda flt: [h.id for h in vector_index.vector_search("sp", q, 10, flt)]  # noqa: E731
    assert ids(SearchFilter(start=2.5 * DAY, end=3.5 * DAY)) == ["event:b", "message:s:1"]
    assert ids(SearchFilter(kinds=("message",))) == ["message:s:1"]
    assert ids(SearchFilter(exclude_ids=frozenset({"event:a"}))) == ["event:b", "message:s:1"]
    vector_index.upsert([doc("event:a", "a", day=0, vec=unit(5))])
    assert ids(SearchFilter())[0] == "event:b"
    vector_index.delete("sp", ["event:b"])
    assert "event:b" not in ids(SearchFilter())
    vector_index.upsert([doc("event:b", "b", day=3, status="archived", vec=unit(0))])
    assert "event:b" not in ids(SearchFilter())
    assert ids(SearchFilter(statuses=("archived",))) == ["event:b"]


def test_keyword_count_honours_the_filter(keyword_index):
    keyword_index.upsert([doc("event:a", "beach day", day=1), doc("event:b", "beach night", day=5),
                          doc("message:s:1", "beach talk", day=1, kind="message")])
    assert keyword_index.count("sp") == 3
    assert keyword_index.count("sp", SearchFilter(kinds=("event",))) == 2
    assert keyword_index.count("sp", SearchFilter(start=DAY, end=2 * DAY)) == 2
    assert keyword_index.count("sp", SearchFilter(exclude_ids=frozenset({"event:a"}))) == 2
    assert keyword_index.count("other") == 0

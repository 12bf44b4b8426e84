"""The embedded adapters' fast paths behave exactly like the plain ones they replace.

- keyword search answered from the in-memory copy == FTS5's own bm25() query, hit for hit
  and score for score, through upserts, deletes, other writers and log pruning;
- batched writes (store, keyword, vector) == the same docs written one at a time;
- tokenize / query_terms == the straightforward reference implementation.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime

import numpy as np
import pytest
import snowballstemmer

from chalicelib.adapters.sqlite import index as embedded_index
from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.index import (
    KEYWORD_MIGRATIONS,
    VECTOR_MIGRATIONS,
    FtsKeywordIndex,
    NumpyVectorIndex,
)
from chalicelib.adapters.sqlite.store import SQLiteStore
from chalicelib.domain.models import IndexDoc, Message, MessageIn
from chalicelib.domain.textproc import query_terms, tokenize
from chalicelib.ports import SearchFilter

DAY = 86400.0
T0 = datetime(2026, 6, 14, 9, 0, tzinfo=UTC)
WORDS = ["Alice", "Bob", "painted", "paints", "a", "the", "sunrise", "lake", "cake", "garden",
         "guitar", "O'Neil", "don't", "Mel’s", "café", "2026", "x_y", "Straße", "İstanbul",
         "奶糖", "昨天", "在公园", "做了", "生日蛋糕", "了", "世界です", "한국어", "!!!", "，"]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def random_doc(rng: random.Random, n_ids: int = 300) -> IndexDoc:
    day = rng.randrange(30)
    kind = rng.choice(["event", "message"])
    return IndexDoc(id=f"{kind}:{rng.randrange(n_ids)}", space=rng.choice(["sp", "sp", "other"]),
                    kind=kind, text=sentence(rng), start=day * DAY,
                    end=(day + rng.choice([1, 3])) * DAY,
                    status=rng.choice(["active"] * 4 + ["archived", "superseded"]))


def random_filter(rng: random.Random) -> SearchFilter:
    return SearchFilter(
        kinds=rng.choice([("event", "message"), ("event",), ("message",)]),
        statuses=rng.choice([("active",), ("archived",), ("active", "superseded")]),
        start=rng.choice([None, rng.randrange(30) * DAY]),
        end=rng.choice([None, rng.randrange(40) * DAY]),
        exclude_ids=frozenset(f"event:{i}" for i in rng.sample(range(300), rng.choice([0, 20]))))


def sql_reference(index: FtsKeywordIndex, space: str, query: str, k: int,
                  flt: SearchFilter) -> list[tuple[str, float]]:
    """The plain FTS5 query (bm25() + join + ORDER BY), as the adapter used to answer."""
    terms = query_terms(query)
    if not terms or k <= 0:
        return []
    rows = index._search_sql(index.db.connect(), space, terms, flt, k + len(flt.exclude_ids))
    return [r for r in rows if r[0] not in flt.exclude_ids][:k]


def hits(index: FtsKeywordIndex, space: str, query: str, k: int,
         flt: SearchFilter) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in index.keyword_search(space, query, k, flt)]


# ------------------------------------------------------------------ keyword memory vs FTS5


def test_memory_search_equals_fts5_bm25_through_writes(tmp_path):
    rng = random.Random(5)
    index = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    other_writer = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))  # another thread/process
    index.upsert([random_doc(rng) for _ in range(400)])
    compared = 0
    for step in range(6):
        writer = other_writer if step % 2 else index
        writer.upsert([random_doc(rng) for _ in range(rng.choice([1, 30]))])
        writer.delete(rng.choice(["sp", "other"]), [f"event:{rng.randrange(300)}"
                                                    for _ in range(5)])
        for _ in range(40):
            query, flt = sentence(rng), random_filter(rng)
            space, k = rng.choice(["sp", "other", "none"]), rng.choice([1, 5, 40])
            want = sql_reference(index, space, query, k, flt)
            assert hits(index, space, query, k, flt) == want
            assert hits(other_writer, space, query, k, flt) == want
            compared += bool(want)
    assert compared > 50  # most comparisons returned something


@pytest.mark.parametrize("max_deltas", [3, 10_000])
def test_memory_search_equals_fts5_through_many_small_writes(tmp_path, monkeypatch, max_deltas):
    """PUT-sized writes land in delta segments, folded into the postings every few writes
    (3) or not at all during the test (10 000): searches see the same hits either way."""
    monkeypatch.setattr(embedded_index, "_MAX_DELTAS", max_deltas)
    rng = random.Random(11)
    index = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    index.upsert([random_doc(rng) for _ in range(200)])
    index.keyword_search("sp", "cake", 5)  # load the copy: later writes update it as deltas
    for step in range(25):
        index.upsert([random_doc(rng) for _ in range(rng.choice([1, 5, 20]))])
        if step % 4 == 3:
            index.delete("sp", [f"message:{rng.randrange(300)}" for _ in range(3)])
        for _ in range(8):
            query, flt = sentence(rng), random_filter(rng)
            space, k = rng.choice(["sp", "other"]), rng.choice([1, 5, 40])
            assert hits(index, space, query, k, flt) == sql_reference(index, space, query, k,
                                                                      flt)
    memory = index._memory
    assert (len(memory.deltas) < 3) if max_deltas == 3 else len(memory.deltas) > 20


def test_ties_keep_rowid_order_and_scores_are_bm25(tmp_path):
    index = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    index.upsert([IndexDoc(id=f"event:{i}", space="sp", kind="event", text="same words here",
                           start=0.0, end=DAY) for i in range(30)])
    got = hits(index, "sp", "words", 10, SearchFilter())
    assert [i for i, _ in got] == [f"event:{i}" for i in range(10)]
    assert got == sql_reference(index, "sp", "words", 10, SearchFilter())


def test_multi_token_phrase_goes_to_fts5(tmp_path, monkeypatch):
    index = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    index.upsert([IndexDoc(id="event:1", space="sp", kind="event", text="O'Neil sailed",
                           start=0.0, end=DAY)])
    # FTS5 splits "o'neil" in two: only FTS5 can match that phrase; the memory is not asked.
    monkeypatch.setattr(index._memory, "search", lambda *a: pytest.fail("memory used"))
    assert [h.id for h in index.keyword_search("sp", "O'Neil", 5)] == ["event:1"]


def test_memory_reloads_when_the_log_was_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded_index, "_LOG_KEEP", 5)
    monkeypatch.setattr(embedded_index, "_LOG_PRUNE_EVERY", 100)
    rng = random.Random(2)
    reader = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    writer = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    writer.upsert([random_doc(rng) for _ in range(50)])
    assert hits(reader, "sp", "cake", 40, SearchFilter()) == sql_reference(
        reader, "sp", "cake", 40, SearchFilter())
    for _ in range(3):  # forces a prune: the reader's revision is no longer in the log
        writer.upsert([random_doc(rng) for _ in range(60)])
    first = writer.db.connect().execute("SELECT MIN(rev) FROM kw_log").fetchone()[0]
    assert first > reader._memory.rev + 1
    for query in ("cake", "Alice garden", "奶糖 生日蛋糕"):
        assert hits(reader, "sp", query, 40, SearchFilter()) == sql_reference(
            reader, "sp", query, 40, SearchFilter())


def test_memory_loads_a_database_written_before_the_log_existed(tmp_path):
    db = SQLiteDB(tmp_path / "kw.db", KEYWORD_MIGRATIONS[:1])
    with db.tx() as con:
        for i, text in enumerate(["alice painted", "bob painted a lake", "奶糖 昨天"], 1):
            con.execute("INSERT INTO kw_docs VALUES (?,?,?,?,?,?,?)",
                        (i, "sp", f"event:{i}", "event", 0.0, DAY, "active"))
            con.execute("INSERT INTO kw_fts(rowid, tokens) VALUES (?,?)",
                        (i, " ".join(tokenize(text))))
    index = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    assert [h.id for h in index.keyword_search("sp", "painting", 5)] == ["event:1", "event:2"]
    assert hits(index, "sp", "painting", 5, SearchFilter()) == sql_reference(
        index, "sp", "painting", 5, SearchFilter())


# ------------------------------------------------------------------ batched writes


def test_batched_keyword_upsert_equals_one_by_one(tmp_path):
    rng = random.Random(9)
    batches = [[random_doc(rng, n_ids=40) for _ in range(rng.choice([1, 25]))]
               for _ in range(12)]
    batched = FtsKeywordIndex(SQLiteDB(tmp_path / "a.db"))
    single = FtsKeywordIndex(SQLiteDB(tmp_path / "b.db"))
    for batch in batches:
        batched.upsert(batch)
        for doc in batch:
            single.upsert([doc])
    batched.delete("sp", ["event:1", "event:2", "event:1", "message:9"])
    for doc_id in ["event:1", "event:2", "message:9"]:
        single.delete("sp", [doc_id])
    order = "SELECT space, doc_id, kind, start_ts, end_ts, status FROM kw_docs ORDER BY rowid"
    assert (batched.db.connect().execute(order).fetchall()
            == single.db.connect().execute(order).fetchall())
    for query in ("cake", "Alice painted the lake", "奶糖昨天", "garden guitar 2026"):
        for flt in (SearchFilter(), SearchFilter(kinds=("message",), statuses=("archived",))):
            assert hits(batched, "sp", query, 40, flt) == hits(single, "sp", query, 40, flt)


def msg(seq: int, content: str) -> Message:
    return Message.from_input("sp", "s1", MessageIn(seq=seq, role="user", speaker="Ann",
                                                    content=content, at=T0))


def test_batched_message_upsert_equals_one_by_one(tmp_path):
    batched = SQLiteStore(SQLiteDB(tmp_path / "a.db"))
    single = SQLiteStore(SQLiteDB(tmp_path / "b.db"))
    rounds = [
        [msg(1, "a"), msg(2, "b"), msg(3, "c")],
        [msg(1, "a"), msg(2, "B"), msg(4, "d"), msg(4, "d"), msg(5, "e"), msg(5, "E")],
        [msg(3, "c"), msg(3, "C"), msg(3, "c"), msg(6, "f")],
    ]
    for i, batch in enumerate(rounds):
        got = batched.upsert_messages("sp", "s1", batch, T0)
        want = {"accepted": [], "unchanged": [], "changed": []}
        for m in batch:
            out = single.upsert_messages("sp", "s1", [m], T0)
            for key in want:
                want[key] += getattr(out, key)
        assert {k: getattr(got, k) for k in want} == want
        if i == 0:
            batched.mark_extracted("sp", "s1", 5)
            single.mark_extracted("sp", "s1", 5)
    assert batched.get_messages("sp", "s1") == single.get_messages("sp", "s1")
    assert batched.get_session("sp", "s1") == single.get_session("sp", "s1")
    assert batched.get_session("sp", "s1").dirty_from == 2


def test_large_batches_are_looked_up_in_chunks(tmp_path):
    store = SQLiteStore(SQLiteDB(tmp_path / "s.db"))
    msgs = [msg(i, f"m{i}") for i in range(1200)]
    assert len(store.upsert_messages("sp", "s1", msgs, T0).accepted) == 1200
    out = store.upsert_messages("sp", "s1", [*msgs[:1100], msg(1100, "new")], T0)
    assert (len(out.unchanged), out.changed, out.accepted) == (1100, [1100], [])
    index = FtsKeywordIndex(SQLiteDB(tmp_path / "k.db"))
    docs = [IndexDoc(id=f"event:{i}", space="sp", kind="event", text=f"cake {i}", start=0.0,
                     end=DAY) for i in range(1200)]
    index.upsert(docs)
    index.upsert(docs)
    assert index.count("sp") == 1200
    index.delete("sp", [d.id for d in docs[:1100]])
    assert index.count("sp") == 100 and len(index.keyword_search("sp", "cake", 500)) == 100


def test_batched_vector_upsert_stores_what_one_by_one_did(tmp_path):
    rng = np.random.default_rng(3)
    index = NumpyVectorIndex(SQLiteDB(tmp_path / "v.db"), 8)
    docs = [IndexDoc(id=f"event:{i % 5}", space="sp", kind="event", text="x", start=0.0, end=DAY,
                     vector=(rng.standard_normal(8) * 10.0 ** rng.uniform(-6, 6)).tolist())
            for i in range(12)]
    docs.append(IndexDoc(id="event:zero", space="sp", kind="event", text="x", start=0.0,
                         end=DAY, vector=[0.0] * 8))
    index.upsert(docs)
    rows = index.db.connect().execute("SELECT doc_id, vec, rev FROM vec_docs").fetchall()
    stored = {r["doc_id"]: (r["vec"], r["rev"]) for r in rows}
    for n, doc in enumerate(docs):
        vec = np.asarray(doc.vector, np.float32)
        expected = (vec / max(float(np.linalg.norm(vec)), 1e-12)).tobytes()
        if all(d.id != doc.id for d in docs[n + 1:]):  # the last write of an id wins
            assert stored[doc.id] == (expected, n + 1)
    with pytest.raises(ValueError):
        index.upsert([docs[0], docs[1].model_copy(update={"vector": [1.0]})])
    assert index.db.connect().execute("SELECT MAX(rev) FROM vec_docs").fetchone()[0] == 13


def test_vector_rev_counter_continues_an_existing_database(tmp_path):
    db = SQLiteDB(tmp_path / "v.db", VECTOR_MIGRATIONS[:1])
    with db.tx() as con:
        con.execute("INSERT INTO vec_docs VALUES ('sp','event:a','event',0,1,'active',?,41)",
                    (np.ones(8, np.float32).tobytes(),))
    index = NumpyVectorIndex(SQLiteDB(tmp_path / "v.db"), 8)
    index.upsert([IndexDoc(id="event:b", space="sp", kind="event", text="x", start=0.0, end=1.0,
                           vector=[1.0] * 8)])
    revs = dict(index.db.connect().execute("SELECT doc_id, rev FROM vec_docs").fetchall())
    assert revs == {"event:a": 41, "event:b": 42}
    assert [h.id for h in index.vector_search("sp", np.ones(8, np.float32) / 8 ** 0.5, 5)] == [
        "event:a", "event:b"]


# ------------------------------------------------------------------ tokenizer


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_REF_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)?")
_REF_STEM = snowballstemmer.stemmer("english")


def reference_tokenize(text: str) -> list[str]:
    """The tokenizer as first written: one match at a time, one stem call per word."""
    tokens: list[str] = []
    for match in _REF_RE.finditer(text):
        piece = match.group(0)
        if re.match(rf"[{_CJK}]", piece):
            tokens += [piece] if len(piece) == 1 else [piece[i:i + 2]
                                                       for i in range(len(piece) - 1)]
        else:
            word = piece.lower().replace("’", "'")
            tokens.append(_REF_STEM.stemWord(word) if word.isascii() else word)
    return tokens


def test_tokenize_equals_the_reference_on_mixed_text():
    rng = random.Random(1)
    alphabet = [*WORDS, " ", "-", "_", "’", "'", "\u0301", "ǅ", "²", "Ⅻ", "😀",
                *(chr(rng.randrange(0x20, 0x3000)) for _ in range(200)),
                *(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(100))]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        assert tokenize(text) == reference_tokenize(text), text


def test_query_terms_keep_their_rules():
    assert query_terms("When did Alice paint the cake? Alice’s cakes!") == ["alic", "paint",
                                                                          "cake"]
    # 什么 and 时候 are stop words, and the bigrams across their edges (糖什, 候做) go too
    assert query_terms("奶糖什么时候做了生日蛋糕") == ["奶糖", "生日", "日蛋", "蛋糕"]
    assert query_terms("新工作是做啥的，感知什么来着") == ["新工", "工作", "感知"]


def test_time_window_boundaries_match_sql(tmp_path):
    index = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))
    index.upsert([IndexDoc(id=f"message:s:{d}", space="sp", kind="message", text="beach",
                           start=d * DAY, end=(d + 1) * DAY) for d in range(5)])
    for start, end in [(DAY, 2 * DAY), (DAY + 1, 3 * DAY - 1), (0.0, 0.0), (4 * DAY, 9 * DAY)]:
        flt = SearchFilter(start=start, end=end)
        assert hits(index, "sp", "beach", 10, flt) == sql_reference(index, "sp", "beach", 10,
                                                                    flt)

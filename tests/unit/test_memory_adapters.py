"""chalicelib.adapters.memory: the in-memory keyword index ranks exactly as the FTS5 one.

The contract suites (tests/contract) check behaviour on hand-made cases; here random mixed
Chinese/English documents and queries compare the two keyword indexes hit for hit.
"""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import UTC, datetime

import pytest

from chalicelib.adapters.memory import MemoryKeywordIndex, MemoryStore, fts_tokens
from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.index import FTS_TOKENIZER, FtsKeywordIndex
from chalicelib.domain.models import IndexDoc, Message, MessageIn
from chalicelib.domain.records import JournalBatch
from chalicelib.domain.textproc import _CJK, tokenize
from chalicelib.ports import SearchFilter

DAY = 86400.0
T0 = datetime(2026, 6, 14, 9, 0, tzinfo=UTC)

_HAN = "奶糖猫狗海边日出体检医院公园咖啡朋友生日蛋糕旅行北京上海音乐会跑步游泳"
_WORDS = ["cat", "cats", "dog", "beach", "sunrise", "sunrises", "paint", "painted", "painting",
          "hiking", "mountain", "mountains", "coffee", "birthday", "cake", "Melanie", "Caroline",
          "concert", "music", "2024", "7", "swim", "swimming", "park", "doctor", "the", "a",
          "of", "and", "remember"]
# Words FTS5 splits or folds differently from `tokenize` (phrases, folded Greek, kana marks).
_ODD = ["don't", "o'clock", "rock'n'roll", "y'all", "O’Neill", "l'amour", "x'x'x", "ΟΔΟΣ",
        "µg", "ſun", "Straße", "ア・イ", "・・", "naïve", "café"]


def _han(rng: random.Random) -> str:
    return "".join(rng.choice(_HAN) for _ in range(rng.randint(1, 6)))


def _piece(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.45:
        return _han(rng)
    if roll < 0.9:
        return rng.choice(_WORDS)
    return rng.choice(_ODD)


def _text(rng: random.Random, n: int) -> str:
    return rng.choice([" ", "，", "", ". "]).join(_piece(rng) for _ in range(n))


def _doc(rng: random.Random, doc_id: str) -> IndexDoc:
    day = rng.randint(0, 9)
    return IndexDoc(id=doc_id, space=rng.choice(["sp", "sp", "other"]),
                    kind=rng.choice(["event", "message"]), text=_text(rng, rng.randint(0, 25)),
                    start=day * DAY, end=(day + rng.randint(0, 3)) * DAY,
                    status=rng.choice(["active", "active", "archived", "superseded"]))


def _filter(rng: random.Random, ids: list[str]) -> SearchFilter:
    start = rng.choice([None, rng.randint(0, 9) * DAY])
    return SearchFilter(
        kinds=rng.choice([("event", "message"), ("event",), ("message",)]),
        statuses=rng.choice([("active",), ("active", "archived"), ("superseded",)]),
        start=start, end=None if start is None else start + rng.randint(1, 4) * DAY,
        exclude_ids=frozenset(rng.sample(ids, min(len(ids), rng.randint(0, 5)))))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_memory_keyword_index_ranks_like_fts5(tmp_path, seed):
    rng = random.Random(seed)
    fts, memory = FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db")), MemoryKeywordIndex()
    ids = [f"event:{i}" for i in range(300)]
    for _ in range(40):  # batches of upserts (some rewrite a doc, some twice) and deletes
        batch = [_doc(rng, rng.choice(ids)) for _ in range(rng.randint(1, 20))]
        fts.upsert(batch)
        memory.upsert(batch)
        gone = rng.sample(ids, rng.randint(0, 3))
        fts.delete("sp", gone)
        memory.delete("sp", gone)
    for _ in range(200):
        query = _text(rng, rng.randint(1, 4))
        flt, k = _filter(rng, ids), rng.randint(1, 40)
        space = rng.choice(["sp", "other"])
        want = fts.keyword_search(space, query, k, flt)
        got = memory.keyword_search(space, query, k, flt)
        assert [h.id for h in got] == [h.id for h in want], query
        for g, w in zip(got, want, strict=True):
            assert g.score == pytest.approx(w.score, rel=1e-9, abs=0)
        assert memory.count(space, flt) == fts.count(space, flt)


def test_fts_tokens_match_fts5_for_every_character_tokenize_emits():
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    cjk = re.compile(f"[{_CJK}]")
    # each character as `tokenize` emits it (lower-cased, or a CJK unigram), between letters
    tokens = {}
    for cp in range(0x80, 0x110000):
        ch = chr(cp)
        if cjk.match(ch) or ch.isalnum():
            (token,) = tokenize(ch)
            tokens[cp] = f"a{token}b"
    tokens[ord("'")] = "a'b"
    con.executemany("INSERT INTO t(rowid, x) VALUES (?,?)", tokens.items())
    fts: dict[int, list[tuple[int, str]]] = {}
    for doc, term, offset in con.execute("SELECT doc, term, offset FROM v"):
        fts.setdefault(doc, []).append((offset, term))
    wrong = {hex(cp): token for cp, token in tokens.items()
             if fts_tokens(token) != tuple(t for _, t in sorted(fts.get(cp, [])))}
    assert wrong == {}


def test_memory_store_keeps_copies():
    store = MemoryStore()
    msg = Message.from_input("sp", "s1", MessageIn(seq=1, role="user", content="hi", at=T0))
    store.upsert_messages("sp", "s1", [msg], T0)
    msg.content = "changed by the caller"
    got = store.get_message("sp", "s1", 1)
    got.content = "changed again"
    assert store.get_message("sp", "s1", 1).content == "hi"
    batch = JournalBatch(scope="sp", key="b1", at=T0, created=["e1"])
    store.put_record(batch)
    batch.created.append("e2")
    store.get_record(JournalBatch, "sp", "b1").created.append("e3")
    assert store.get_record(JournalBatch, "sp", "b1").created == ["e1"]

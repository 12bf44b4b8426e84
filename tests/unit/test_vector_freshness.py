"""NumpyVectorIndex caches each space's matrix in memory. Two instances on one SQLite file are
two processes (the local server and `annals import`, or two Lambdas on a shared file): a write
through one must be visible to the next search through the other, without a restart."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.index import NumpyVectorIndex
from chalicelib.domain.models import IndexDoc
from chalicelib.ports import SearchFilter

DIM = 8
ROOT = Path(__file__).resolve().parents[2]


def unit(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i] = 1.0
    return v


def doc(doc_id: str, axis: int, space: str = "sp", status: str = "active",
        kind: str = "event", start: float = 0.0) -> IndexDoc:
    return IndexDoc(id=doc_id, space=space, kind=kind, text=doc_id, start=start, end=start + 60,
                    status=status, vector=unit(axis))


def ids(index: NumpyVectorIndex, axis: int, k: int = 10, space: str = "sp",
        flt: SearchFilter | None = None) -> list[str]:
    query = np.asarray(unit(axis), np.float32)
    return [h.id for h in index.vector_search(space, query, k, flt or SearchFilter())]


@pytest.fixture
def pair(tmp_path):
    """(writer, reader): two indexes, each with its own SQLiteDB, on the same file."""
    path = tmp_path / "annals.db"
    a = NumpyVectorIndex(SQLiteDB(path), DIM)
    b = NumpyVectorIndex(SQLiteDB(path), DIM)
    yield a, b
    a.db.close()
    b.db.close()


class TestTwoInstances:
    def test_new_document_is_visible_to_the_other_instance(self, pair):
        a, b = pair
        a.upsert([doc("event:1", 0)])
        assert ids(b, 0) == ["event:1"]  # b builds its cache now
        a.upsert([doc("event:2", 1)])  # b's cache is stale
        assert ids(b, 1)[0] == "event:2"
        assert set(ids(b, 1)) == {"event:1", "event:2"}

    def test_replaced_vector_is_seen(self, pair):
        a, b = pair
        a.upsert([doc("event:1", 0), doc("event:2", 1)])
        assert ids(b, 0)[0] == "event:1"
        a.upsert([doc("event:2", 0), doc("event:1", 3)])
        assert ids(b, 0)[0] == "event:2"
        hits = b.vector_search("sp", np.asarray(unit(3), np.float32), 1)
        assert hits[0].id == "event:1" and hits[0].score == pytest.approx(1.0)

    def test_delete_is_seen(self, pair):
        a, b = pair
        a.upsert([doc("event:1", 0), doc("event:2", 1)])
        assert len(ids(b, 0)) == 2
        a.delete("sp", ["event:1"])
        assert ids(b, 0) == ["event:2"]
        assert b.count("sp") == 1

    def test_status_change_is_seen_by_the_filter(self, pair):
        a, b = pair
        a.upsert([doc("event:1", 0)])
        assert ids(b, 0) == ["event:1"]
        a.upsert([doc("event:1", 0, status="archived")])
        assert ids(b, 0) == []
        assert ids(b, 0, flt=SearchFilter(statuses=("archived",))) == ["event:1"]

    def test_time_change_is_seen_by_the_filter(self, pair):
        a, b = pair
        a.upsert([doc("event:1", 0, start=1000.0)])
        window = SearchFilter(start=900.0, end=1100.0)
        assert ids(b, 0, flt=window) == ["event:1"]
        a.upsert([doc("event:1", 0, start=5000.0)])
        assert ids(b, 0, flt=window) == []

    def test_deleted_then_readded_is_seen(self, pair):
        a, b = pair
        a.upsert([doc("event:1", 0)])
        assert ids(b, 0) == ["event:1"]
        a.delete("sp", ["event:1"])
        assert ids(b, 0) == []
        a.upsert([doc("event:1", 2)])
        assert ids(b, 2) == ["event:1"]

    def test_writes_to_another_space_do_not_disturb_a_cached_space(self, pair):
        a, b = pair
        a.upsert([doc("event:1", 0)])
        assert ids(b, 0) == ["event:1"]
        a.upsert([doc("event:x", 0, space="other")])
        assert ids(b, 0) == ["event:1"]
        assert ids(b, 0, space="other") == ["event:x"]
        a.upsert([doc("event:2", 0)])  # the space's revision is now past the other space's
        assert set(ids(b, 0)) == {"event:1", "event:2"}

    def test_writes_through_both_instances_interleave(self, pair):
        a, b = pair
        for i in range(6):
            (a if i % 2 else b).upsert([doc(f"event:{i}", i % DIM)])
            for index in (a, b):
                assert set(ids(index, 0, k=20)) == {f"event:{j}" for j in range(i + 1)}

    def test_many_documents_grow_the_cached_matrix(self, pair):
        a, b = pair
        a.upsert([doc("event:first", 0)])
        assert ids(b, 0) == ["event:first"]
        a.upsert([doc(f"event:{i}", 1) for i in range(1500)])
        a.upsert([doc("event:last", 7)])
        assert ids(b, 7, k=1) == ["event:last"]
        assert ids(b, 0, k=1) == ["event:first"]
        assert b.count("sp") == 1502


def test_a_write_from_another_process_is_visible(tmp_path):
    path = tmp_path / "annals.db"
    here = NumpyVectorIndex(SQLiteDB(path), DIM)
    here.upsert([doc("event:mine", 0)])
    assert ids(here, 0) == ["event:mine"]
    script = textwrap.dedent(f"""
        from chalicelib.adapters.sqlite.index import NumpyVectorIndex
        from chalicelib.adapters.sqlite.db import SQLiteDB
        from chalicelib.domain.models import IndexDoc
        index = NumpyVectorIndex(SQLiteDB({str(path)!r}), {DIM})
        vec = [0.0] * {DIM}
        vec[5] = 1.0
        index.upsert([IndexDoc(id="event:theirs", space="sp", kind="event", text="x",
                               start=0.0, end=60.0, vector=vec)])
        index.delete("sp", ["event:mine"])
    """)
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=60)
    assert ids(here, 5) == ["event:theirs"]

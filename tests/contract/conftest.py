"""Adapter factories for the contract suites. Every adapter of a port is listed here, and
the same tests run against each of them."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from chalicelib.adapters.memory import MemoryKeywordIndex, MemoryStore, MemoryVectorIndex
from chalicelib.adapters.sqlite.db import SQLiteDB
from chalicelib.adapters.sqlite.index import FtsKeywordIndex, NumpyVectorIndex
from chalicelib.adapters.sqlite.store import SQLiteStore

DIM = 8


def sqlite_store(tmp_path):
    yield SQLiteStore(SQLiteDB(tmp_path / "store.db"))


def fts_keyword(tmp_path):
    yield FtsKeywordIndex(SQLiteDB(tmp_path / "kw.db"))


def numpy_vector(tmp_path):
    yield NumpyVectorIndex(SQLiteDB(tmp_path / "vec.db"), DIM)


def memory_store(tmp_path):
    yield MemoryStore()


def memory_keyword(tmp_path):
    yield MemoryKeywordIndex()


def memory_vector(tmp_path):
    yield MemoryVectorIndex(DIM)


STORES = {"sqlite": sqlite_store, "memory": memory_store}
KEYWORD_INDEXES = {"fts5": fts_keyword, "memory": memory_keyword}
VECTOR_INDEXES = {"numpy": numpy_vector, "memory": memory_vector}

# Other adapters register themselves from tests/contract/adapters_<name>.py, each defining any
# of STORES / KEYWORD_INDEXES / VECTOR_INDEXES (name → generator factory taking tmp_path).
for _path in sorted(Path(__file__).parent.glob("adapters_*.py")):
    _mod = importlib.import_module(f"tests.contract.{_path.stem}")
    STORES.update(getattr(_mod, "STORES", {}))
    KEYWORD_INDEXES.update(getattr(_mod, "KEYWORD_INDEXES", {}))
    VECTOR_INDEXES.update(getattr(_mod, "VECTOR_INDEXES", {}))


def _from(factories, request, tmp_path):
    gen = factories[request.param](tmp_path)
    adapter = next(gen)
    yield adapter
    next(gen, None)


@pytest.fixture(params=sorted(STORES))
def store(request, tmp_path):
    yield from _from(STORES, request, tmp_path)


@pytest.fixture(params=sorted(KEYWORD_INDEXES))
def keyword_index(request, tmp_path):
    yield from _from(KEYWORD_INDEXES, request, tmp_path)


@pytest.fixture(params=sorted(VECTOR_INDEXES))
def vector_index(request, tmp_path):
    yield from _from(VECTOR_INDEXES, request, tmp_path)

